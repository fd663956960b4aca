package store

import (
	"os"
	"path/filepath"
	"strconv"
)

// replacementWarnings says when git shows the store's history otherwise
// than aiwg-state reads it: refs under refs/replace/ (git replace) make
// git substitute one object for another, and info/grafts gives commits
// other parents. aiwg-state, its hooks and its history reads take objects
// as they are written; git log, git show and git blame take the
// substitutes. Nothing is damaged, so these are warnings.
func (s *Store) replacementWarnings() []FsckProblem {
	out := []FsckProblem{}
	refs, names, err := s.repo.Refs("refs/replace/")
	if err == nil && len(names) > 0 {
		out = append(out, FsckProblem{Check: "replacements", File: "refs/replace/",
			Problem: plural(len(refs), "replace ref") + " (git replace): git shows these objects replaced, aiwg-state and its hooks read them as written, so git log and aiwg-state log can differ",
			Repair:  "`git replace -l` lists them; `git replace -d ID` removes one, or run git with GIT_NO_REPLACE_OBJECTS=1 to see what the store holds"})
	}
	if fi, err := os.Stat(filepath.Join(s.repo.Dir(), "info", "grafts")); err == nil && fi.Mode().IsRegular() {
		out = append(out, FsckProblem{Check: "replacements", File: "info/grafts",
			Problem: "grafts give commits other parents in git's eyes only: git log shows a history aiwg-state does not read",
			Repair:  "remove info/grafts if it is not wanted (git calls grafts deprecated; `git replace --convert-graft-file` turns them into replace refs)"})
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
