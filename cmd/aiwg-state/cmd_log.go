package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newLogCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "list mutations, newest first; with FILE[#KEYPATH], only those that changed it",
		ArgsUsage: "[FILE[#KEYPATH]]",
		Description: `Each line: commit, time (UTC), agent, mutation id, what changed.

With FILE, only the commits that changed that file: the same commits as
git log --first-parent -- FILE (or, with --all-parents, as git log -- FILE,
which follows merges into the side that brought the change). With
FILE#KEYPATH, only the commits that changed the value at that key path,
each with the old → new value. Both come from the changed-paths index
(see reindex), so they cost in proportion to that key's changes, not to the
length of history.

Examples:
   aiwg-state log
   aiwg-state log plan.json -n 5
   aiwg-state log docs/plan.json#risk.level
   aiwg-state log docs/plan.json --follow            # across mv, ours or git mv
   aiwg-state log plan.json --all-parents             # both sides of merges
   aiwg-state log --agent planner --since 2026-11-01T00:00:00Z
   aiwg-state log --op delete --json
   aiwg-state log --correlation run-7            # one run's writes, by its Correlation-Id
   aiwg-state log --event lock.contention        # the commits that emitted such an event
   aiwg-state log --verify                       # is each signed with its agent's key?`,
		Flags: append(readFlags(),
			&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
			&cli.StringFlag{Name: "since", Usage: "only mutations at or after this RFC 3339 time"},
			&cli.StringFlag{Name: "until", Usage: "only mutations at or before this RFC 3339 time"},
			&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename, merge, rollback"},
			&cli.StringFlag{Name: "source", Usage: "only mutations with this Source trailer (set --source)"},
			&cli.StringFlag{Name: "correlation", Usage: "only mutations with this Correlation-Id trailer (set --correlation): one run's writes"},
			&cli.IntFlag{Name: "n", Usage: "at most this many mutations"},
			&cli.StringFlag{Name: "event", Usage: "only commits that emitted an event of this type, or family (task.*); follows every parent, so an event merged from another branch is found in its own commit"},
			&cli.BoolFlag{Name: "follow", Usage: "continue the file's history across moves (aiwg-state mv, or an exact rename made with git mv)"},
			&cli.BoolFlag{Name: "all-parents", Usage: "follow merges into all parents (default: first parents, as git log --first-parent)"},
			verifyFlag(),
		),
		Action: command(func(s *session) error {
			return runLog(s.c.Context, s, logOptions{
				Agent:       s.c.String("agent"),
				Op:          s.c.String("op"),
				N:           s.c.Int("n"),
				Source:      s.c.String("source"),
				Correlation: s.c.String("correlation"),
				Follow:      s.c.Bool("follow"),
				AllParents:  s.c.Bool("all-parents"),
				Since:       s.c.String("since"),
				Until:       s.c.String("until"),
				Event:       s.c.String("event"),
			})
		}),
	}
}

// logOptions are the flags runLog reads.
type logOptions struct {
	Agent       string // --agent
	Op          string // --op
	N           int    // --n
	Source      string // --source
	Correlation string // --correlation
	Follow      bool   // --follow
	AllParents  bool   // --all-parents
	Since       string // --since
	Until       string // --until
	Event       string // --event
}

func runLog(ctx context.Context, s *session, opts logOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	sigs, err := s.signatures()
	if err != nil {
		return err
	}
	lo := store.LogOptions{ReadOptions: s.readOptions(), Agent: opts.Agent, Op: opts.Op, Limit: opts.N,
		Source: opts.Source, Correlation: opts.Correlation,
		Follow: opts.Follow, AllParents: opts.AllParents || opts.Event != "", Event: opts.Event}
	if len(a) == 1 {
		lo.File, lo.Key, _ = strings.Cut(a[0], "#")
	} else if lo.Follow {
		return usagef("log --follow needs a FILE")
	}
	if lo.Since, err = parseTime("since", opts.Since); err != nil {
		return err
	}
	if lo.Until, err = parseTime("until", opts.Until); err != nil {
		return err
	}
	var all []*store.Mutation
	var verr error
	err = s.store.Log(ctx, lo, func(m *store.Mutation) bool {
		if sigs != nil {
			if verr = sigs.Mark(m); verr != nil {
				return false
			}
		}
		if s.json {
			all = append(all, m)
			return true
		}
		printMutationLine(s, m)
		return true
	})
	if err == nil {
		err = verr
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, nonNil(all))
	}
	return nil
}
