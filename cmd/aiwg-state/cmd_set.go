package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newSetCommand() *cli.Command {
	return &cli.Command{
		Name:      "set",
		Usage:     "set one key of a document (one commit)",
		ArgsUsage: "FILE KEYPATH VALUE",
		Description: `VALUE is JSON: a string needs quotes ('"high"'), or use --string.
"-" reads VALUE from standard input. A missing document or key is created;
a key path through a scalar is refused (exit 3), never turned into an object.
Setting a value a key already holds writes no commit.

Examples:
   aiwg-state set plan.json risk.level '"high"' --agent planner --source task-42
   aiwg-state set plan.json risk.score 0.8
   aiwg-state set plan.json notes --string 'call the owner'
   aiwg-state set plan.json items.- '{"id": 7}'     # "-" appends to an array
   echo '{"a": 1}' | aiwg-state set plan.json extra -
   aiwg-state set plan.json owner '"ops"' --expect HEAD   # exit 6 if someone wrote first`,
		Flags:  append(writeFlags(), &cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"}),
		Action: command(func(s *session) error { return runSet(s.c.Context, s) }),
	}
}

func runSet(ctx context.Context, s *session) error {
	a, err := args(s.c, 3, 3)
	if err != nil {
		return err
	}
	key, err := keyArg(a, 1)
	if err != nil {
		return err
	}
	v, err := s.value(a[2])
	if err != nil {
		return err
	}
	m, err := s.store.Set(ctx, a[0], key, v, s.writeOptions())
	return s.report(m, bareTextHint(err, a[2]))
}
