package main

import (
	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
)

func newPushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "push a branch (and with --tags, the checkpoints) to a remote",
		ArgsUsage: "[REMOTE] [BRANCH]",
		Description: `The server compares and swaps: when it has commits this store lacks,
the push is refused (exit 6); pull, then push again. A branch with a merge
in progress is not pushed (exit 4). A refusal by the server's aiwg-state hook
names the commit, path, rule and agent (exit 3).

Examples:
   aiwg-state push                       # the store's branch to origin
   aiwg-state push origin agents/planner/main
   aiwg-state push --tags`,
		Flags:  append(commonFlags(), &cli.BoolFlag{Name: "tags", Usage: "push every tag (checkpoints) too"}),
		Action: command(runPush),
	}
}

func runPush(s *session) error {
	a, err := args(s.c, 0, 2)
	if err != nil {
		return err
	}
	res, err := s.store.Push(s.c.Context, first(a), aiwgstate.PushOptions{Branch: second(a, s.c.String("branch")), Tags: s.c.Bool("tags")})
	if err != nil && len(res) == 0 {
		return err // nothing was tried: no result to show beside the error
	}
	if perr := printPushed(s, res); perr != nil {
		return perr
	}
	return err
}
