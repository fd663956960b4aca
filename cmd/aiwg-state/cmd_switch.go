package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newSwitchCommand() *cli.Command {
	return &cli.Command{
		Name:      "switch",
		Usage:     "point the store's HEAD (the default branch of every command) at a branch",
		ArgsUsage: "NAME",
		Description: `Examples:
   aiwg-state switch agents/planner/try-1
   aiwg-state set plan.json risk.level '"low"'   # now writes that branch`,
		Flags:  commonFlags(),
		Action: command(func(s *session) error { return runSwitch(s.c.Context, s) }),
	}
}

func runSwitch(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	// HEAD's branch holds the policy in force for every later command: an
	// agent that names itself moves it only where it may change the policy.
	if agent := s.readAgent(); agent != "" {
		if err := s.store.MayMoveHead(agent, a[0]); err != nil {
			return err
		}
	}
	if err := s.store.Switch(ctx, a[0]); err != nil {
		return err
	}
	return s.done(map[string]any{"head": a[0]}, "HEAD is now %s", a[0])
}
