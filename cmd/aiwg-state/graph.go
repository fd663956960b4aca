package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/store"
)

// dashCount reads git log's -N (at most N commits).
func dashCount(a string) (int, bool) {
	if len(a) < 2 || a[0] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(a[1:])
	if err != nil || n < 0 || a[1] == '+' || a[1] == '-' {
		return 0, false
	}
	return n, true
}

// drawGraph prints the first-parent history from lo's revision with each
// merge's branch drawn beside it, as git log --graph --oneline draws a
// history whose branches are merged once each:
//
//   - c3 merge feature into main
//     |\
//     | * f2 …
//     | * f1 …
//   - | c2 …
//     |/
//   - c1 …
//
// A merged branch's commits are its own first-parent line down to where
// it forked (what the merge brought: git log P1..P2 --first-parent);
// merges within it take one line each. In a range A..B, what A has is
// left out on either line, and a merge whose first parent A has is drawn
// with its branch in the one column, as git draws it. lo.Limit counts
// every commit drawn, as git log -N --graph does.
func drawGraph(ctx context.Context, s *session, lo store.LogOptions) error {
	limit := lo.Limit
	lo.Limit = 0
	var main []*store.Mutation
	err := s.store.Log(ctx, lo, func(m *store.Mutation) bool {
		main = append(main, m)
		return limit == 0 || len(main) < limit
	})
	if err != nil {
		return err
	}
	drawn := 0
	more := func() bool { return limit == 0 || drawn < limit }
	line := func(prefix string, m *store.Mutation) {
		fmt.Fprint(s.out, s.paint(colorGraph, prefix[:len(prefix)-1])+" ")
		printMutationLine(s, m)
		drawn++
	}
	open := false // a merged branch's lane is drawn right of the main line
	fork := ""    // the commit where that branch left the main line
	for _, m := range main {
		if !more() {
			break
		}
		if open && m.Commit == fork {
			fmt.Fprintln(s.out, s.paint(colorGraph, "|/"))
			open = false
		}
		if open || len(m.Parents) < 2 {
			if open {
				line("* | ", m)
			} else {
				line("* ", m)
			}
			continue
		}
		side, err := sideBranch(ctx, s, lo, m)
		if err != nil {
			return err
		}
		if len(side) == 0 {
			line("* ", m)
			continue
		}
		if gone, err := excludedByRange(s, lo, m.Parents[0]); err != nil {
			return err
		} else if gone {
			// The range leaves out the merge's first parent: as in
			// git, the merge has one parent to draw, and its branch
			// goes on in the same column.
			line("* ", m)
			for _, sm := range side {
				if !more() {
					break
				}
				line("* ", sm)
			}
			continue
		}
		line("*   ", m)
		// As git does, the merge's lines are drawn even when the
		// limit stops at the merge itself.
		fmt.Fprintln(s.out, s.paint(colorGraph, `|\`))
		for _, sm := range side {
			if !more() {
				break
			}
			line("| * ", sm)
		}
		open, fork = true, ""
		if last := side[len(side)-1]; len(last.Parents) > 0 {
			fork = last.Parents[0]
		}
	}
	return nil
}

// sideBranch is what merge m brought along its second parent's first
// parents: the commits its first parent lacks.
func sideBranch(ctx context.Context, s *session, lo store.LogOptions, m *store.Mutation) ([]*store.Mutation, error) {
	var side []*store.Mutation
	err := s.store.Log(ctx, store.LogOptions{ReadOptions: store.ReadOptions{At: m.Parents[1], Branch: lo.Branch}, Exclude: m.Parents[0]}, func(sm *store.Mutation) bool {
		side = append(side, sm)
		return true
	})
	if err != nil || lo.Exclude == "" {
		return side, err
	}
	// In a range A..B, what A has is left out on the side too.
	kept := side[:0]
	for _, sm := range side {
		gone, err := excludedByRange(s, lo, sm.Commit)
		if err != nil {
			return nil, err
		}
		if !gone {
			kept = append(kept, sm)
		}
	}
	return kept, nil
}

// excludedByRange reports whether the A of a range A..B reaches commit.
func excludedByRange(s *session, lo store.LogOptions, commit string) (bool, error) {
	if lo.Exclude == "" {
		return false, nil
	}
	x, err := s.store.Resolve(lo.Exclude, lo.Branch)
	if err != nil {
		return false, err
	}
	return s.store.Repo().IsAncestor(plumbing.NewHash(commit), x)
}
