package main

import (
	"os"
	"strings"
	"testing"
)

// TestColour: --color=always colours log, blame, diff, show and review;
// never, the default off a terminal and NO_COLOR on one leave them plain.
func TestColour(t *testing.T) {
	s := reviewHistory(t)
	const esc = "\x1b["
	for _, args := range [][]string{
		{"log"}, {"log", "--graph"}, {"blame", "plan.json"}, {"blame", "plan.json", "--lines"},
		{"diff", "HEAD~3", "HEAD"}, {"show"}, {"review", "main...feat"},
	} {
		if out := mustCLI(t, s, "", append(args, "--color=always")...); !strings.Contains(out, esc) {
			t.Errorf("%v --color=always: no colour:\n%s", args, out)
		}
		if out := mustCLI(t, s, "", append(args, "--color")...); !strings.Contains(out, esc) {
			t.Errorf("%v --color: no colour", args)
		}
		for _, plain := range [][]string{{"--color=never"}, {}} {
			if out := mustCLI(t, s, "", append(args, plain...)...); strings.Contains(out, esc) {
				t.Errorf("%v %v: coloured:\n%q", args, plain, out)
			}
		}
	}
	if out := mustCLI(t, s, "", "log", "--color=always", "--json"); strings.Contains(out, esc) {
		t.Error("log --json coloured")
	}
	if _, stderr, code := runCLI(t, s, "", "log", "--color=sometimes"); code != exitUsage || !strings.Contains(stderr, "auto, always or never") {
		t.Errorf("--color=sometimes: exit %d %q", code, stderr)
	}
	// On a terminal: colour by default, none under NO_COLOR, unless
	// --color=always says so.
	fakeTerminal = true
	defer func() { fakeTerminal = false }()
	t.Setenv("AIWG_PAGER", "cat")
	if out := mustCLI(t, s, "", "log"); !strings.Contains(out, esc) {
		t.Error("log on a terminal: no colour")
	}
	t.Setenv("NO_COLOR", "1")
	if out := mustCLI(t, s, "", "log"); strings.Contains(out, esc) {
		t.Error("log under NO_COLOR: coloured")
	}
	if out := mustCLI(t, s, "", "log", "--color=always"); !strings.Contains(out, esc) {
		t.Error("--color=always under NO_COLOR: no colour")
	}
}

// TestPager: on a terminal, output goes through AIWG_PAGER, else
// GIT_PAGER, else PAGER; never with --no-pager, --json, or off a
// terminal.
func TestPager(t *testing.T) {
	s := reviewHistory(t)
	fake := `sed "s/^/$PAGED_BY:/"`
	t.Setenv("PAGED_BY", "x")
	t.Setenv("AIWG_PAGER", "")
	paged := func(args ...string) string {
		t.Helper()
		out := mustCLI(t, s, "", args...)
		first, _, _ := strings.Cut(out, ":")
		if strings.Contains(first, " ") || first == out {
			return ""
		}
		return first
	}
	fakeTerminal = true
	defer func() { fakeTerminal = false }()
	// AIWG_PAGER set empty: no pager.
	if by := paged("log"); by != "" {
		t.Errorf("AIWG_PAGER empty: paged by %q", by)
	}
	t.Setenv("PAGER", `sed "s/^/pager:/"`)
	t.Setenv("GIT_PAGER", `sed "s/^/git:/"`)
	t.Setenv("AIWG_PAGER", fake)
	for _, args := range [][]string{{"log"}, {"log", "--graph"}, {"blame", "plan.json"}, {"diff", "main...feat"}, {"show"}, {"review", "main...feat"}} {
		if by := paged(args...); by != "x" {
			t.Errorf("%v: paged by %q, want AIWG_PAGER", args, by)
		}
		if by := paged(append(args, "--no-pager")...); by != "" {
			t.Errorf("%v --no-pager: paged by %q", args, by)
		}
	}
	if out := mustCLI(t, s, "", "log", "--json"); !strings.HasPrefix(out, "[") {
		t.Errorf("log --json paged: %q", out[:20])
	}
	if out := mustCLI(t, s, "", "diff", "main...feat", "--format", "markdown"); strings.HasPrefix(out, "x:") {
		t.Error("markdown paged")
	}
	// The whole output goes through it, in order.
	want := mustCLI(t, s, "", "log", "--no-pager")
	got := mustCLI(t, s, "", "log")
	if strings.ReplaceAll(got, "x:", "") != want {
		t.Errorf("paged log:\n%s\nwant\n%s", got, want)
	}
	// Then GIT_PAGER, then PAGER.
	unset(t, "AIWG_PAGER")
	if by := paged("log"); by != "git" {
		t.Errorf("paged by %q, want GIT_PAGER", by)
	}
	unset(t, "GIT_PAGER")
	if by := paged("log"); by != "pager" {
		t.Errorf("paged by %q, want PAGER", by)
	}
	// Off a terminal, never.
	fakeTerminal = false
	if by := paged("log"); by != "" {
		t.Errorf("off a terminal: paged by %q", by)
	}
}

// unset removes an environment variable for the rest of the test.
func unset(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // restored at the end of the test
	os.Unsetenv(key)
}
