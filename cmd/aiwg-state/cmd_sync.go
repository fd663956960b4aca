package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/remote"
)

func newSyncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "fetch, merge the upstream branch into the agent's branch, push: one command for an agent's loop",
		ArgsUsage: "[REMOTE]",
		Description: `Fetches the branch and the upstream branch (default main) only, no other
agent's branch and no tag: beyond what main gained, a sync costs the same
in a swarm of 4 or of 1,000. Merges the remote's copy of the branch (another process of the
same agent may have pushed) and the upstream into the branch with the
strategies, then pushes it alone; a lost push race starts over (bounded).
Conflicts stop it with exit 4, persisted for resolve.

When the integrator could not merge the branch, the upstream holds its
conflict record (the keys, the upstream's value and the agent's): sync
shows it. --resolve ours keeps the agent's values at the keys the merge
of the upstream conflicts on, --resolve theirs takes the upstream's; either
completes that merge (or the one a sync that stopped left in progress) and
pushes, so the next integration takes the branch.

Examples:
   aiwg-state sync
   aiwg-state sync origin --upstream main --branch agents/planner/main
   aiwg-state sync --resolve theirs`,
		Flags: append(remoteMergeFlags(),
			&cli.StringFlag{Name: "upstream", Usage: "the remote branch merged in", Value: "main"},
			&cli.StringFlag{Name: "resolve", Usage: "settle the upstream merge's conflicts with `ours` or theirs"}),
		Action: command(func(s *session) error {
			return runSync(s.c.Context, s, syncOptions{
				Branch:   s.c.String("branch"),
				Upstream: s.c.String("upstream"),
				Resolve:  s.c.String("resolve"),
			})
		}),
	}
}

// syncOptions are the flags runSync reads.
type syncOptions struct {
	Branch   string // --branch
	Upstream string // --upstream
	Resolve  string // --resolve
}

func runSync(ctx context.Context, s *session, opts syncOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	switch opts.Resolve {
	case "", "ours", "theirs":
	default:
		return usagef("--resolve takes ours or theirs, not %q", opts.Resolve)
	}
	res, err := s.store.Swarm().Sync(ctx, first(a), remote.SyncOptions{Branch: opts.Branch, Upstream: opts.Upstream, Merge: mergeOptions(s), Resolve: opts.Resolve})
	if res == nil || err != nil && res.Fetched == nil && res.Merged == nil && res.Pushed == nil {
		return err
	}
	if s.json {
		if perr := printJSON(s.out, res); perr != nil {
			return perr
		}
		return err
	}
	if rec := res.Conflict; rec != nil {
		fmt.Fprintf(s.out, "not integrated into %s: %s at %s conflicts on %d key(s)\n", rec.Into, rec.Branch, shortHash(rec.Tip), len(rec.Conflicts))
		for _, c := range rec.Conflicts {
			fmt.Fprintf(s.out, "    %s %s: %s | %s %s | agent %s\n", c.File, c.Key, c.Reason, rec.Into, sideOf(c.Into), sideOf(c.Agent))
		}
	}
	if res.Resolved > 0 {
		fmt.Fprintf(s.out, "resolved %d conflict(s) with %s\n", res.Resolved, opts.Resolve)
	}
	for _, m := range res.Merged {
		switch m.Status {
		case merge.MergeUpToDate:
		case merge.MergeConflicts:
			// Nothing merged yet: what is left is the news.
			fmt.Fprintf(s.out, "merge %s into %s: %d conflict(s) left (aiwg-state conflicts; resolve, then merge --continue; or sync --resolve ours|theirs)\n", m.From, m.Into, len(m.Conflicts))
			printConflicts(s, m.Conflicts)
		default:
			fmt.Fprintf(s.out, "merged %s into %s: %s, %d file(s)\n", m.From, m.Into, m.Status, len(m.Files))
		}
	}
	if err == nil {
		if perr := printPushed(s, res.Pushed); perr != nil {
			return perr
		}
	}
	return err
}

// sideOf shows one side's value of a recorded conflict ("-": absent).
func sideOf(v []byte) string {
	if len(v) == 0 {
		return "-"
	}
	return string(v)
}
