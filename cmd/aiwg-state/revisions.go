package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// revRange is a revision range as git writes it: A..B (From to To) or
// A...B (Symmetric: To since its merge base with From). An empty side is
// HEAD, as in git.
type revRange struct {
	From, To  string
	Symmetric bool
}

// parseRange reads A..B or A...B; ok is false for anything else (one
// revision, a file).
func parseRange(a string) (r revRange, ok bool) {
	if a == "" || looksLikeFile(a) {
		return r, false
	}
	if from, to, found := strings.Cut(a, "..."); found {
		r = revRange{From: from, To: to, Symmetric: true}
	} else if from, to, found := strings.Cut(a, ".."); found {
		r = revRange{From: from, To: to}
	} else {
		return r, false
	}
	if r.From == "" {
		r.From = "HEAD"
	}
	if r.To == "" {
		r.To = "HEAD"
	}
	return r, true
}

// isBranch reports whether name is a branch as written (see Store.IsBranch).
func (s *session) isBranch(name string) bool { return s.store.IsBranch(name) }

// note tells on stderr how a command read what it was given, when that
// is not the only reading: a line, or with --json an object with the
// details on a line of its own, as warn does.
func (s *session) note(msg string, details map[string]any) {
	if s.json {
		v := map[string]any{"note": msg}
		for k, d := range details {
			v[k] = d
		}
		b, _ := json.Marshal(v)
		fmt.Fprintln(s.c.App.ErrWriter, string(b))
		return
	}
	fmt.Fprintln(s.c.App.ErrWriter, "aiwg-state: note: "+msg)
}
