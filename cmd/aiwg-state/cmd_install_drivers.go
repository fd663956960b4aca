package main

import (
	"github.com/urfave/cli/v2"
)

func newInstallDriversCommand() *cli.Command {
	return &cli.Command{
		Name:  "install-drivers",
		Usage: "register the aiwg merge drivers and the JSON diff driver in a clone's git config",
		Description: `Sets merge.aiwg-STRATEGY.name and merge.aiwg-STRATEGY.driver for every
strategy in the repository's git config, so a plain git merge in a clone of
the store merges the paths .gitattributes assigns (merge=aiwg-STRATEGY)
exactly as aiwg-state merge does.

Also sets diff.aiwg-json.xfuncname, the diff driver the store's
.gitattributes assigns to *.json (diff=aiwg-json), so git diff and
git log -p head each hunk with the key it is in:
   @@ -12,7 +12,7 @@ "risk"
(A store made before this line was in its .gitattributes: add
"*.json diff=aiwg-json" to it in a clone, commit and push.)

With --json: a list of {"driver", "command"}, the diff driver's with
"xfuncname" instead of "command".

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
