package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newBisectCommand() *cli.Command {
	return &cli.Command{
		Name:      "bisect",
		Usage:     "find the first mutation at which a predicate on the state became true",
		ArgsUsage: " ",
		Description: `Binary search along first parents between --good (where the predicate is
false; default: before the first commit) and --bad (where it is true;
default: HEAD): about log2(n) state reads for n commits.

A predicate is FILE#KEYPATH OP VALUE with OP one of == != < > <= >= and
VALUE a JSON literal (quote strings), or FILE#KEYPATH exists, or FILE
exists; a leading ! negates. A comparison with a missing key is false;
< and > compare numbers.

Examples:
   aiwg-state bisect --pred 'docs/plan.json#risk.level == "high"'
   aiwg-state bisect --pred 'budget.json#spent > 1000' --good v1 --bad main
   aiwg-state bisect --pred 'notes.json exists' --json`,
		Flags: append(commonFlags(),
			&cli.StringFlag{Name: "pred", Usage: "the predicate (see above)", Required: true},
			&cli.StringFlag{Name: "good", Usage: "a revision where the predicate is false (default: before the first commit)"},
			&cli.StringFlag{Name: "bad", Usage: "a revision where the predicate is true (default: HEAD)"},
		),
		Action: command(func(s *session) error {
			return runBisect(s.c.Context, s, bisectOptions{
				Pred:   s.c.String("pred"),
				Good:   s.c.String("good"),
				Bad:    s.c.String("bad"),
				Branch: s.c.String("branch"),
			})
		}),
	}
}

// bisectOptions are the flags runBisect reads.
type bisectOptions struct {
	Pred   string // --pred
	Good   string // --good
	Bad    string // --bad
	Branch string // --branch
}

func runBisect(ctx context.Context, s *session, opts bisectOptions) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	res, err := s.store.Bisect(ctx, store.BisectOptions{Predicate: opts.Pred, Good: opts.Good, Bad: opts.Bad, Branch: opts.Branch})
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, res)
	}
	fmt.Fprintf(s.out, "first mutation where %s (%d states read):\n", res.Predicate, res.Reads)
	printMutationLine(s, res.Mutation)
	return nil
}
