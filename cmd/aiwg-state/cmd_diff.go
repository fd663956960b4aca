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
		ArgsUsage: "[REV1 [REV2] | A..B | A...B] [FILE [KEYPATH]]",
		Description: `With no revision: the last mutation. With one: that commit against its
parent, the change REV made, as git show REV (not REV to HEAD, as git diff
REV). With two: REV1 to REV2. FILE and KEYPATH narrow the diff.

Ranges as git reads them: A..B is A to B; A...B is what B changed since
its merge base with A, leaving out what A's side did meanwhile (an
empty side is HEAD). Two branch names (diff main agents/planner/main)
compare as A...B: other agents' later work on A would otherwise show as
B "reverting" it. A note on stderr says so when the two differ;
--no-merge-base compares the two heads themselves.

Formats: human (colour and a pager on a terminal, see --color and
--no-pager; NO_COLOR honoured), --json,
--format patch (RFC 6902 JSON Patch per file), --format markdown (for a
pull-request review). A file moved whole shows as one rename; its patch
entry is {"file", "from", "patch": []}, since a JSON Patch acts on one
document and cannot move it between files.

Examples:
   aiwg-state diff
   aiwg-state diff HEAD~5 HEAD plan.json
   aiwg-state diff main agents/planner/main plan.json risk
   aiwg-state diff main...agents/planner/main --format markdown
   aiwg-state diff --no-merge-base main agents/planner/main
   aiwg-state diff --format markdown HEAD~3 HEAD`,
		Flags: append(append(commonFlags(), peopleFlags()...),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json, patch or markdown"},
			&cli.BoolFlag{Name: "no-merge-base", Usage: "with two branches, compare their heads, not the second with the merge base"},
		),
		Action: command(func(s *session) error {
			return runDiff(s.c.Context, s, diffOptions{
				Format:      s.c.String("format"),
				NoMergeBase: s.c.Bool("no-merge-base"),
			})
		}),
	}
}

// diffOptions are the flags runDiff reads.
type diffOptions struct {
	Format      string // --format
	NoMergeBase bool   // --no-merge-base
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
	if r, ok := parseRange(o.From); ok {
		if len(revs) > 1 {
			return usagef("diff: a range (%s) takes no second revision, got %q", o.From, revs[1])
		}
		o.From, o.To, o.MergeBase = r.From, r.To, r.Symmetric
	}
	if opts.NoMergeBase && o.MergeBase {
		return usagef("diff --no-merge-base: %s...%s asks for the merge base; write %s..%s for the heads", o.From, o.To, o.From, o.To)
	}
	twoBranches := len(revs) == 2 && !opts.NoMergeBase && s.isBranch(o.From) && s.isBranch(o.To)
	if twoBranches {
		o.MergeBase = true
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
	if o.File != "" {
		if err := s.mayRead(ctx, o.File); err != nil {
			return err
		}
	}
	d, err := s.store.Diff(ctx, o)
	if err == nil {
		d.Files, err = s.readableDiff(ctx, d.Files)
	}
	if err != nil {
		return err
	}
	if len(d.MergeBases) > 1 {
		s.warn(fmt.Sprintf("%s and %s have %d merge bases; comparing with the newest, %s", o.From, o.To, len(d.MergeBases), shortHash(d.From)))
	}
	if twoBranches {
		if head, err := s.store.Resolve(o.From, ""); err == nil && head.String() != d.From {
			s.note(fmt.Sprintf("comparing %s with its merge base with %s (%s), as diff %s...%s: what %s changed since it forked; --no-merge-base compares the two heads", o.To, o.From, shortHash(d.From), o.From, o.To, o.To),
				map[string]any{"merge_base": d.From, "from": o.From, "to": o.To})
		}
	}
	diffs := d.Files
	if s.json {
		format = "json"
	}
	if format == "text" {
		defer s.page()()
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
