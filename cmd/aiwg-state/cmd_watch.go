package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/event"
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

Every commit the branch gains is streamed, in commit order (each after its
parents): a merge streams the commits it brought in, then itself. A reset
line names the commits the reset took off the branch ({"reset":{...,
"dropped":[...]}}). A commit that was on the branch for less than a
--poll, reset away before it was read, is in no history: git keeps no
record of it.

--event TYPE keeps the commits that emitted an event of that type (or
family: task.*; see event emit).

--subscriber NAME makes the watch durable: its cursor (the last commits
delivered) is kept in the store's git directory, on this machine, and the
next watch of that name goes on from it, so every commit is delivered at
least once, in commit order, through restarts, kills and merges. Without a
cursor yet, it starts at --from (default: what comes next). A subscriber
runs in one process at a time (exit 5 otherwise). --exec CMD hands each
batch (up to --batch mutations, waiting up to --max-wait for a batch to
fill) to CMD (run by sh) on its standard input, as JSON Lines; the cursor
moves once CMD exits 0. A batch CMD fails on --max-failures times in a row
is set aside as dead letters (event subscriber show NAME) and delivery goes
on; without --max-failures it is retried until it succeeds.

Examples:
   aiwg-state watch
   aiwg-state watch plan.json --agent planner
   aiwg-state watch leases --json                  # lock events
   aiwg-state watch --from 1a2b3c4d --json -n 10   # resume after a commit
   aiwg-state watch --event handoff.* --json
   aiwg-state watch --subscriber reviewer --event task.completed --exec ./handle.sh --batch 10 --max-wait 2s --max-failures 3`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "from", Usage: "first stream the mutations after this revision (default: only new ones)"},
			&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
			&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename, merge, rollback"},
			&cli.StringFlag{Name: "source", Usage: "only mutations with this Source trailer"},
			&cli.StringFlag{Name: "correlation", Usage: "only mutations with this Correlation-Id trailer"},
			&cli.IntFlag{Name: "n", Usage: "stop after this many mutations (default: run until interrupted)"},
			&cli.DurationFlag{Name: "poll", Value: 100 * time.Millisecond, Usage: "how often the branch is read"},
			&cli.StringFlag{Name: "event", Usage: "only commits that emitted an event of this type, or family (task.*)"},
			&cli.StringFlag{Name: "subscriber", Usage: "a durable subscriber: go on from its cursor, kept on this machine, and move it as mutations are handled"},
			&cli.StringFlag{Name: "exec", Usage: "with --subscriber: run this command (sh) with each batch on its standard input, as JSON Lines"},
			&cli.IntFlag{Name: "batch", Usage: "with --subscriber: up to this many mutations a batch"},
			&cli.DurationFlag{Name: "max-wait", Usage: "with --subscriber: how long a batch waits to fill (default: it goes when nothing else is waiting)"},
			&cli.IntFlag{Name: "max-failures", Usage: "with --exec: set a batch aside as dead letters after this many failures in a row (default: retry until it succeeds)"},
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
				Event:       s.c.String("event"),
				Subscriber:  s.c.String("subscriber"),
				Exec:        s.c.String("exec"),
				Batch:       s.c.Int("batch"),
				MaxWait:     s.c.Duration("max-wait"),
				MaxFailures: s.c.Int("max-failures"),
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
	Event       string        // --event
	Subscriber  string        // --subscriber
	Exec        string        // --exec
	Batch       int           // --batch
	MaxWait     time.Duration // --max-wait
	MaxFailures int           // --max-failures
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
	if opts.Event != "" {
		if err := event.CheckPattern(opts.Event); err != nil {
			return err
		}
	}
	wo := store.WatchOptions{Branch: opts.Branch, From: opts.From, Path: argAt(a, 0),
		Agent: opts.Agent, Op: opts.Op, Source: opts.Source, Correlation: opts.Correlation,
		Event: opts.Event, Poll: opts.Poll}
	n := 0
	var werr error
	// The reset line is printed once the dropped commits are known.
	var resetFrom, resetTo string
	wo.OnReset = func(from, to string) bool {
		resetFrom, resetTo = from, to
		return true
	}
	wo.OnDropped = func(dropped []string) bool {
		if s.json {
			werr = printJSON(s.out, map[string]any{"reset": map[string]any{"from": resetFrom, "to": resetTo, "dropped": nonNil(dropped)}})
		} else {
			fmt.Fprintf(s.out, "reset: the branch moved from %s to %s, which does not contain it; %d commits dropped\n", shortHash(resetFrom), shortHash(resetTo), len(dropped))
			for _, c := range dropped {
				fmt.Fprintf(s.out, "dropped: %s\n", c)
			}
		}
		return werr == nil
	}
	if opts.Subscriber != "" {
		return runSubscriber(ctx, s, opts, wo)
	}
	if opts.Exec != "" || opts.Batch != 0 || opts.MaxWait != 0 || opts.MaxFailures != 0 {
		return usagef("--exec, --batch, --max-wait and --max-failures go with --subscriber NAME")
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

// runSubscriber is watch --subscriber: a durable subscription whose
// handler prints each mutation, or runs --exec with each batch.
func runSubscriber(ctx context.Context, s *session, opts watchOptions, wo store.WatchOptions) error {
	if opts.N < 0 {
		return usagef("-n %d: want a count of mutations (0: no limit)", opts.N)
	}
	if opts.MaxFailures != 0 && opts.Exec == "" {
		return usagef("--max-failures goes with --exec: printing a mutation does not fail")
	}
	sub, err := s.store.Events().Subscriber(opts.Subscriber)
	if err != nil {
		return err
	}
	flush := func() {
		if f, ok := s.out.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
	n := 0
	so := event.SubscribeOptions{Watch: wo, Batch: opts.Batch, MaxWait: opts.MaxWait, MaxFailures: opts.MaxFailures}
	err = sub.Subscribe(ctx, s.store.Store, so, func(ms []*store.Mutation) error {
		if opts.Exec != "" {
			if err := execBatch(ctx, s, opts, ms); err != nil {
				return err
			}
		} else {
			for _, m := range ms {
				if s.json {
					if err := printJSON(s.out, m); err != nil {
						return err
					}
				} else {
					printMutationLine(s, m)
				}
			}
		}
		flush()
		n += len(ms)
		if opts.N > 0 && n >= opts.N {
			return event.ErrStop
		}
		return nil
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// execBatch runs --exec with the batch on its standard input, as JSON
// Lines; it fails unless the command exits 0.
func execBatch(ctx context.Context, s *session, opts watchOptions, ms []*store.Mutation) error {
	var in bytes.Buffer
	for _, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		in.Write(append(b, '\n'))
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", opts.Exec)
	cmd.Stdin = &in
	cmd.Stdout = s.out
	cmd.Stderr = s.c.App.ErrWriter
	cmd.Dir = s.inv.handlerDir()
	env := s.inv.handlerEnv()
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, "AIWG_SUBSCRIBER="+opts.Subscriber, fmt.Sprintf("AIWG_BATCH_SIZE=%d", len(ms)))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", opts.Exec, err)
	}
	return nil
}
