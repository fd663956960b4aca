package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return testutil.RunGit(t, dir, args...)
}

func newRepo(t testing.TB) *Repo {
	t.Helper()
	r, err := Init(context.Background(), filepath.Join(t.TempDir(), "s.git"), "main", Options{Sync: false})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func write(t testing.TB, r *Repo, files map[string]string) *Commit {
	t.Helper()
	c, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
		for p, v := range files {
			if v == "" {
				if err := tx.Remove(p); err != nil {
					return nil, err
				}
				continue
			}
			if err := tx.WriteFile(p, []byte(v)); err != nil {
				return nil, err
			}
		}
		sig := NewSignature("agent-1", time.Unix(1700000000, 0))
		return &CommitInfo{Author: sig, Committer: sig, Message: FormatMessage("test", "", Trailers{{"Mutation-Id", "mut-00000001"}})}, nil
	}, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCommitIsWhatGitSees(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "{}\n", "docs/x/b.json": "1\n", "docs/c.json": "2\n"})
	c2 := write(t, r, map[string]string{"docs/x/b.json": "3\n", "a.json": ""})
	git(t, r.Dir(), "fsck", "--strict")
	if got := git(t, r.Dir(), "show", "main:docs/x/b.json"); got != "3\n" {
		t.Fatalf("git show = %q", got)
	}
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "main")); got != c2.Hash.String() {
		t.Fatalf("main = %s, want %s", got, c2.Hash)
	}
	if got := git(t, r.Dir(), "ls-tree", "-r", "--name-only", "main"); got != "docs/c.json\ndocs/x/b.json\n" {
		t.Fatalf("ls-tree = %q", got)
	}
	if got := git(t, r.Dir(), "log", "--format=%an %(trailers:key=Mutation-Id,valueonly)", "-1"); !strings.HasPrefix(got, "agent-1 mut-00000001") {
		t.Fatalf("log = %q", got)
	}
}

func TestTreeOrderMatchesGit(t *testing.T) {
	r := newRepo(t)
	// "a.b" < "a/" < "a0" in git's order: a directory sorts as name + "/".
	write(t, r, map[string]string{"a/x": "1\n", "a.b": "2\n", "a0": "3\n", "a-": "4\n"})
	write(t, r, map[string]string{"a/y": "5\n", "ab": "6\n"})
	git(t, r.Dir(), "fsck", "--strict")
	tree := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "main^{tree}"))
	// mktree re-sorts and rehashes: equal hashes mean our order is git's.
	ls := git(t, r.Dir(), "ls-tree", "main")
	cmd := exec.Command("git", "--git-dir", r.Dir(), "mktree")
	cmd.Stdin = strings.NewReader(ls)
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != tree {
		t.Fatalf("mktree = %s (%v), want %s", out, err, tree)
	}
}

func TestRefusesNamesGitRefuses(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"Doc.json": "1\n"})
	for _, p := range []string{".git/config", "a/../b", "a//b", "x/.GIT", "doc.JSON/x", "doc.json", "git~1/x",
		"d/.git:x", ".g\u200cit/x", ".git\\x", "GIT~1:y", ".git. "} {
		_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			if err := tx.WriteFile(p, []byte("1\n")); err != nil {
				return nil, err
			}
			return &CommitInfo{}, nil
		}, CommitOptions{})
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("%s: err = %v, want ErrInvalidName", p, err)
		}
	}
}

func TestNoChangeWritesNothing(t *testing.T) {
	r := newRepo(t)
	c := write(t, r, map[string]string{"a": "1\n"})
	_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
		return &CommitInfo{}, tx.WriteFile("a", []byte("1\n"))
	}, CommitOptions{})
	if !errors.Is(err, ErrNoChange) {
		t.Fatalf("err = %v", err)
	}
	if h, _ := r.Ref("refs/heads/main"); h != c.Hash {
		t.Fatal("branch moved")
	}
}

func TestExpect(t *testing.T) {
	r := newRepo(t)
	c1 := write(t, r, map[string]string{"a": "1\n"})
	c2 := write(t, r, map[string]string{"a": "2\n"})
	_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
		return &CommitInfo{}, tx.WriteFile("a", []byte("3\n"))
	}, CommitOptions{Expect: &c1.Hash})
	var se *StaleError
	if !errors.As(err, &se) || se.Current != c2.Hash || !errors.Is(err, ErrStale) {
		t.Fatalf("err = %v", err)
	}
}

