package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newPutCommand() *cli.Command {
	return &cli.Command{
		Name:      "put",
		Usage:     "replace (or create) a whole document (one commit)",
		ArgsUsage: "FILE [VALUE|-]",
		Description: `Without VALUE, or with "-", the document is read from standard input.

Examples:
   aiwg-state put plan.json '{"goal": "ship", "risk": {"level": "low"}}'
   aiwg-state put plan.json < plan.json
   aiwg-state put session.json '{"user": "ada"}' --ttl 1h   # the document expires in an hour
   aiwg-state put claims/t-17.json '{"by": "planner"}' --if-absent

--ttl D makes the whole document expire D from now: from then it reads as
absent, and the next gc removes it in a commit. A put without --ttl makes
it permanent. --if-absent creates the document only if it is absent (or
expired); exit 6, nothing written, if it is there.`,
		Flags: append(writeFlags(),
			&cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"},
			&cli.BoolFlag{Name: "if-absent", Usage: "create only if the document is absent (exit 6 if it is there)"},
			&cli.DurationFlag{Name: "ttl", Usage: "the document expires this long from now (whole seconds: 90s, 15m, 24h)"}),
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
	so := store.SetOptions{IfAbsent: s.c.Bool("if-absent"), TTL: s.c.Duration("ttl")}
	if s.c.IsSet("ttl") && so.TTL <= 0 {
		return usagef("--ttl %s: a time to live is above 0", so.TTL)
	}
	m, err := s.store.PutWith(ctx, a[0], v, so, s.writeOptions())
	return s.report(m, bareTextHint(err, src))
}
