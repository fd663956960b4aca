package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newPushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "push a branch (and with --tags, the checkpoints and snapshots) to a remote",
		ArgsUsage: "[REMOTE] [BRANCH]",
		Description: `The server compares and swaps: when it has commits this store lacks,
the push is refused (exit 6); pull, then push again. A branch with a merge
in progress is not pushed (exit 4). A refusal by the server's aiwg-state hook
names the commit, path, rule and agent (exit 3).

Examples:
   aiwg-state push                       # the store's branch to origin
   aiwg-state push origin agents/planner/main
   aiwg-state push --tags`,
		Flags: append(commonFlags(), &cli.BoolFlag{Name: "tags", Usage: "push every tag (checkpoints, snapshots) too"}),
		Action: command(func(s *session) error {
			return runPush(s.c.Context, s, pushOptions{
				Branch: s.c.String("branch"),
				Tags:   s.c.Bool("tags"),
			})
		}),
	}
}

// pushOptions are the flags runPush reads.
type pushOptions struct {
	Branch string // --branch
	Tags   bool   // --tags
}

func runPush(ctx context.Context, s *session, opts pushOptions) error {
	a, err := args(s.c, 0, 2)
	if err != nil {
		return err
	}
	res, err := s.store.Push(ctx, first(a), store.PushOptions{Branch: second(a, opts.Branch), Tags: opts.Tags})
	if err != nil && len(res) == 0 {
		return err // nothing was tried: no result to show beside the error
	}
	if perr := printPushed(s, res); perr != nil {
		return perr
	}
	return err
}
