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
		ArgsUsage: "[A..B] [FILE[#KEYPATH]] [-N]",
		Description: `Each line: commit, time (UTC), agent, mutation id, what changed.

A..B lists what B has that A has not, as git log A..B (an empty side is
HEAD): a branch's own mutations before merging it. -N, -n N and
--max-count N show at most N, as git takes them. --graph draws the
first-parent history with each merge's branch beside it, in the ASCII of
git log --graph --oneline.

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
   aiwg-state log -1
   aiwg-state log main..agents/planner/main     # what the planner has that main has not
   aiwg-state log --graph -20
   aiwg-state log docs/plan.json#risk.level
   aiwg-state log docs/plan.json --follow            # across mv, ours or git mv
   aiwg-state log plan.json --all-parents             # both sides of merges
   aiwg-state log --agent planner --since 2026-11-01
   aiwg-state log --since 2h                     # the last two hours
   aiwg-state log --op delete --json
   aiwg-state log --correlation run-7            # one run's writes, by its Correlation-Id
   aiwg-state log --event lock.contention        # the commits that emitted such an event
   aiwg-state log --verify                       # is each signed with its agent's key?`,
		Flags: append(readFlags(),
			&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
			&cli.StringFlag{Name: "since", Usage: "only mutations at or after this time: a date (2026-11-01), an RFC 3339 time or an age (2h, 1d, 3w ago)"},
			&cli.StringFlag{Name: "until", Usage: "only mutations at or before this time (as --since)"},
			&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename, merge, rollback"},
			&cli.StringFlag{Name: "source", Usage: "only mutations with this Source trailer (set --source)"},
			&cli.StringFlag{Name: "correlation", Usage: "only mutations with this Correlation-Id trailer (set --correlation): one run's writes"},
			&cli.IntFlag{Name: "n", Aliases: []string{"max-count"}, Usage: "at most this many mutations (also -N)"},
			&cli.BoolFlag{Name: "graph", Usage: "draw merges beside the first-parent history, as git log --graph"},
			&cli.StringFlag{Name: "event", Usage: "only commits that emitted an event of this type, or family (task.*); follows every parent, so an event merged from another branch is found in its own commit"},
			&cli.BoolFlag{Name: "follow", Usage: "continue the file's history across moves (aiwg-state mv, or an exact rename made with git mv)"},
			&cli.BoolFlag{Name: "all-parents", Usage: "follow merges into all parents (default: first parents, as git log --first-parent)"},
			verifyFlag(),
			colorFlag(), noPagerFlag(),
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
				Graph:       s.c.Bool("graph"),
				NSet:        s.c.IsSet("n"),
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
	Graph       bool   // --graph
	NSet        bool   // -n given
	Event       string // --event
}

func runLog(ctx context.Context, s *session, opts logOptions) error {
	a, err := args(s.c, 0, 3)
	if err != nil {
		return err
	}
	lo := store.LogOptions{ReadOptions: s.readOptions(), Agent: opts.Agent, Op: opts.Op, Limit: opts.N,
		Source: opts.Source, Correlation: opts.Correlation,
		Follow: opts.Follow, AllParents: opts.AllParents || opts.Event != "", Event: opts.Event}
	var files []string
	for _, arg := range a {
		if n, ok := dashCount(arg); ok {
			// git log -3: -N is -n N.
			if opts.NSet && n != opts.N {
				return usagef("log: %s and -n %d disagree; give one", arg, opts.N)
			}
			lo.Limit, opts.NSet = n, true
			continue
		}
		if r, ok := parseRange(arg); ok && lo.Exclude == "" && len(files) == 0 {
			if r.Symmetric {
				return usagef("log takes A..B (what B has that A has not), not %s", arg)
			}
			if lo.At != "" {
				return usagef("log: give a range (%s) or --at, not both", arg)
			}
			lo.Exclude, lo.At = r.From, r.To
			continue
		}
		files = append(files, arg)
	}
	if len(files) > 1 {
		return usagef("log takes one FILE[#KEYPATH], got %q and %q", files[0], files[1])
	}
	if len(files) == 1 {
		lo.File, lo.Key, _ = strings.Cut(files[0], "#")
	} else if lo.Follow {
		return usagef("log --follow needs a FILE")
	}
	if opts.NSet && lo.Limit == 0 {
		// git log -0 and -n 0 show nothing (to the store, a limit of 0
		// is none).
		if s.json {
			return printJSON(s.out, []any{})
		}
		return nil
	}
	if opts.Graph {
		if lo.File != "" || lo.AllParents || lo.Agent != "" || lo.Op != "" || lo.Source != "" || lo.Correlation != "" || opts.Since != "" || opts.Until != "" || s.c.Bool("verify") {
			return usagef("log --graph draws the whole history: it takes a range and -N, not a FILE or filters")
		}
		if s.json {
			return usagef("log --graph draws for people: leave out --json (each mutation's parents are in log --json)")
		}
		defer s.page()()
		return drawGraph(ctx, s, lo)
	}
	sigs, err := s.signatures()
	if err != nil {
		return err
	}
	if lo.Since, err = parseTime("since", opts.Since); err != nil {
		return err
	}
	if lo.Until, err = parseTime("until", opts.Until); err != nil {
		return err
	}
	if lo.File != "" {
		if err := s.mayRead(ctx, lo.File); err != nil {
			return err
		}
	}
	defer s.page()()
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
