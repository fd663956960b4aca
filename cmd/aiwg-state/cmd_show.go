package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/termtext"
	"github.com/aiwg/aiwg-state/store"
)

func newShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one mutation: its trailers and its diff",
		ArgsUsage: "[REV|mut-xxxxxxxx]",
		Description: `REV is a commit, branch, tag, HEAD~N or RFC 3339 time (default HEAD); a
mutation id is looked up in the changed-paths index among the commits
reachable from the branch.

Examples:
   aiwg-state show
   aiwg-state show HEAD~3 --json
   aiwg-state show mut-1a2b3c4d
   aiwg-state show --verify                        # with its signature: good, bad, none, unknown-key`,
		Flags: append(commonFlags(), verifyFlag(), colorFlag(), noPagerFlag()),
		Action: command(func(s *session) error {
			return runShow(s.c.Context, s, showOptions{
				Branch: s.c.String("branch"),
			})
		}),
	}
}

// showOptions are the flags runShow reads.
type showOptions struct {
	Branch string // --branch
}

func runShow(ctx context.Context, s *session, opts showOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	sigs, err := s.signatures()
	if err != nil {
		return err
	}
	rev := "HEAD"
	if len(a) == 1 {
		rev = a[0]
	}
	m, err := s.store.Show(ctx, rev, store.ReadOptions{Branch: opts.Branch})
	if err != nil {
		return err
	}
	if sigs != nil {
		if err := sigs.Mark(m); err != nil {
			return err
		}
	}
	d, err := s.store.Diff(ctx, store.DiffOptions{From: m.Commit})
	if err == nil {
		d.Files, err = s.readableDiff(ctx, d.Files)
	}
	if err != nil {
		return err
	}
	diffs := d.Files
	if s.json {
		return printJSON(s.out, map[string]any{"mutation": m, "diff": nonNil(diffs)})
	}
	defer s.page()()
	fmt.Fprintf(s.out, "%s\nagent  %s\ntime   %s\n", s.paint(colorCommit, "commit "+m.Commit), s.paint(colorAgent, m.Agent), m.Time.UTC().Format(time.RFC3339))
	if v := m.Signature; v != nil {
		fmt.Fprintf(s.out, "signature %s\n", signatureLine(v))
	}
	fmt.Fprintf(s.out, "\n    %s\n\n", termtext.Safe(m.Subject))
	for _, t := range m.Trailers {
		fmt.Fprintf(s.out, "    %s: %s\n", termtext.Safe(t.Key), termtext.Safe(t.Value))
	}
	fmt.Fprintln(s.out)
	return writeDiffs(s, diffs, "text")
}
