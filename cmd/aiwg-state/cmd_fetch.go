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
		ArgsUsage: "[REMOTE]",
		Description: `In a shallow clone (clone --depth N), --deepen N fetches N more
commits of history and --unshallow all of it.

Examples:
   aiwg-state fetch                  # from origin
   aiwg-state log --branch origin/main
   aiwg-state fetch --deepen 50      # a shallow clone: 50 more commits`,
		Flags: append(commonFlags(),
			&cli.IntFlag{Name: "deepen", Usage: "in a shallow clone, fetch `N` more commits of history"},
			&cli.BoolFlag{Name: "unshallow", Usage: "in a shallow clone, fetch all the history it lacks"}),
		Action: command(runFetch),
	}
}

func runFetch(s *session) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	fetch := s.store.Fetch
	switch n := s.c.Int("deepen"); {
	case n < 0 || (n > 0 && s.c.Bool("unshallow")):
		return usagef("--deepen takes a positive number of commits, and not with --unshallow")
	case n > 0 || s.c.Bool("unshallow"):
		fetch = func(ctx context.Context, remote string) ([]repo.RefUpdate, error) {
			return s.store.Deepen(ctx, remote, n)
		}
	}
	ups, err := fetch(s.c.Context, first(a))
	if err != nil {
		return err
	}
	return printUpdates(s, ups)
}
