package repo

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestResolveRefusesWhatItDoesNotRead: a suffix it cannot read is an
// error, never ignored: a range handed to a command that takes one
// revision must not quietly act on its first half.
func TestResolveRefusesWhatItDoesNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	gitDo(t, ".", "", "init", "-q", "--bare", dir)
	tree := gitDo(t, dir, "", "mktree")
	c1 := gitDo(t, dir, "", "commit-tree", tree, "-m", "one")
	c2 := gitDo(t, dir, "", "commit-tree", tree, "-p", c1, "-m", "two")
	gitDo(t, dir, "", "update-ref", "refs/heads/main", c2)
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, rev := range []string{"main~1...main", "main~1..main", "HEAD~1x", "main^2foo", "main~1:a.json"} {
		if h, err := r.Resolve(rev, "refs/heads/main"); err == nil {
			t.Errorf("Resolve(%q) = %s, want an error", rev, h)
		} else if !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q): %v, want ErrNotFound", rev, err)
		}
	}
	if h, err := r.Resolve("main~1", "refs/heads/main"); err != nil || h.String() != c1 {
		t.Fatalf("main~1: %v %v", h, err)
	}
}
