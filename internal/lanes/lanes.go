// Package lanes lays out history as git log --graph --oneline draws it:
// each line of history a lane, a merge opening its branch's lane right of
// its own and shifting those beyond it, lanes that wait for the same
// commit joining where they meet (|/), and a lane moving left into a gap
// one column a line. The command line's log --graph and the review app's
// history page draw with it, so both show every merged branch, however
// many are open at once, in the shape git gives the same history.
package lanes

import (
	"slices"
	"strings"
)

// Layout is the lanes open so far; the zero value has none.
type Layout struct {
	lanes  []string // the commit each column waits for; "" is a gap
	landed []bool   // columns a lane moved into on the line above, when that was a settling line
}

// Resume is a layout whose columns wait for these commits, as Open
// returned them at the end of an earlier part (the previous page).
func Resume(open []string) *Layout {
	return &Layout{lanes: slices.Clone(open)}
}

// Open is the commits the columns wait for, left to right.
func (l *Layout) Open() []string { return slices.Clone(l.lanes) }

// Commit lays out one commit: its line's graph (padded to where its text
// starts, as git pads a merge's line) and the lines drawn below it before
// the next commit (a merge's |\ fork, lanes joining). parents are the
// commits its lane goes on to, its first parent first: none ends the
// lane, two open a new one.
func (l *Layout) Commit(commit string, parents []string) (line string, below []string) {
	col := slices.Index(l.lanes, commit)
	if col < 0 {
		l.lanes = append(l.lanes, commit)
		col = len(l.lanes) - 1
	}
	before := len(l.lanes)
	var after []string
	after = append(after, l.lanes[:col]...)
	after = append(after, parents...)
	if len(parents) == 0 {
		after = append(after, "") // the lane ends here: a gap that closes below
	}
	after = append(after, l.lanes[col+1:]...)
	width := 2 * max(before, len(after))
	b := blank(width)
	for k := range l.lanes {
		b[2*k] = '|'
	}
	b[2*col] = '*'
	// A lane that came left on the line above and goes on left below
	// bends on the commit's line already, as git draws it: * /
	_, _, leaves := step(after)
	shift := len(after) - before
	for k := col + 1; k < before; k++ {
		if k < len(l.landed) && l.landed[k] && leaves[k+shift] {
			b[2*k] = '/'
		}
	}
	l.landed = nil
	line = string(b[:width-1]) + " "
	if len(parents) > 1 {
		// |\ \: the new lane forks right; those beyond shift one column.
		fork := blank(2 * len(after))
		for k := 0; k <= col; k++ {
			fork[2*k] = '|'
		}
		fork[2*col+1] = '\\'
		for k := col + 1; k < before; k++ {
			fork[2*k+1] = '\\'
		}
		below = append(below, trim(fork))
	}
	l.lanes = after
	return line, append(below, l.settle()...)
}

// settle closes gaps and joins neighbouring lanes that wait for the same
// commit, a column a line. Lanes waiting for one commit with others
// between them stay apart until it is drawn, rather than cross.
func (l *Layout) settle() []string {
	var lines []string
	for {
		next, line, leaves := step(l.lanes)
		if !slices.Contains(leaves, true) || len(next) == 0 {
			l.lanes = next
			return lines
		}
		l.landed = make([]bool, len(next))
		for k, left := range leaves {
			if left && l.lanes[k] != "" {
				l.landed[k-1] = true
			}
		}
		l.lanes = next
		if !slices.Contains(line, '/') {
			// Only ended lanes at the right went: git draws no line.
			l.landed = nil
			continue
		}
		lines = append(lines, trim(line))
	}
}

// step is one line of settling: where each lane goes (one column left
// into a gap, or into its twin on its left), the line drawn, and which
// lanes left their column.
func step(lanes []string) (next []string, line []byte, leaves []bool) {
	line = blank(2 * len(lanes))
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

func blank(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return b
}

func trim(b []byte) string { return strings.TrimRight(string(b), " ") }
