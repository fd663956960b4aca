package main

import (
	"context"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/review"
)

func newReviewCommand() *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "report on a branch before merging it: its mutations, its changes, what a merge would do, the policy and schema verdicts",
		ArgsUsage: "BASE...HEAD | BASE HEAD",
		Description: `One report of HEAD (a branch under review) for merging into BASE:

- each mutation HEAD has that BASE has not: commit, time, agent,
  mutation id, what it did and its trailers (git log BASE..HEAD);
- the net key-level change since the merge base (diff BASE...HEAD);
- what a merge would do: a dry run of merge HEAD --into BASE, with the
  strategy that rules each key HEAD changed in BASE's .gitattributes,
  whether the merge takes HEAD's change, settles a key both sides
  changed, or leaves it a conflict (BASE must be a local branch);
- the access policy's verdict on every commit a merge brings, as the
  server's hook gives it (policy check BASE..HEAD), under BASE's policy
  unless --policy-from says otherwise;
- the documents HEAD changed that break their schema.

Nothing is written. The exit code is 0 when the report was made,
whatever it says; "ok" in --json is true when nothing stands in the way.
--format markdown renders it for a pull-request comment: everything an
agent wrote is escaped to show literally.

Examples:
   aiwg-state review main...agents/planner/main
   aiwg-state review main...feature --format markdown > comment.md
   aiwg-state review origin/main...HEAD --json | jq .ok`,
		Flags: append(append(commonFlags(), peopleFlags()...),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or markdown (or --json)"},
			&cli.StringFlag{Name: "policy-from", Usage: "the revision whose policy is in force (default: BASE)"},
			&cli.IntFlag{Name: "limit", Value: review.DefaultLimit, Usage: "list at most this many mutations"},
		),
		Action: command(func(s *session) error {
			return runReview(s.c.Context, s, reviewOptions{
				Format:     s.c.String("format"),
				PolicyFrom: s.c.String("policy-from"),
				Limit:      s.c.Int("limit"),
			})
		}),
	}
}

// reviewOptions are the flags runReview reads.
type reviewOptions struct {
	Format     string // --format
	PolicyFrom string // --policy-from
	Limit      int    // --limit
}

func runReview(ctx context.Context, s *session, opts reviewOptions) error {
	a, err := args(s.c, 1, 2)
	if err != nil {
		return err
	}
	if !slices.Contains([]string{"text", "markdown"}, opts.Format) {
		return usagef("unknown --format %q: want text or markdown (or --json)", opts.Format)
	}
	if opts.Limit < 1 {
		return usagef("--limit %d: want at least 1", opts.Limit)
	}
	base, head := argAt(a, 0), argAt(a, 1)
	if len(a) == 1 {
		r, ok := parseRange(a[0])
		if !ok || !r.Symmetric {
			return usagef("review takes BASE...HEAD (what HEAD changed since it forked from BASE), or BASE HEAD; got %q", a[0])
		}
		base, head = r.From, r.To
	}
	if base == "" || head == "" {
		return usagef("review: an empty revision (an unset variable?)")
	}
	rep, err := review.Branch(ctx, s.store, base, head, review.Options{Branch: s.c.String("branch"), PolicyFrom: opts.PolicyFrom, Limit: opts.Limit})
	if err != nil {
		return err
	}
	defer s.page()()
	switch {
	case s.json:
		return printJSON(s.out, rep)
	case opts.Format == "markdown":
		return rep.WriteMarkdown(s.out)
	}
	return rep.WriteText(s.out, review.TextOptions{Color: s.colored})
}
