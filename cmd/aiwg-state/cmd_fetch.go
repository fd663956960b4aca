package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/repo"
)

func newFetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "fetch a remote's branches (as REMOTE/BRANCH) and tags",
		ArgsUsage: "[REMOTE] [BRANCH...]",
		Description: `Without BRANCH (or with --all), every branch and tag of the remote. With
BRANCH, those branches only and no tag: the remote advertises only them,
which is what an agent's sync does (its own branch and main).

In a shallow clone (clone --depth N), --deepen N fetches N more
commits of history and --unshallow all of it.

Examples:
   aiwg-state fetch                  # from origin: every branch and tag
   aiwg-state fetch origin main agents/planner/main
   aiwg-state log --branch origin/main
   aiwg-state fetch --deepen 50      # a shallow clone: 50 more commits`,
		Flags: append(commonFlags(),
			&cli.IntFlag{Name: "deepen", Usage: "in a shallow clone, fetch `N` more commits of history"},
			&cli.BoolFlag{Name: "unshallow", Usage: "in a shallow clone, fetch all the history it lacks"},
			&cli.BoolFlag{Name: "all", Usage: "every branch and tag of the remote (the default without BRANCH)"}),
		Action: command(func(s *session) error {
			return runFetch(s.c.Context, s, fetchOptions{
				Deepen:    s.c.Int("deepen"),
				Unshallow: s.c.Bool("unshallow"),
				All:       s.c.Bool("all"),
			})
		}),
	}
}

// fetchOptions are the flags runFetch reads.
type fetchOptions struct {
	Deepen    int  // --deepen
	Unshallow bool // --unshallow
	All       bool // --all
}

func runFetch(ctx context.Context, s *session, opts fetchOptions) error {
	a, err := args(s.c, 0, -1)
	if err != nil {
		return err
	}
	if len(a) > 1 {
		if opts.All || opts.Deepen != 0 || opts.Unshallow {
			return usagef("BRANCH names the branches to fetch: not with --all, --deepen or --unshallow")
		}
		ups, err := s.store.Swarm().FetchBranches(ctx, a[0], a[1:]...)
		if err != nil {
			return err
		}
		return printUpdates(s, ups)
	}
	fetch := s.store.Fetch
	switch n := opts.Deepen; {
	case n < 0 || (n > 0 && opts.Unshallow):
		return usagef("--deepen takes a positive number of commits, and not with --unshallow")
	case n > 0 || opts.Unshallow:
		fetch = func(ctx context.Context, remote string) ([]repo.RefUpdate, error) {
			return s.store.Deepen(ctx, remote, n)
		}
	}
	ups, err := fetch(ctx, first(a))
	if err != nil {
		return err
	}
	return printUpdates(s, ups)
}
