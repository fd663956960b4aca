package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/store"
)

func newIntegrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "integrate",
		Usage:     "merge every agents/* branch of a remote into main and push it (for a coordinator)",
		ArgsUsage: "[REMOTE]",
		Description: `One merge per agent branch, reported per agent; a branch that
conflicts is left out (its merge undone) and reported, and integrate exits
4 after pushing the rest. Merge it by hand to resolve:
   aiwg-state merge origin/agents/planner/main
main keeps its first-parent history: it fast-forwards only over commits
whose first-parent chain holds its head, and otherwise gets a merge commit
(an agent branch that merged main in is not fast-forwarded onto). A branch
bringing a commit the policy on main refuses is left out and reported.

Examples:
   aiwg-state integrate
   aiwg-state integrate origin --into main --no-push --json`,
		Flags: append(remoteMergeFlags(),
			&cli.StringFlag{Name: "into", Usage: "the branch agents are merged into", Value: "main"},
			&cli.BoolFlag{Name: "no-push", Usage: "integrate locally only"}),
		Action: command(func(s *session) error {
			return runIntegrate(s.c.Context, s, integrateOptions{
				Into:   s.c.String("into"),
				NoPush: s.c.Bool("no-push"),
			})
		}),
	}
}

// integrateOptions are the flags runIntegrate reads.
type integrateOptions struct {
	Into   string // --into
	NoPush bool   // --no-push
}

func runIntegrate(ctx context.Context, s *session, opts integrateOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	res, err := s.store.Swarm().Integrate(ctx, first(a), remote.IntegrateOptions{Into: opts.Into, NoPush: opts.NoPush, Merge: mergeOptions(s)})
	if err == nil && len(res.Conflicted()) > 0 {
		err = fmt.Errorf("%w: not integrated: %s", store.ErrConflict, strings.Join(res.Conflicted(), ", "))
	}
	if res == nil || err != nil && len(res.Agents) == 0 {
		return err
	}
	if s.json {
		if perr := printJSON(s.out, res); perr != nil {
			return perr
		}
		return err
	}
	for _, am := range res.Agents {
		switch {
		case am.Error != "":
			fmt.Fprintf(s.out, "%s\t%s: error: %s\n", am.Agent, am.Branch, am.Error)
		case am.Status == merge.MergeConflicts:
			fmt.Fprintf(s.out, "%s\t%s: %d conflict(s), left out\n", am.Agent, am.Branch, len(am.Conflicts))
			printConflicts(s, am.Conflicts)
		default:
			fmt.Fprintf(s.out, "%s\t%s: %s, %d file(s)\n", am.Agent, am.Branch, am.Status, len(am.Files))
		}
	}
	if perr := printPushed(s, res.Pushed); perr != nil {
		return perr
	}
	return err
}
