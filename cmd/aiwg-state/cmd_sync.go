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
		Description: `Merges the remote's copy of the branch (another process of the same
agent may have pushed) and the upstream branch (default main) into the
branch with the strategies, then pushes it; a lost push race starts over
(bounded). Conflicts stop it with exit 4, persisted for resolve.

Examples:
   aiwg-state sync
   aiwg-state sync origin --upstream main --branch agents/planner/main`,
		Flags: append(remoteMergeFlags(), &cli.StringFlag{Name: "upstream", Usage: "the remote branch merged in", Value: "main"}),
		Action: command(func(s *session) error {
			return runSync(s.c.Context, s, syncOptions{
				Branch:   s.c.String("branch"),
				Upstream: s.c.String("upstream"),
			})
		}),
	}
}

// syncOptions are the flags runSync reads.
type syncOptions struct {
	Branch   string // --branch
	Upstream string // --upstream
}

func runSync(ctx context.Context, s *session, opts syncOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	res, err := s.store.Swarm().Sync(ctx, first(a), remote.SyncOptions{Branch: opts.Branch, Upstream: opts.Upstream, Merge: mergeOptions(s)})
	if res == nil || err != nil && res.Fetched == nil && res.Merged == nil && res.Pushed == nil {
		return err
	}
	if s.json {
		if perr := printJSON(s.out, res); perr != nil {
			return perr
		}
		return err
	}
	for _, m := range res.Merged {
		switch m.Status {
		case merge.MergeUpToDate:
		case merge.MergeConflicts:
			// Nothing merged yet: what is left is the news.
			fmt.Fprintf(s.out, "merge %s into %s: %d conflict(s) left (aiwg-state conflicts; resolve, then merge --continue)\n", m.From, m.Into, len(m.Conflicts))
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
