package jsonmerge

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownStrategy is returned by ParseStrategy for a name that is not one
// of the resolver strategies. Callers map it to the usage exit code.
var ErrUnknownStrategy = errors.New("unknown merge strategy")

// Strategy names how a clash at a key path is settled. The names are the
// resolver names of the swarm shared state specification plus Max, Sum and Manual ("conflict"); they are the
// suffixes of the git merge drivers (merge=aiwg-<strategy>).
type Strategy string

const (
	LastWriteWins      Strategy = "last-write-wins"
	FirstWriteWins     Strategy = "first-write-wins"
	MergeObjects       Strategy = "merge-objects"
	MergeArrays        Strategy = "merge-arrays"
	HigherPriorityWins Strategy = "higher-priority-wins"
	// Max keeps the larger value: numbers numerically, true over false,
	// strings by byte order. Counters (LAST-SEEN-IDX) and sticky flags
	// (SEEN) only grow, so the larger side is the one that saw more.
	Max Strategy = "max"
	// Sum adds both sides' changes to a number: base + (ours - base) +
	// (theirs - base), an absent base counting as 0, so a counter that
	// agents increment on their branches (the swarm shared state specification's metrics) keeps every
	// increment, where max or merge-objects would keep one. Unlike the
	// others it applies even when both sides made the same change (both
	// added one: two), as the strategy of a file or of a key; as a
	// Fallback it only sees clashes, so there the same change counts once.
	// A value that is not a number on every side present is a conflict,
	// as are numbers whose exponent passes ±1000 (kept exact, they would
	// be unboundedly long). git does not run a merge driver when both
	// sides' files are identical, so under plain git merge a file changed
	// identically on both sides keeps one change; aiwg-state merge sums it.
	Sum Strategy = "sum"
	// Manual never settles a clash; it records a Conflict for someone to
	// resolve. (Its name is "conflict"; the Go name differs only because
	// Conflict is the record type.)
	Manual Strategy = "conflict"
)

// Strategies lists every strategy, in the order they are documented.
func Strategies() []Strategy {
	return []Strategy{LastWriteWins, FirstWriteWins, MergeObjects, MergeArrays, HigherPriorityWins, Max, Sum, Manual}
}

// ParseStrategy reads a strategy name as written in .gitattributes or on the
// command line. Names are matched exactly: a typo must not silently become
// another strategy.
func ParseStrategy(s string) (Strategy, error) {
	if st := Strategy(s); st.valid() {
		return st, nil
	}
	return "", fmt.Errorf("%w: %q (want one of %s)", ErrUnknownStrategy, s, strategyNames())
}

func strategyNames() string {
	var names []string
	for _, st := range Strategies() {
		names = append(names, string(st))
	}
	return strings.Join(names, ", ")
}

func (s Strategy) valid() bool {
	for _, st := range Strategies() {
		if st == s {
			return true
		}
	}
	return false
}

// Options says which strategy settles a clash at each path.
type Options struct {
	// Strategy applies where no Keys entry does. Empty means MergeObjects.
	Strategy Strategy
	// Fallback settles what merge-objects and merge-arrays cannot (a leaf
	// changed differently on both sides, a type change, delete against
	// modify; for merge-arrays anything that is not an array on both
	// sides). Empty, MergeObjects or an unknown name mean Manual;
	// MergeArrays merges arrays and leaves any other clash a conflict.
	Fallback Strategy
	// Keys maps an object key name, at any depth, to the strategy for that
	// key's subtree; the innermost matching key wins. Example:
	// {"EVENTS": MergeArrays, "SEEN": Max, "LAST-SEEN-IDX": Max}.
	Keys map[string]Strategy
}

// sums reports whether Sum settles some path under o (as the strategy or
// for a key): then a change both sides made alike is still merged.
func (o Options) sums() bool {
	if o.Strategy == Sum {
		return true
	}
	for _, s := range o.Keys {
		if s == Sum {
			return true
		}
	}
	return false
}

// priorityRank orders the named priorities of the swarm shared state specification, case-insensitively;
// medium and normal are the same level. Unknown names have no rank.
func priorityRank(name string) (int, bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "background":
		return 1, true
	case "low":
		return 2, true
	case "medium", "normal":
		return 3, true
	case "high":
		return 4, true
	case "urgent":
		return 5, true
	case "critical":
		return 6, true
	}
	return 0, false
}
