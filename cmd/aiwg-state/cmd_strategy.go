package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

func newStrategyCommand() *cli.Command {
	return &cli.Command{
		Name:  "strategy",
		Usage: "read or change the merge strategies of .gitattributes (one commit per change)",
		Description: `Merges (aiwg-state merge, pull, sync, integrate, and a plain git merge
in a clone with the drivers installed) settle each JSON document with the
strategy .gitattributes gives its path; the last line matching a path
decides. Objects always merge key by key; a strategy decides only what
cannot be combined. Strategies: ` + strings.Join(strategyNames(), ", ") + `.

Examples:
   aiwg-state strategy ls
   aiwg-state strategy set 'counters/*.json' sum
   aiwg-state strategy set plan.json merge-objects --keys notes:merge-arrays --fallback last-write-wins
   aiwg-state strategy explain plan.json#risk.level`,
		Subcommands: []*cli.Command{
			{
				Name: "ls", Usage: "list the lines of .gitattributes that assign strategies, in order (the last match wins)",
				Description: `Each line: its number in .gitattributes, the pattern, and the strategy,
keys and fallback it gives.

Examples:
   aiwg-state strategy ls
   aiwg-state strategy ls --at HEAD~3 --json`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runStrategyLs(s.c.Context, s) }),
			},
			{
				Name: "set", Usage: "make STRATEGY the merge strategy of the paths PATTERN matches (one commit editing .gitattributes)",
				ArgsUsage: "PATTERN STRATEGY",
				Description: `PATTERN is a gitattributes(5) pattern: plan.json, 'notes/*.json',
'state/**/*.json'. A line with exactly this pattern is replaced where it
stands; a new one goes at the end of .gitattributes, where it wins over
every line before it for the paths it matches. The line says the whole
rule: --keys and --fallback left out unset those of earlier lines.

--keys gives object keys (at any depth) strategies of their own;
--fallback settles what merge-objects or merge-arrays cannot (without it,
a conflict). An unknown strategy is refused (exit 2).

A clone picks the change up with its next pull; the drivers
install-drivers registered need nothing more.

Examples:
   aiwg-state strategy set 'counters/*.json' sum
   aiwg-state strategy set plan.json merge-objects --keys notes:merge-arrays,seen:max
   aiwg-state strategy set 'status/*.json' merge-objects --fallback last-write-wins`,
				Flags: append(writeFlags(),
					&cli.StringFlag{Name: "keys", Usage: "KEY:STRATEGY,… strategies of object keys, at any depth"},
					&cli.StringFlag{Name: "fallback", Usage: "what settles a clash merge-objects or merge-arrays cannot (default: a conflict)"},
				),
				Action: command(func(s *session) error {
					return runStrategySet(s.c.Context, s, strategySetOptions{
						Keys:     s.c.String("keys"),
						Fallback: s.c.String("fallback"),
					})
				}),
			},
			{
				Name: "explain", Usage: "say which strategy settles a clash at FILE#KEY, and which lines of .gitattributes decide it",
				ArgsUsage: "FILE[#KEY]",
				Description: `Examples:
   aiwg-state strategy explain plan.json
   aiwg-state strategy explain state/run.json#NOTES.3 --json`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runStrategyExplain(s.c.Context, s) }),
			},
		},
	}
}

func runStrategyLs(ctx context.Context, s *session) error {
	if _, err := args(s.c, 0, 0); err != nil {
		return err
	}
	rules, err := s.store.Merges().Strategies(ctx, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, nonNil(rules))
	}
	for _, r := range rules {
		fmt.Fprintf(s.out, "%3d  %-24s %s\n", r.Line, r.Pattern, describeRule(r))
	}
	return nil
}

// strategySetOptions are the flags runStrategySet reads.
type strategySetOptions struct {
	Keys     string // --keys
	Fallback string // --fallback
}

func runStrategySet(ctx context.Context, s *session, opts strategySetOptions) error {
	a, err := args(s.c, 2, 2)
	if err != nil {
		return err
	}
	mo, err := strategyOptions(a[1], opts.Keys, opts.Fallback)
	if err != nil {
		return err
	}
	return s.report(s.store.Merges().SetStrategy(ctx, a[0], mo, s.writeOptions()))
}

func runStrategyExplain(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	file, key, _ := strings.Cut(a[0], "#")
	e, err := s.store.Merges().ExplainStrategy(ctx, file, key, s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, e)
	}
	printExplanation(s, e)
	return nil
}
