package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
)

func historyCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "log",
			Usage:     "list mutations, newest first",
			ArgsUsage: "[FILE]",
			Description: `Each line: commit, time (UTC), agent, operation and path, mutation id.
With FILE, only the commits that changed that file (as git log
--first-parent -- FILE).

Examples:
   aiwg-state log
   aiwg-state log plan.json -n 5
   aiwg-state log --agent planner --since 2026-11-01T00:00:00Z
   aiwg-state log --op delete --json`,
			Flags: append(readFlags(),
				&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
				&cli.StringFlag{Name: "since", Usage: "only mutations at or after this RFC 3339 time"},
				&cli.StringFlag{Name: "until", Usage: "only mutations at or before this RFC 3339 time"},
				&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename"},
				&cli.IntFlag{Name: "n", Usage: "at most this many mutations"},
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				lo := aiwgstate.LogOptions{ReadOptions: s.readOptions(), Agent: s.c.String("agent"), Op: s.c.String("op"), Limit: s.c.Int("n")}
				if len(a) == 1 {
					lo.File = a[0]
				}
				if lo.Since, err = parseTime("since", s.c.String("since")); err != nil {
					return err
				}
				if lo.Until, err = parseTime("until", s.c.String("until")); err != nil {
					return err
				}
				var all []*aiwgstate.Mutation
				err = s.store.Log(s.c.Context, lo, func(m *aiwgstate.Mutation) bool {
					if s.json {
						all = append(all, m)
						return true
					}
					printMutationLine(s, m)
					return true
				})
				if err != nil {
					return err
				}
				if s.json {
					if all == nil {
						all = []*aiwgstate.Mutation{}
					}
					return printJSON(s.out, all)
				}
				return nil
			}),
		},
		{
			Name:      "diff",
			Usage:     "show what changed, key by key",
			ArgsUsage: "[REV1 [REV2]] [FILE [KEYPATH]]",
			Description: `With no revision: the last mutation. With one: that commit against its
parent. With two: REV1 to REV2. FILE and KEYPATH narrow the diff.

Formats: human (colour on a terminal; NO_COLOR honoured), --json,
--format patch (RFC 6902 JSON Patch per file), --format markdown (for a
pull-request review).

Examples:
   aiwg-state diff
   aiwg-state diff HEAD~5 HEAD plan.json
   aiwg-state diff main agents/planner/main plan.json risk
   aiwg-state diff --format markdown HEAD~3 HEAD`,
			Flags: append(commonFlags(),
				&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json, patch or markdown"},
				&cli.BoolFlag{Name: "color", Usage: "force colour in text output"},
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 4)
				if err != nil {
					return err
				}
				o := aiwgstate.DiffOptions{}
				var revs []string
				for len(a) > 0 && len(revs) < 2 && !looksLikeFile(a[0]) {
					revs = append(revs, a[0])
					a = a[1:]
				}
				if len(revs) > 0 {
					o.From = revs[0]
				}
				if len(revs) > 1 {
					o.To = revs[1]
				}
				if len(a) > 0 {
					o.File = a[0]
				}
				if len(a) > 1 {
					o.Key = a[1]
				}
				if len(a) > 2 {
					return usagef("diff: too many arguments")
				}
				diffs, _, _, err := s.store.Diff(s.c.Context, o)
				if err != nil {
					return err
				}
				format := s.c.String("format")
				if s.json {
					format = "json"
				}
				return writeDiffs(s, diffs, format)
			}),
		},
		{
			Name:      "show",
			Usage:     "show one mutation: its trailers and its diff",
			ArgsUsage: "[REV]",
			Flags:     commonFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				rev := "HEAD"
				if len(a) == 1 {
					rev = a[0]
				}
				m, err := s.store.Show(s.c.Context, rev, s.c.String("branch"))
				if err != nil {
					return err
				}
				diffs, _, _, err := s.store.Diff(s.c.Context, aiwgstate.DiffOptions{From: m.Commit})
				if err != nil {
					return err
				}
				if s.json {
					return printJSON(s.out, map[string]any{"mutation": m, "diff": nonNil(diffs)})
				}
				fmt.Fprintf(s.out, "commit %s\nagent  %s\ntime   %s\n\n    %s\n\n", m.Commit, m.Agent, m.Time.UTC().Format(time.RFC3339), m.Subject)
				for _, t := range m.Trailers {
					fmt.Fprintf(s.out, "    %s: %s\n", t.Key, t.Value)
				}
				fmt.Fprintln(s.out)
				return writeDiffs(s, diffs, "text")
			}),
		},
	}
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// looksLikeFile tells a document path from a revision in diff's arguments.
func looksLikeFile(a string) bool {
	return strings.HasSuffix(a, ".json") || strings.Contains(a, ".json#")
}

func writeDiffs(s *session, diffs []aiwgstate.FileDiff, format string) error {
	switch format {
	case "json":
		return printJSON(s.out, nonNil(diffs))
	case "patch":
		out := make([]map[string]any, 0, len(diffs))
		for _, d := range diffs {
			out = append(out, map[string]any{"file": d.File, "patch": nonNil(jsondiff.Patch(d.Old, d.New))})
		}
		return printJSON(s.out, out)
	case "markdown":
		for _, d := range diffs {
			if err := jsondiff.WriteMarkdown(s.out, d.File, d.Changes); err != nil {
				return err
			}
		}
		return nil
	case "text":
		color := s.c.Bool("color") || (isTerminal(s.out) && os.Getenv("NO_COLOR") == "")
		for _, d := range diffs {
			if d.Status == "binary" {
				fmt.Fprintf(s.out, "%s: not JSON, changed\n", d.File)
				continue
			}
			if err := jsondiff.WriteText(s.out, d.File, d.Changes, jsondiff.TextOptions{Color: color}); err != nil {
				return err
			}
		}
		return nil
	}
	return usagef("unknown --format %q: want text, json, patch or markdown", format)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func printMutationLine(s *session, m *aiwgstate.Mutation) {
	what := m.Subject
	id := m.MutationID
	if id == "" {
		id = "-"
	}
	fmt.Fprintf(s.out, "%s  %s  %-12s  %s  %s\n", shortHash(m.Commit), m.Time.UTC().Format("2006-01-02 15:04:05"), m.Agent, id, what)
}

func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, usagef("--%s: want an RFC 3339 time like 2026-11-22T10:00:00Z, got %q", flag, v)
	}
	return t, nil
}
