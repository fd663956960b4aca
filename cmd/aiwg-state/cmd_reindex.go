package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"
)

func newReindexCommand() *cli.Command {
	return &cli.Command{
		Name:  "reindex",
		Usage: "rebuild the changed-paths index that log and blame use",
		Description: `The index lives in the store's git directory (aiwg/index), outside the
versioned tree. Every write keeps it current, and commits it does not know
(made with plain git, fetched) are indexed when a query first meets them,
so reindex is only needed after deleting it or to pay that cost up front.
Progress goes to standard error.

Recent commits' records sit in a log beside the index's snapshot, and a
query folds the log into a new snapshot every 1,024 commits; --fold does
only that, now. A server (aiwg-state serve) runs it in a process of its
own rather than folding in a query: a fold reads the whole snapshot and
writes the next (140 MB at a million commits), streaming both.

Examples:
   aiwg-state reindex
   aiwg-state reindex --json
   aiwg-state reindex --fold`,
		Flags: append(commonFlags(),
			&cli.BoolFlag{Name: "fold", Usage: "fold the log of recent commits into the snapshot, rebuilding nothing"}),
		Action: command(func(s *session) error {
			if s.c.Bool("fold") {
				if _, err := args(s.c, 0, 0); err != nil {
					return err
				}
				if err := s.store.FoldIndex(s.c.Context); err != nil {
					return err
				}
				return s.done(map[string]any{"folded": true}, "folded the index's log into its snapshot")
			}
			return runReindex(s.c.Context, s)
		}),
	}
}

func runReindex(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	errw := s.c.App.ErrWriter
	t0 := time.Now()
	last := time.Time{}
	limited := os.Getenv("GOMEMLIMIT") != ""
	st, err := s.store.Reindex(ctx, func(done, total int) {
		if !limited {
			// A rebuild keeps a few hundred bytes per commit alive and
			// makes garbage at a steady rate: a soft limit sized to what
			// it keeps collects that garbage before the heap doubles,
			// for about a tenth more CPU.
			limited = true
			debug.SetMemoryLimit(reindexBaseMemory + int64(total)*reindexMemoryPerCommit)
		}
		if s.json {
			return // stderr is for JSON then; the result says how many
		}
		if done == total || time.Since(last) > 200*time.Millisecond {
			last = time.Now()
			fmt.Fprintf(errw, "indexing commits: %d/%d\r", done, total)
			if done == total {
				fmt.Fprintln(errw)
			}
		}
	})
	if err != nil {
		return err
	}
	return s.done(st, "indexed %d commits, %d key paths, in %s", st.Commits, st.Keys, time.Since(t0).Round(time.Millisecond))
}

// The soft memory limit of reindex: a base for the process, the caches
// and the garbage between two collections, plus what the rebuild keeps
// per commit (the snapshot's tables and a hash).
const (
	reindexBaseMemory      = 16 << 20
	reindexMemoryPerCommit = 256
)
