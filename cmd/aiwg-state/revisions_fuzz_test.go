package main

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseRange: reading A..B and A...B never panics; a range read
// writes back as itself (with HEAD for an empty side), and a document
// path is never taken for a range.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"main..feat", "main...feat", "..feat", "main...", "a.json", "x..y.json", "....", "a..b..c", "HEAD~2..HEAD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := parseRange(s)
		if !ok {
			return
		}
		if looksLikeFile(s) {
			t.Fatalf("%q: a document path read as a range", s)
		}
		if r.From == "" || r.To == "" {
			t.Fatalf("%q: an empty side: %+v", s, r)
		}
		sep := ".."
		if r.Symmetric {
			sep = "..."
		}
		from, to, _ := strings.Cut(s, sep)
		if from == "" {
			from = "HEAD"
		}
		if to == "" {
			to = "HEAD"
		}
		if r.From != from || r.To != to {
			t.Fatalf("%q read as %+v", s, r)
		}
	})
}

// FuzzDashCount: -N reads back as itself, and nothing else is a count.
func FuzzDashCount(f *testing.F) {
	for _, s := range []string{"-1", "-20", "-0", "--1", "-+1", "-n", "-1x", "-99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := dashCount(s)
		if !ok {
			return
		}
		digits := s[1:]
		if n < 0 || digits == "" || strings.Trim(digits, "0123456789") != "" {
			t.Fatalf("%q read as the count %d", s, n)
		}
		if m, err := strconv.Atoi(digits); err != nil || m != n {
			t.Fatalf("%q read as %d, not %d (%v)", s, n, m, err)
		}
	})
}
