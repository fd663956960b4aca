package jsonmerge

import (
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func canon(v any) string { return string(appendCanonical(nil, v)) }

// sideOf is a present side written at wall time wall by agent.
func sideOf(tb testing.TB, doc string, wall int64, agent string) Side {
	tb.Helper()
	return Side{Value: testutil.DecodeJSON(tb, doc), Clock: Clock{Wall: wall, Agent: agent}}
}

// swapped returns c as seen with ours and theirs exchanged.
func swapped(c Conflict) Conflict {
	c.Ours, c.Theirs = c.Theirs, c.Ours
	c.OursMissing, c.TheirsMissing = c.TheirsMissing, c.OursMissing
	return c
}

func conflictPaths(cs []Conflict) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path.String()
	}
	return out
}
