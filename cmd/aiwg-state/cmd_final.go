package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func finalCommand() *cli.Command {
	return &cli.Command{
		Name:      "final",
		Usage:     "set Final: complete the state (once; the completion handlers trusted here run)",
		ArgsUsage: "VALUE|-",
		Description: `Final can be set once: a second writer is refused (exit 3) and learns
what Final holds. Set it to null (var set Final null) to reopen a state. In a
child state, Final is returned to the parent as result_<child id>, in the
same commit.

Examples:
   aiwg-state final "Found 2 TypeScript errors. Both fixed."
   aiwg-state final '{"risks": 3}' --state state-a1b2c3d4`,
		Flags:  append(rlmWriteFlags(), &cli.StringFlag{Name: "type", Usage: "the value's type (default: inferred)"}),
		Action: command(func(s *session) error { return runFinal(s.c.Context, s) }),
	}
}

func runFinal(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	return s.setVariable("Final", a[0])
}
