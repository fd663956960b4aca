package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newPutCommand() *cli.Command {
	return &cli.Command{
		Name:      "put",
		Usage:     "replace (or create) a whole document (one commit)",
		ArgsUsage: "FILE [VALUE|-]",
		Description: `Without VALUE, or with "-", the document is read from standard input.

Examples:
   aiwg-state put plan.json '{"goal": "ship", "risk": {"level": "low"}}'
   aiwg-state put plan.json < plan.json`,
		Flags:  append(writeFlags(), &cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"}),
		Action: command(func(s *session) error { return runPut(s.c.Context, s) }),
	}
}

func runPut(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	src := "-"
	if len(a) == 2 {
		src = a[1]
	}
	v, err := s.value(src)
	if err != nil {
		return err
	}
	m, err := s.store.Put(ctx, a[0], v, s.writeOptions())
	return s.report(m, bareTextHint(err, src))
}
