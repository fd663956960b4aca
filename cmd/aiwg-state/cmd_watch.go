package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newWatchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "stream mutations as they land, oldest first; with PATH, only those that changed it",
		ArgsUsage: "[PATH]",
		Description: `Each line is a log line (with --json, one JSON object a line: JSON Lines).
The branch is read every --poll; a mutation made by any process, or by
plain git, shows within about that time. --from REV first streams what
came after REV: a consumer that restarts passes the last commit it handled
and misses nothing. When the branch is reset (to a commit that does not
contain the last one streamed), a reset line says so ({"reset":{"from",
"to"}} with --json) before the new line's mutations; a commit streamed
before is not streamed again. PATH is a file or a directory. Stops after -n
mutations, or on Ctrl-C (exit 0).

Examples:
   aiwg-state watch
   aiwg-state watch plan.json --agent planner
   aiwg-state watch leases --json                  # lock events
   aiwg-state watch --from 1a2b3c4d --json -n 10   # resume after a commit`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "from", Usage: "first stream the mutations after this revision (default: only new ones)"},
			&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
			&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename, merge, rollback"},
			&cli.StringFlag{Name: "source", Usage: "only mutations with this Source trailer"},
			&cli.StringFlag{Name: "correlation", Usage: "only mutations with this Correlation-Id trailer"},
			&cli.IntFlag{Name: "n", Usage: "stop after this many mutations (default: run until interrupted)"},
			&cli.DurationFlag{Name: "poll", Value: 100 * time.Millisecond, Usage: "how often the branch is read"},
		),
		Action: command(func(s *session) error {
			return runWatch(s.c.Context, s, watchOptions{
				N:           s.c.Int("n"),
				Branch:      s.c.String("branch"),
				From:        s.c.String("from"),
				Agent:       s.c.String("agent"),
				Op:          s.c.String("op"),
				Source:      s.c.String("source"),
				Correlation: s.c.String("correlation"),
				Poll:        s.c.Duration("poll"),
			})
		}),
	}
}

// watchOptions are the flags runWatch reads.
type watchOptions struct {
	N           int           // --n
	Branch      string        // --branch
	From        string        // --from
	Agent       string        // --agent
	Op          string        // --op
	Source      string        // --source
	Correlation string        // --correlation
	Poll        time.Duration // --poll
}

func runWatch(ctx context.Context, s *session, opts watchOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	limit := opts.N
	if limit < 0 {
		return usagef("-n %d: want a count of mutations (0: no limit)", limit)
	}
	wo := store.WatchOptions{Branch: opts.Branch, From: opts.From, Path: argAt(a, 0),
		Agent: opts.Agent, Op: opts.Op, Source: opts.Source, Correlation: opts.Correlation,
		Poll: opts.Poll}
	n := 0
	var werr error
	wo.OnReset = func(from, to string) bool {
		if s.json {
			werr = printJSON(s.out, map[string]any{"reset": map[string]string{"from": from, "to": to}})
		} else {
			fmt.Fprintf(s.out, "reset: the branch moved from %s to %s, which does not contain it\n", shortHash(from), shortHash(to))
		}
		return werr == nil
	}
	err = s.store.Watch(ctx, wo, func(m *store.Mutation) bool {
		if s.json {
			werr = printJSON(s.out, m)
		} else {
			printMutationLine(s, m)
		}
		if f, ok := s.out.(interface{ Flush() error }); ok {
			f.Flush()
		}
		n++
		return werr == nil && (limit == 0 || n < limit)
	})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted: the usual end of a watch
	}
	if err != nil {
		return err
	}
	return werr
}
