package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
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
   aiwg-state set plan.json owner '"ops"' --expect HEAD   # exit 6 if someone wrote first
   aiwg-state set locks.json deploy '"planner"' --if-absent  # exit 6 if the key is there
   aiwg-state set cache.json token --string abc --ttl 15m    # absent to reads in 15 minutes

--if-absent writes only when the key is absent (or expired), atomically: of
agents racing to set one key, one wins and the others exit 6, nothing
written. --ttl D makes the value expire D from now (whole seconds: 90s, 15m,
24h): from then it reads as absent, and the next gc removes it in a commit.
The expiry is kept in .aiwg/ttl/FILE, a file of the store, so clones and
pushes carry it. A set without --ttl makes the key permanent again.`,
		Flags: append(writeFlags(),
			&cli.BoolFlag{Name: "string", Aliases: []string{"s"}, Usage: "take VALUE as raw text, stored as a JSON string"},
			&cli.BoolFlag{Name: "if-absent", Usage: "write only if the key is absent (exit 6 if it is there)"},
			&cli.DurationFlag{Name: "ttl", Usage: "the value expires this long from now (whole seconds: 90s, 15m, 24h)"}),
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
	so := store.SetOptions{IfAbsent: s.c.Bool("if-absent"), TTL: s.c.Duration("ttl")}
	if s.c.IsSet("ttl") && so.TTL <= 0 {
		return usagef("--ttl %s: a time to live is above 0", so.TTL)
	}
	m, err := s.store.SetWith(ctx, a[0], key, v, so, s.writeOptions())
	return s.report(m, bareTextHint(err, a[2]))
}
