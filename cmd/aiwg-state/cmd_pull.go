package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/remote"
)

func newPullCommand() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "fetch, then merge the remote's copy of a branch into it with the strategies",
		ArgsUsage: "[REMOTE] [BRANCH]",
		Description: `Conflicts persist as with merge (exit 4): see conflicts, resolve.

Examples:
   aiwg-state pull
   aiwg-state pull origin main --strategy last-write-wins`,
		Flags: remoteMergeFlags(),
		Action: command(func(s *session) error {
			return runPull(s.c.Context, s, pullOptions{
				Branch: s.c.String("branch"),
			})
		}),
	}
}

// pullOptions are the flags runPull reads.
type pullOptions struct {
	Branch string // --branch
}

func runPull(ctx context.Context, s *session, opts pullOptions) error {
	a, err := args(s.c, 0, 2)
	if err != nil {
		return err
	}
	res, err := s.store.Swarm().Pull(ctx, first(a), remote.PullOptions{Branch: second(a, opts.Branch), Merge: mergeOptions(s)})
	if res == nil && err == nil {
		if s.json {
			return printJSON(s.out, map[string]any{"status": "nothing to pull"})
		}
		fmt.Fprintln(s.out, "nothing to pull: the remote has no such branch")
		return nil
	}
	return s.printMerge(res, err)
}
