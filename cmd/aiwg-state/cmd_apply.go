package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newApplyCommand() *cli.Command {
	return &cli.Command{
		Name:      "apply",
		Usage:     "apply JSON Lines of operations as one commit, all or nothing",
		ArgsUsage: "[FILE|-]",
		Description: `Each line is one operation:
   {"op":"set","file":"plan.json","path":"risk.level","value":"high"}
   {"op":"put","file":"b.json","value":{"x":1}}
   {"op":"del","file":"plan.json","path":"draft"}      # no path: the file
   {"op":"mv","file":"b.json","to":"c.json"}
All lines land in one commit, or none does (a bad line changes nothing).
--commit-each writes one commit per line instead, stopping at the first
failure. Blank lines and lines starting with # are skipped.

Examples:
   aiwg-state apply ops.jsonl --agent importer
   generate-ops | aiwg-state apply - --commit-each`,
		Flags: append(writeFlags(), &cli.BoolFlag{Name: "commit-each", Usage: "one commit per operation"}),
		Action: command(func(s *session) error {
			return runApply(s.c.Context, s, applyOptions{
				CommitEach: s.c.Bool("commit-each"),
			})
		}),
	}
}

// applyOptions are the flags runApply reads.
type applyOptions struct {
	CommitEach bool // --commit-each
}

func runApply(ctx context.Context, s *session, opts applyOptions) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	data, err := readFileArg(s.c, argAt(append(a, "-"), 0))
	if err != nil {
		return err
	}
	ops, err := store.ReadOps(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if !opts.CommitEach {
		return s.report(s.store.Apply(ctx, ops, s.writeOptions()))
	}
	for i, op := range ops {
		m, err := s.store.Apply(ctx, []store.Op{op}, s.writeOptions())
		if err != nil && !errors.Is(err, store.ErrNoChange) {
			return fmt.Errorf("line %d: %w (the %d lines before it were committed)", i+1, err, i)
		}
		if err := s.report(m, err); err != nil {
			return err
		}
	}
	return nil
}
