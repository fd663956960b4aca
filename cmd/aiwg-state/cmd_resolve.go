package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/merge"
)

func newResolveCommand() *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "settle a conflict of the merge in progress",
		ArgsUsage: "FILE [KEYPATH]",
		Description: `Settles the conflict at KEYPATH of FILE, or all of FILE's conflicts
without KEYPATH, with one of --ours, --theirs, --base or --value JSON (with
no KEYPATH, --value replaces the whole document). A side on which the key
does not exist deletes it. Once nothing is left, merge --continue commits.
merge --verify later accepts what was settled at conflicted keys; a whole
document given with --value that also changes other keys fails it, as any
change the merge did not make.

Examples:
   aiwg-state resolve plan.json risk.level --theirs
   aiwg-state resolve plan.json owner --value '"ops"'
   aiwg-state resolve plan.json --ours          # every conflict of plan.json
   aiwg-state merge --continue`,
		Flags: append(writeFlags(),
			&cli.StringFlag{Name: "into", Usage: "the branch with the merge in progress (default: --branch, else HEAD)"},
			&cli.BoolFlag{Name: "ours", Usage: "keep the value of the branch merged into"},
			&cli.BoolFlag{Name: "theirs", Usage: "take the value of the branch merged in"},
			&cli.BoolFlag{Name: "base", Usage: "go back to the merge base's value"},
			&cli.StringFlag{Name: "value", Usage: "put this JSON there instead"},
		),
		Action: command(func(s *session) error {
			return runResolve(s.c.Context, s, resolveOptions{
				ValueSet: s.c.IsSet("value"),
				Value:    s.c.String("value"),
				Into:     s.c.String("into"),
			})
		}),
	}
}

// resolveOptions are the flags runResolve reads.
type resolveOptions struct {
	ValueSet bool   // --value was given
	Value    string // --value
	Into     string // --into
}

func runResolve(ctx context.Context, s *session, opts resolveOptions) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	var how merge.Resolution
	n := 0
	for _, side := range []string{"ours", "theirs", "base"} {
		if s.c.Bool(side) {
			how.Take = side
			n++
		}
	}
	if opts.ValueSet {
		how.Value = []byte(opts.Value)
		n++
	}
	if n != 1 {
		return usagef("resolve takes exactly one of --ours, --theirs, --base, --value JSON")
	}
	key := argAt(a, 1)
	wo := s.writeOptions()
	wo.Branch = opts.Into
	left, err := s.store.Merges().Resolve(ctx, a[0], key, how, wo)
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, map[string]any{"file": a[0], "key": key, "remaining_files": left})
	}
	if left == 0 {
		fmt.Fprintln(s.out, "resolved; no conflicts left: run aiwg-state merge --continue")
	} else {
		fmt.Fprintf(s.out, "resolved; %d file(s) still have conflicts\n", left)
	}
	return nil
}
