package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/lanes"
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
// merge's branch drawn beside it, as git log --graph --oneline draws it:
//
//	$ aiwg-state log --graph
//	*   c4 merge b into main
//	|\
//	| * b1 …
//	* |   c3 merge a into main
//	|\ \
//	| * | a1 …
//	| |/
//	* / c2 …
//	|/
//	* c1 …
//
// A merged branch's commits are its own first-parent line down to where
// it forked (what the merge brought: git log P1..P2 --first-parent);
// merges within it take one line each. Each line of history is a lane,
// laid out by package lanes as git lays it out. In a range
// A..B, what A has is left out on every lane, and a lane whose next
// commit A has ends. lo.Limit counts every commit drawn, as git log -N
// --graph does.
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
	g := &graph{s: s}
	drawn := 0
	more := func() bool { return limit == 0 || drawn < limit }
	for _, m := range main {
		if !more() {
			break
		}
		var parents []string
		if len(m.Parents) > 0 {
			if gone, err := excludedByRange(s, lo, m.Parents[0]); err != nil {
				return err
			} else if !gone {
				parents = append(parents, m.Parents[0])
			}
		}
		var side []*store.Mutation
		if len(m.Parents) > 1 {
			if side, err = sideBranch(ctx, s, lo, m); err != nil {
				return err
			}
			if len(side) > 0 {
				parents = append(parents, side[0].Commit)
			}
		}
		drawn++
		// As git does, the lines below a commit (a merge's fork, lanes
		// joining) are drawn even when the limit stops at it.
		g.commit(m, parents)
		for i, sm := range side {
			if !more() {
				break
			}
			var next []string
			if i+1 < len(side) {
				next = []string{side[i+1].Commit}
			} else if len(sm.Parents) > 0 {
				gone, err := excludedByRange(s, lo, sm.Parents[0])
				if err != nil {
					return err
				}
				if !gone {
					next = []string{sm.Parents[0]}
				}
			}
			drawn++
			g.commit(sm, next)
		}
	}
	return nil
}

// graph prints a lanes.Layout's lines.
type graph struct {
	s      *session
	layout lanes.Layout
}

func (g *graph) commit(m *store.Mutation, parents []string) {
	line, below := g.layout.Commit(m.Commit, parents)
	fmt.Fprint(g.s.out, g.s.paint(colorGraph, line[:len(line)-1])+" ")
	printMutationLine(g.s, m)
	for _, l := range below {
		fmt.Fprintln(g.s.out, g.s.paint(colorGraph, l))
	}
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