func TestResolve(t *testing.T) {
	r := newRepo(t)
	var cs []*Commit
	for i := 0; i < 4; i++ {
		cs = append(cs, write(t, r, map[string]string{"a": fmt.Sprintf("%d\n", i)}))
	}
	git(t, r.Dir(), "tag", "-a", "-m", "x", "v1", cs[1].Hash.String())
	cases := map[string]plumbing.Hash{
		"main": cs[3].Hash, "HEAD": cs[3].Hash, "HEAD~2": cs[1].Hash, "main^": cs[2].Hash,
		"v1": cs[1].Hash, "v1~1": cs[0].Hash, cs[2].Hash.String()[:10]: cs[2].Hash, "refs/heads/main~3": cs[0].Hash,
	}
	for rev, want := range cases {
		got, err := r.Resolve(rev, "refs/heads/main")
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got, err, want)
		}
	}
	for _, rev := range []string{"nope", "HEAD~9", "abcdef0"} {
		if _, err := r.Resolve(rev, "refs/heads/main"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q) err = %v", rev, err)
		}
	}
}

func TestBulkInsertRefusesCaseClash(t *testing.T) {
	r := newRepo(t)
	_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
		for i := 0; i < 30; i++ {
			if err := tx.WriteFile(fmt.Sprintf("d/f%02d", i), []byte("1\n")); err != nil {
				return nil, err
			}
		}
		return &CommitInfo{}, errors.Join(tx.WriteFile("d/Doc", []byte("1\n")), tx.WriteFile("d/doc", []byte("2\n")))
	}, CommitOptions{})
	if !errors.Is(err, ErrInvalidName) {
		t.Fatalf("err = %v, want a case clash", err)
	}
}

// TestDeleteRefNeverRollsBack: deleting a ref that is both packed (older
// value) and loose (newer) while packed-refs is locked fails and leaves
// the newer value, as git does; unlocked, it removes both.
func TestDeleteRefNeverRollsBack(t *testing.T) {
	ctx := context.Background()
	r, err := Init(ctx, filepath.Join(t.TempDir(), "s.git"), "main", Options{LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c1 := write(t, r, map[string]string{"a.json": "1\n"})
	git(t, r.Dir(), "branch", "topic", c1.Hash.String())
	git(t, r.Dir(), "pack-refs", "--all")
	c2 := write(t, r, map[string]string{"a.json": "2\n"})
	git(t, r.Dir(), "update-ref", "refs/heads/topic", c2.Hash.String())

	if err := os.WriteFile(filepath.Join(r.Dir(), "packed-refs.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/topic", c2.Hash, plumbing.ZeroHash); !errors.Is(err, ErrLocked) {
		t.Fatalf("delete with packed-refs locked: %v", err)
	}
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "topic")); got != c2.Hash.String() {
		t.Fatalf("after a failed delete topic = %s, want %s (never the packed %s)", got, c2.Hash, c1.Hash)
	}
	os.Remove(filepath.Join(r.Dir(), "packed-refs.lock"))
	if err := r.UpdateRef(ctx, "refs/heads/topic", c2.Hash, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "rev-parse", "--verify", "-q", "topic").Output(); err == nil {
		t.Fatalf("topic still resolves to %s", out)
	}
	git(t, r.Dir(), "fsck", "--strict")
}

// TestRefDirectoriesAfterDeletes: deleting agents/planner leaves no
// directory in the way of a ref named agents, and an empty directory
// there (left by older versions) reads as no ref and is replaced.
func TestRefDirectoriesAfterDeletes(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	c := write(t, r, map[string]string{"a.json": "1\n"})
	if err := r.UpdateRef(ctx, "refs/heads/agents/planner", plumbing.ZeroHash, c.Hash); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/agents/planner", c.Hash, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "refs", "heads", "agents")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("refs/heads/agents after the delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "refs", "heads")); err != nil {
		t.Fatalf("refs/heads itself went: %v", err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/agents", plumbing.ZeroHash, c.Hash); err != nil {
		t.Fatalf("create agents after agents/planner went: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(r.Dir(), "refs", "heads", "left"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Ref("refs/heads/left"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an empty directory read as a ref: %v", err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/left", plumbing.ZeroHash, c.Hash); err != nil {
		t.Fatalf("create over an empty directory: %v", err)
	}
	for _, b := range []string{"agents", "left"} {
		if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", b)); got != c.Hash.String() {
			t.Fatalf("%s = %s", b, got)
		}
	}
	git(t, r.Dir(), "fsck", "--strict")
}
