package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/store"
)

func newConflictsCommand() *cli.Command {
	return &cli.Command{
		Name:  "conflicts",
		Usage: "list what the merge in progress left to resolve",
		Description: `One line per conflict: FILE KEYPATH, the reason, then base, ours and
theirs (compact JSON; "-" where the key does not exist on that side). A
whole-file conflict (not JSON, or not mergeable key by key) has no KEYPATH.

Examples:
   aiwg-state conflicts
   aiwg-state conflicts --into feature --json`,
		Flags: append(commonFlags(), &cli.StringFlag{Name: "into", Usage: "the branch with the merge in progress (default: --branch, else HEAD)"}),
		Action: command(func(s *session) error {
			return runConflicts(s.c.Context, s, conflictsOptions{
				Into: s.c.String("into"),
			})
		}),
	}
}

// conflictsOptions are the flags runConflicts reads.
type conflictsOptions struct {
	Into string // --into
}

func runConflicts(ctx context.Context, s *session, opts conflictsOptions) error {
	cs, err := s.store.Merges().Conflicts(ctx, store.ReadOptions{Branch: opts.Into})
	if errors.Is(err, store.ErrNotFound) {
		// No merge in progress: nothing to resolve, which an
		// agent polling this must not read as a failure.
		if s.json {
			return printJSON(s.out, []merge.ConflictEntry{})
		}
		fmt.Fprintln(s.out, "no merge in progress")
		return nil
	}
	if err != nil {
		return err
	}
	if s.json {
		if cs == nil {
			cs = []merge.ConflictEntry{}
		}
		return printJSON(s.out, cs)
	}
	printConflicts(s, cs)
	return nil
}
