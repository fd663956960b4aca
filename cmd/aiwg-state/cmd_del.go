package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newDelCommand() *cli.Command {
	return &cli.Command{
		Name:      "del",
		Aliases:   []string{"rm"},
		Usage:     "delete a key of a document, or the document (one commit)",
		ArgsUsage: "FILE [KEYPATH]",
		Description: `Without KEYPATH, the whole document is deleted.

Examples:
   aiwg-state del plan.json draft               # one key
   aiwg-state del plan.json items.0             # an array element; later ones shift down
   aiwg-state del notes.json --agent cleaner    # the whole document`,
		Flags:  writeFlags(),
		Action: command(func(s *session) error { return runDel(s.c.Context, s) }),
	}
}

func runDel(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	key, err := keyArg(a, 1)
	if err != nil {
		return err
	}
	return s.report(s.store.Delete(ctx, a[0], key, s.writeOptions()))
}
