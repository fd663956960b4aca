package main

import (
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
		Action: command(runSwitch),
	}
}

func runSwitch(s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if err := s.store.Switch(s.c.Context, a[0]); err != nil {
		return err
	}
	return s.done(map[string]any{"head": a[0]}, "HEAD is now %s", a[0])
}
