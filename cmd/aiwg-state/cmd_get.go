package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newGetCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "print a document, or one key of it, as canonical JSON",
		ArgsUsage: "FILE [KEYPATH…]",
		Description: `Several KEYPATHs are read from one revision, as one JSON object from each
key path to its value; a missing one is exit 3. A value past its time to
live (set --ttl) reads as absent.

Examples:
   aiwg-state get plan.json                 # the whole document
   aiwg-state get plan.json risk.level      # one key (dot form)
   aiwg-state get plan.json items/0/title   # slash form; 0 indexes an array
   aiwg-state get plan.json 'items.*.id'    # a wildcard: {path: value, ...}
   aiwg-state get plan.json risk.level --at HEAD~3
   aiwg-state get plan.json --at 2026-11-01T12:00:00Z
   aiwg-state get plan.json title --raw     # a string without quotes
   aiwg-state get plan.json risk.level owner items.0.id   # {"items.0.id": …, "owner": …, "risk.level": …}`,
		Flags: append(readFlags(),
			&cli.BoolFlag{Name: "raw", Usage: "print a string value as plain text"},
			&cli.BoolFlag{Name: "no-resolve", Usage: "show a state document's \"ref file://\" mounts as stored, not the shards inlined"}),
		Action: command(func(s *session) error {
			return runGet(s.c.Context, s, getOptions{
				NoResolve: s.c.Bool("no-resolve"),
			})
		}),
	}
}

// getOptions are the flags runGet reads.
type getOptions struct {
	NoResolve bool // --no-resolve
}

func runGet(ctx context.Context, s *session, opts getOptions) error {
	a, err := args(s.c, 1, -1)
	if err != nil {
		return err
	}
	key, err := keyArg(a, 1)
	if err != nil {
		return err
	}
	ro := s.readOptions()
	ro.NoResolve = opts.NoResolve
	if len(a) > 2 {
		for i := 2; i < len(a); i++ {
			if _, err := keyArg(a, i); err != nil {
				return err
			}
		}
		v, err := s.store.GetKeys(ctx, a[0], a[1:], ro)
		if err != nil {
			return err
		}
		return s.printValue(a[0], "", v)
	}
	if err := s.mayRead(ctx, a[0]); err != nil {
		return err
	}
	v, err := s.store.Get(ctx, a[0], key, ro)
	if err != nil {
		return err
	}
	return s.printValue(a[0], key, v)
}
