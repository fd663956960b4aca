package main

import (
	"strings"
	"testing"
)

// TestTimeFlagsReadWhatPeopleType: --since, --until and --at read a date,
// an RFC 3339 time and an age the same way in every command.
func TestTimeFlagsReadWhatPeopleType(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk", `"low"`, "--agent", "planner")
	mustCLI(t, s, "", "set", "plan.json", "risk", `"high"`, "--agent", "planner")
	lines := func(out string) int { return strings.Count(out, "\n") }
	for _, tc := range []struct {
		args []string
		n    int
	}{
		{[]string{"log", "--since", "2h"}, 3},
		{[]string{"log", "--since", "2000-01-01"}, 3},
		{[]string{"log", "--since", "2000-01-01 00:00:00"}, 3},
		{[]string{"log", "--since", "2999-01-01T00:00:00Z"}, 0},
		{[]string{"log", "--until", "1d"}, 0},
		{[]string{"log", "--until", "1w ago"}, 0},
		{[]string{"log", "--until", "2999-01-01"}, 3},
		{[]string{"log", "plan.json#risk", "--since", "3w"}, 2},
		{[]string{"traj", "list", "--since", "2026-01-01"}, 0},
	} {
		if got := lines(mustCLI(t, s, "", tc.args...)); got != tc.n {
			t.Errorf("%v: %d lines, want %d", tc.args, got, tc.n)
		}
	}
	// --at: an age is the state as it was then; none before the store.
	if got := mustCLI(t, s, "", "get", "plan.json", "risk", "--at", "0s"); got != "\"high\"\n" {
		t.Errorf("get --at 0s = %q", got)
	}
	if _, stderr, code := runCLI(t, s, "", "get", "plan.json", "risk", "--at", "1d"); code != exitDomain {
		t.Errorf("get --at 1d (before the store): exit %d %s", code, stderr)
	}
	// A branch named like an age is the branch.
	mustCLI(t, s, "", "branch", "1d", "--from", "HEAD~1")
	if got := mustCLI(t, s, "", "get", "plan.json", "risk", "--at", "1d"); got != "\"low\"\n" {
		t.Errorf("get --at 1d with a branch 1d = %q", got)
	}
	for _, args := range [][]string{
		{"log", "--since", "yesterday"},
		{"log", "--until", "-2h"},
		{"traj", "list", "--since", "soon"},
	} {
		if _, stderr, code := runCLI(t, s, "", args...); code != exitUsage || !strings.Contains(stderr, "an age (90m, 2h, 1d, 3w)") {
			t.Errorf("%v: exit %d %q", args, code, stderr)
		}
	}
}
