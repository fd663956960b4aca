package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/termtext"
	"github.com/aiwg/aiwg-state/store"
)

func newBlameCommand() *cli.Command {
	return &cli.Command{
		Name:      "blame",
		Usage:     "for every leaf key of a document, the mutation that last set it",
		ArgsUsage: "FILE",
		Description: `Each line: commit, time (UTC), agent, mutation id, key path = value, for
every leaf (scalar, empty object or empty array) of the document at --at
(default HEAD), along first parents: a key merged in from a branch is the
merge's. --all-parents follows such a key into the branch, as git blame
does, naming the agent that set it there (a value no side held, a
resolved conflict, stays the merge's). A key path is a position: inserting
at the front of an array changes every index after it. --lines blames the
stored text line by line instead, like git blame.

Examples:
   aiwg-state blame plan.json
   aiwg-state blame plan.json --all-parents
   aiwg-state blame plan.json --at HEAD~10 --json
   aiwg-state blame plan.json --lines
   aiwg-state blame plan.json --verify            # and whether each setter's commit is signed`,
		Flags: append(readFlags(),
			&cli.BoolFlag{Name: "lines", Usage: "blame lines of the stored text, like git blame"},
			&cli.BoolFlag{Name: "all-parents", Usage: "follow keys merged in from a branch into that branch's history"},
			verifyFlag(),
			colorFlag(), noPagerFlag(),
		),
		Action: command(func(s *session) error {
			return runBlame(s.c.Context, s, blameOptions{
				Lines:      s.c.Bool("lines"),
				AllParents: s.c.Bool("all-parents"),
			})
		}),
	}
}

// blameOptions are the flags runBlame reads.
type blameOptions struct {
	Lines      bool // --lines
	AllParents bool // --all-parents
}

func runBlame(ctx context.Context, s *session, opts blameOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	sigs, err := s.signatures()
	if err != nil {
		return err
	}
	if opts.Lines {
		if opts.AllParents {
			return usagef("--all-parents blames keys; --lines blames text along first parents")
		}
		lines, err := s.store.BlameLines(ctx, a[0], s.readOptions())
		if err != nil {
			return err
		}
		for i := range lines {
			if lines[i].Signature, err = verifyCommit(sigs, lines[i].Commit); err != nil {
				return err
			}
		}
		if s.json {
			return printJSON(s.out, nonNil(lines))
		}
		defer s.page()()
		width := len(fmt.Sprint(len(lines)))
		for _, l := range lines {
			fmt.Fprintf(s.out, "%s (%s %s%s %*d) %s\n", boundaryMark(s, l.Commit, l.ShallowBoundary), s.paint(colorAgent, agentColumn(l.Agent)), stamp(l.Time), sigColumn(l.Signature), width, l.Line, termtext.Safe(l.Text))
		}
		return nil
	}
	if err := s.mayRead(ctx, a[0]); err != nil {
		return err
	}
	entries, err := s.store.Blame(ctx, a[0], s.readOptions(), store.BlameOptions{AllParents: opts.AllParents})
	if err != nil {
		return err
	}
	for i := range entries {
		if entries[i].Signature, err = verifyCommit(sigs, entries[i].Commit); err != nil {
			return err
		}
	}
	if s.json {
		return printJSON(s.out, nonNil(entries))
	}
	defer s.page()()
	for _, e := range entries {
		path := e.Path
		if path == "" {
			path = "(root)"
		}
		fmt.Fprintf(s.out, "%s  %s  %s%s  %s  %s = %s\n", boundaryMark(s, e.Commit, e.ShallowBoundary), stamp(e.Time), s.paint(colorAgent, agentColumn(e.Agent)), sigColumn(e.Signature), s.paint(colorDim, dashIfEmpty(e.MutationID)), termtext.Safe(path), termtext.Safe(string(e.Value)))
	}
	return nil
}
