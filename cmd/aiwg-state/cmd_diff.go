package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/store"
)

func newDiffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "show what changed, key by key",
		ArgsUsage: "[REV1 [REV2]] [FILE [KEYPATH]]",
		Description: `With no revision: the last mutation. With one: that commit against its
parent, the change REV made, as git show REV (not REV to HEAD, as git diff
REV). With two: REV1 to REV2. FILE and KEYPATH narrow the diff.

Formats: human (colour on a terminal; NO_COLOR honoured), --json,
--format patch (RFC 6902 JSON Patch per file), --format markdown (for a
pull-request review). A file moved whole shows as one rename; its patch
entry is {"file", "from", "patch": []}, since a JSON Patch acts on one
document and cannot move it between files.

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
			return runDiff(s.c.Context, s, diffOptions{
				Format: s.c.String("format"),
			})
		}),
	}
}

// diffOptions are the flags runDiff reads.
type diffOptions struct {
	Format string // --format
}

func runDiff(ctx context.Context, s *session, opts diffOptions) error {
	a, err := args(s.c, 0, 4)
	if err != nil {
		return err
	}
	format := opts.Format
	if !slices.Contains([]string{"text", "json", "patch", "markdown"}, format) {
		return usagef("unknown --format %q: want text, json, patch or markdown", format)
	}
	if slices.Contains(a, "") {
		// An unset shell variable must not widen the diff to
		// every file, or every key.
		return usagef("diff: an empty argument (want REV, FILE or KEYPATH)")
	}
	o := store.DiffOptions{}
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
	d, err := s.store.Diff(ctx, o)
	if err != nil {
		return err
	}
	diffs := d.Files
	if s.json {
		format = "json"
	}
	if format == "patch" && o.File != "" {
		// One document: the bare RFC 6902 patch, ready for any
		// JSON Patch tool.
		ops := []jsondiff.Op{}
		if len(diffs) == 1 {
			if ops, err = diffs[0].Patch(o.Key); err != nil {
				return err
			}
			if d := diffs[0]; d.Status == "renamed" {
				s.warn(fmt.Sprintf("%s was moved whole to %s: a JSON Patch acts on one document and cannot say so", d.From, d.File))
			}
		}
		return printJSON(s.out, ops)
	}
	return writeDiffs(s, diffs, format)
}
