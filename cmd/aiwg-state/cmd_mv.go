package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newMvCommand() *cli.Command {
	return &cli.Command{
		Name:      "mv",
		Usage:     "rename a document (one commit; refuses to overwrite)",
		ArgsUsage: "FILE NEWFILE",
		Description: `Examples:
   aiwg-state mv plan.json docs/plan.json
   aiwg-state mv draft.json docs/plan.json   # exit 3: docs/plan.json exists
   aiwg-state log docs/plan.json --follow    # the history across the move`,
		Flags:  writeFlags(),
		Action: command(func(s *session) error { return runMv(s.c.Context, s) }),
	}
}

func runMv(ctx context.Context, s *session) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	return s.report(s.store.Move(ctx, a[0], a[1], s.writeOptions()))
}
