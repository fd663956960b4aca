package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func FuzzParseShallow(f *testing.F) {
	f.Add([]byte("9edb9633f5044478e0b84d48d6d7b03248d4ad40\n"))
	f.Add([]byte("9edb9633f5044478e0b84d48d6d7b03248d4ad40\n027a52e5134884b8b0d6b3009cf8f9b8dd8a3367\n"))
	f.Add([]byte("not a hash\n\n9EDB9633F5044478E0B84D48D6D7B03248D4AD40"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set := parseShallow(data)
		for h := range set {
			if !strings.Contains(string(data), h.String()) {
				t.Fatalf("%s is not in the file", h)
			}
		}
		if set != nil && len(set) == 0 {
			t.Fatal("an empty set is nil")
		}
	})
}

func gitDo(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	g := testutil.Git{GitDir: dir, Config: []string{"user.name=t", "user.email=t@example.invalid"}, Stdin: stdin}
	return strings.TrimSpace(g.Run(t, args...))
}

// A shallow boundary commit reads as parentless and marked; its parent is
// beyond the clone's history; the boundary moves with the shallow file.
func TestShallowBoundary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	gitDo(t, ".", "", "init", "-q", "--bare", dir)
	tree := gitDo(t, dir, "", "mktree")
	c1 := gitDo(t, dir, "", "commit-tree", tree, "-m", "one")
	c2 := gitDo(t, dir, "", "commit-tree", tree, "-p", c1, "-m", "two")
	c3 := gitDo(t, dir, "", "commit-tree", tree, "-p", c2, "-m", "three")
	gitDo(t, dir, "", "update-ref", "refs/heads/main", c3)
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c, err := r.ReadCommit(plumbing.NewHash(c2)); err != nil || c.Shallow || len(c.Parents) != 1 {
		t.Fatalf("before: %+v %v", c, err)
	}
	// As git clone --depth 2 leaves it: c2 is the boundary, c1 is gone.
	if err := os.WriteFile(filepath.Join(dir, "shallow"), []byte(c2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.forgetShallow() // another process's change is seen within shallowRecheck
	c, err := r.ReadCommit(plumbing.NewHash(c2))
	if err != nil || !c.Shallow || len(c.Parents) != 0 {
		t.Fatalf("boundary: %+v %v", c, err)
	}
	var se *ShallowError
	if _, err := r.Resolve("main~2", "refs/heads/main"); !errors.As(err, &se) || errors.Is(err, ErrNotFound) {
		t.Fatalf("main~2: %v", err)
	}
	if h, err := r.Resolve("main~1", "refs/heads/main"); err != nil || h.String() != c2 {
		t.Fatalf("main~1: %v %v", h, err)
	}
	if !r.IsShallow() || len(r.ShallowBoundary()) != 1 {
		t.Fatal("not shallow")
	}
	os.Remove(filepath.Join(dir, "shallow"))
	time.Sleep(shallowRecheck)
	if c, err := r.ReadCommit(plumbing.NewHash(c2)); err != nil || c.Shallow || len(c.Parents) != 1 {
		t.Fatalf("unshallowed: %+v %v", c, err)
	}
}

// An object a tree names that the store lacks is a *MissingObjectError,
// which is not ErrNotFound; a name the tree lacks is ErrNotFound.
func TestMissingBlobIsNotAbsent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	gitDo(t, ".", "", "init", "-q", "--bare", dir)
	blob := gitDo(t, dir, "{}", "hash-object", "-w", "--stdin")
	tree := gitDo(t, dir, "100644 blob "+blob+"\tdoc.json\n", "mktree")
	if err := os.Remove(filepath.Join(dir, "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.ReadFileAt(plumbing.NewHash(tree), "doc.json")
	var me *MissingObjectError
	if !errors.As(err, &me) || me.Promisor || errors.Is(err, ErrNotFound) || me.Hash.String() != blob {
		t.Fatalf("missing blob: %v", err)
	}
	if _, err := r.ReadFileAt(plumbing.NewHash(tree), "other.json"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("absent file: %v", err)
	}
}

// BenchmarkReadCommitShallowCheck: what the shallow boundary check adds to
// a read of a cached commit (a write reads its head's a few times): the
// check is one stat of $GIT_DIR/shallow. "stored" is the read without it.
func BenchmarkReadCommitShallowCheck(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "s.git")
	testutil.Git{}.Run(b, "init", "-q", "--bare", dir)
	out := testutil.Git{GitDir: dir, Config: []string{"user.name=t", "user.email=t@example.invalid"}}.Output(b, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", "one")
	h := plumbing.NewHash(strings.TrimSpace(out))
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, bc := range []struct {
		name string
		read func(plumbing.Hash) (*Commit, error)
	}{{"stored", r.readCommit}, {"checked", r.ReadCommit}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := bc.read(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Merge-base walks keep commits' links in a cache of their own; the
// shallow boundary still cuts them where it is now, not where it was when
// a walk first read the commit.
func TestWalksFollowTheShallowBoundary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	gitDo(t, ".", "", "init", "-q", "--bare", dir)
	tree := gitDo(t, dir, "", "mktree")
	c1 := gitDo(t, dir, "", "commit-tree", tree, "-m", "one")
	c2 := gitDo(t, dir, "", "commit-tree", tree, "-p", c1, "-m", "two")
	c3 := gitDo(t, dir, "", "commit-tree", tree, "-p", c2, "-m", "three")
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reaches := func() bool {
		t.Helper()
		ok, err := r.IsAncestor(plumbing.NewHash(c1), plumbing.NewHash(c3))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !reaches() {
		t.Fatal("c1 is not an ancestor of c3 before the boundary")
	}
	if err := os.WriteFile(filepath.Join(dir, "shallow"), []byte(c2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.forgetShallow()
	if reaches() {
		t.Fatal("a walk crossed the shallow boundary")
	}
	os.Remove(filepath.Join(dir, "shallow"))
	r.forgetShallow()
	if !reaches() {
		t.Fatal("c1 is not an ancestor of c3 once the boundary is gone")
	}
}
