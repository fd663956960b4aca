package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func newBranchCommand() *cli.Command {
	return &cli.Command{
		Name:      "branch",
		Usage:     "list, create or delete branches",
		ArgsUsage: "[NAME | ls]",
		Description: `Without NAME, or with "ls": list the branches (* marks the store's HEAD, "merging"
one with a merge in progress). With NAME: create it at --from (default:
the head of the current branch); an existing branch is refused (exit 3).
-d deletes a branch, and any merge in progress on it.

Examples:
   aiwg-state branch                        # list
   aiwg-state branch ls --json
   aiwg-state branch agents/planner/try-1   # create at HEAD
   aiwg-state branch hotfix --from HEAD~3
   aiwg-state branch -d hotfix`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "from", Usage: "the revision the new branch starts at (default: HEAD)"},
			&cli.BoolFlag{Name: "delete", Aliases: []string{"d"}, Usage: "delete the branch NAME (refused if HEAD does not contain it, or it has a merge in progress)"},
			&cli.BoolFlag{Name: "force", Usage: "with -d: delete even unmerged commits and a merge in progress"},
		),
		Action: command(func(s *session) error {
			return runBranch(s.c.Context, s, branchOptions{
				Delete:  s.c.Bool("delete"),
				FromSet: s.c.IsSet("from"),
				Force:   s.c.Bool("force"),
				From:    s.c.String("from"),
			})
		}),
	}
}

// branchOptions are the flags runBranch reads.
type branchOptions struct {
	Delete  bool   // --delete
	FromSet bool   // --from was given
	Force   bool   // --force
	From    string // --from
}

func runBranch(ctx context.Context, s *session, opts branchOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	switch {
	case len(a) == 0 && opts.Delete:
		return usagef("branch -d needs a branch NAME")
	case len(a) == 0 || (a[0] == "ls" && !opts.Delete && !opts.FromSet):
		// "branch ls" lists too; it is a positional word rather than
		// a subcommand so flags may come anywhere on the line.
		return listBranches(s)
	case opts.Delete:
		if err := s.store.DeleteBranch(ctx, a[0], opts.Force); err != nil {
			return err
		}
		return s.done(map[string]any{"deleted": a[0]}, "deleted branch %s", a[0])
	}
	from := opts.From
	if from == "" {
		from = s.store.Branch()
	}
	b, err := s.store.CreateBranch(ctx, a[0], from)
	if err != nil {
		return err
	}
	return s.done(b, "created branch %s at %s", b.Name, shortHash(b.Commit))
}
