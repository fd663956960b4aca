package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
// as in git: a merge opens its branch's lane right of its own, shifting
// the lanes beyond it; lanes waiting for the same commit join where they
// meet, and a lane moves left into a gap one column a line. In a range
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

// graph draws lanes: lanes[k] is the commit column k waits for.
type graph struct {
	s      *session
	lanes  []string
	landed []bool // the columns a lane moved into on the line above, when it was a settling line
}

// commit draws m's line in its lane (a new lane at the right if none
// waits for it), then the merge's fork and the joins that follow:
// parents are the commits m's line goes on to, its first parent first.
func (g *graph) commit(m *store.Mutation, parents []string) {
	col := slices.Index(g.lanes, m.Commit)
	if col < 0 {
		g.lanes = append(g.lanes, m.Commit)
		col = len(g.lanes) - 1
	}
	before := len(g.lanes)
	var after []string
	after = append(after, g.lanes[:col]...)
	after = append(after, parents...)
	if len(parents) == 0 {
		after = append(after, "") // the lane ends here: a gap that closes below
	}
	after = append(after, g.lanes[col+1:]...)
	width := 2 * max(before, len(after))
	line := make([]byte, width)
	for i := range line {
		line[i] = ' '
	}
	for k := range g.lanes {
		line[2*k] = '|'
	}
	line[2*col] = '*'
	// A lane that came left on the line above and goes on left below
	// bends on the commit's line already, as git draws it: * /
	_, _, leaves := step(after)
	shift := len(after) - before
	for k := col + 1; k < before; k++ {
		if k < len(g.landed) && g.landed[k] && leaves[k+shift] {
			line[2*k] = '/'
		}
	}
	g.landed = nil
	fmt.Fprint(g.s.out, g.s.paint(colorGraph, string(line[:width-1]))+" ")
	printMutationLine(g.s, m)
	if len(parents) > 1 {
		// |\ \: the new lane forks right; those beyond shift one column.
		fork := make([]byte, 2*len(after))
		for i := range fork {
			fork[i] = ' '
		}
		for k := 0; k <= col; k++ {
			fork[2*k] = '|'
		}
		fork[2*col+1] = '\\'
		for k := col + 1; k < before; k++ {
			fork[2*k+1] = '\\'
		}
		g.emit(fork)
		g.landed = nil
	}
	g.lanes = after
	g.settle()
}

// settle closes gaps and joins neighbouring lanes that wait for the same
// commit, a column a line, as git draws them: |/ for a lane moving left.
// Lanes waiting for one commit with others between them stay apart until
// it is drawn, rather than cross.
func (g *graph) settle() {
	for {
		next, line, leaves := step(g.lanes)
		if !slices.Contains(leaves, true) || len(next) == 0 {
			g.lanes = next
			return
		}
		g.landed = make([]bool, len(next))
		for k, left := range leaves {
			if left && g.lanes[k] != "" {
				g.landed[k-1] = true
			}
		}
		g.lanes = next
		if !slices.Contains(line, '/') {
			// Only ended lanes at the right went: git draws no line.
			g.landed = nil
			continue
		}
		g.emit(line)
	}
}

// step is one line of settling: where each lane goes (one column left
// into a gap, or into its twin on its left), the line drawn, and which
// lanes left their column.
func step(lanes []string) (next []string, line []byte, leaves []bool) {
	line = make([]byte, 2*len(lanes))
	for i := range line {
		line[i] = ' '
	}
	leaves = make([]bool, len(lanes))
	for k, c := range lanes {
		switch {
		case c == "":
			leaves[k] = true
		case len(next) > 0 && next[len(next)-1] == c:
			line[2*k-1] = '/' // joins its twin
			leaves[k] = true
		case len(next) < k:
			line[2*k-1] = '/'
			next = append(next, c)
			leaves[k] = true
		default:
			line[2*k] = '|'
			next = append(next, c)
		}
	}
	return next, line, leaves
}

func (g *graph) emit(line []byte) {
	fmt.Fprintln(g.s.out, g.s.paint(colorGraph, strings.TrimRight(string(line), " ")))
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
