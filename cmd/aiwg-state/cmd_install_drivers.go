package main

import (
	"github.com/urfave/cli/v2"
)

func newInstallDriversCommand() *cli.Command {
	return &cli.Command{
		Name:  "install-drivers",
		Usage: "register the aiwg merge drivers in a clone's git config",
		Description: `Sets merge.aiwg-STRATEGY.name and merge.aiwg-STRATEGY.driver for every
strategy in the repository's git config, so a plain git merge in a clone of
the store merges the paths .gitattributes assigns (merge=aiwg-STRATEGY)
exactly as aiwg-state merge does.

Examples:
   git clone .aiwg/state.git state && cd state && aiwg-state install-drivers
   aiwg-state install-drivers --repo ../state`,
		Flags: []cli.Flag{
			jsonFlag(),
			&cli.StringFlag{Name: "repo", Usage: "the clone (default: the current directory)"},
			&cli.StringFlag{Name: "bin", Usage: "the aiwg-state executable git should run (default: this one)"},
		},
		Action: runInstallDrivers,
	}
}
