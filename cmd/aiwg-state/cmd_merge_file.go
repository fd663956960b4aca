package main

import (
	"github.com/urfave/cli/v2"
)

func newMergeFileCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge-file",
		Usage:     "the git merge driver: merge BASE, OURS and THEIRS into OURS",
		ArgsUsage: "BASE OURS THEIRS",
		Description: `The entry git calls for merge=aiwg-STRATEGY (see install-drivers) with
%O %A %B --path %P. Writes the merged document into OURS (canonical JSON).
Exit 0 when clean; otherwise exit 4 with ours' value at each unresolved key
and a conflict record (base, ours and theirs per key path) written to
<git-dir>/aiwg-conflicts/<PATH>.json (or OURS.aiwg-conflicts.json outside
a repository), never conflict markers.

Inside a git merge, the clocks that order last-write-wins are those of the
last commits that changed PATH on HEAD and on the branch merged in (git's
GITHEAD_<id> variable), exactly as aiwg-state merge finds them; and the
aiwg-fallback and aiwg-keys attributes of PATH come from ./.gitattributes.

Examples:
   aiwg-state merge-file --strategy merge-objects base.json ours.json theirs.json
   git config merge.aiwg-merge-objects.driver 'aiwg-state merge-file --strategy merge-objects %O %A %B --path %P'`,
		Flags: []cli.Flag{
			jsonFlag(),
			&cli.StringFlag{Name: "strategy", Usage: "the strategy (required)", Required: true},
			&cli.StringFlag{Name: "path", Usage: "the file's path in the tree (git's %P)"},
		},
		Action: runMergeFile,
	}
}
