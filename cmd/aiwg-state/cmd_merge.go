package main

import (
	"github.com/urfave/cli/v2"
)

func newMergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge a branch, key by key, with the strategies of .gitattributes",
		ArgsUsage: "BRANCH",
		Description: `Merges BRANCH into --into (default: --branch, else the store's HEAD).
A branch that already contains BRANCH is left alone; one that BRANCH
contains fast-forwards (--no-ff makes a merge commit anyway); otherwise the
two are merged three ways against their merge base and committed with two
parents. Each JSON document changed on both sides is merged key by key
with the strategy .gitattributes gives its path (merge=aiwg-STRATEGY), or
--strategy for every path: last-write-wins, first-write-wins,
merge-objects, merge-arrays, higher-priority-wins, max, sum (counters:
both sides' increments kept), conflict.

What no strategy settles is kept as a conflict (base, ours and theirs per
key path, never markers in the JSON), the branch is left unchanged and the
exit code is 4; no write proceeds on the branch until the merge is
finished with --continue (after aiwg-state resolve) or dropped with --abort.

--verify REV recomputes the merge commit REV from its parents and lists
every difference (exit 4 if any): run it in CI, since git hosts' merge
buttons ignore the aiwg merge drivers. Files where the recomputed merge
itself conflicts were resolved by hand: they are listed, marked so, and
do not fail the check.

Examples:
   aiwg-state merge agents/planner/try-1
   aiwg-state merge feature --into main --dry-run --json
   aiwg-state merge feature --strategy last-write-wins
   aiwg-state conflicts
   aiwg-state resolve plan.json risk.level --theirs
   aiwg-state merge --continue
   aiwg-state merge --abort
   aiwg-state merge --verify main`,
		Flags: append(writeFlags(),
			&cli.StringFlag{Name: "into", Usage: "the branch to merge into (default: --branch, else HEAD)"},
			&cli.StringFlag{Name: "strategy", Usage: "settle every path with this strategy instead of .gitattributes"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "report what the merge would do; write nothing"},
			&cli.BoolFlag{Name: "no-ff", Usage: "make a merge commit even when a fast-forward would do"},
			&cli.BoolFlag{Name: "first-parent", Usage: "keep the branch's first-parent history (as integrate does): fast-forward only over commits whose first-parent chain holds its head"},
			&cli.BoolFlag{Name: "continue", Usage: "commit the merge in progress once every conflict is resolved"},
			&cli.BoolFlag{Name: "abort", Usage: "drop the merge in progress (the branch was never changed)"},
			&cli.StringFlag{Name: "verify", Usage: "recompute the merge commit REV from its parents and report every difference"},
		),
		Action: command(runMerge),
	}
}
