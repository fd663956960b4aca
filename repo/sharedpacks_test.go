package repo

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestReposOfAProcessSeeEachOthersPacks: a Repo reads the commits another
// Repo of the same store in this process wrote without listing the pack
// directory again, as a server's stores do at every command; a pack it
// did not hear of (another process's) is still found by listing.
func TestReposOfAProcessSeeEachOthersPacks(t *testing.T) {
	a := newRepo(t)
	write(t, a, map[string]string{"a.json": "1\n"})
	b, err := Open(context.Background(), a.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	head, err := b.Resolve("refs/heads/main", "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReadCommit(head); err != nil {
		t.Fatal(err)
	}
	scans := b.objs.scans
	for i := 0; i < 5; i++ {
		c := write(t, a, map[string]string{fmt.Sprintf("b%d.json", i): fmt.Sprintf("%d\n", i)})
		got, err := b.ReadCommit(c.Hash)
		if err != nil {
			t.Fatalf("commit %d of the other Repo: %v", i, err)
		}
		if _, err := b.ReadTree(got.Tree); err != nil {
			t.Fatalf("its tree: %v", err)
		}
	}
	if b.objs.scans != scans {
		t.Errorf("listed the pack directory %d times to read the other Repo's commits", b.objs.scans-scans)
	}
	// Another process's pack, unknown to the shared log: found by
	// listing the directory.
	hash := exec.Command("git", "--git-dir", a.Dir(), "hash-object", "-w", "--stdin")
	hash.Stdin = strings.NewReader("from git\n")
	out, err := hash.Output()
	if err != nil {
		t.Fatal(err)
	}
	pack := exec.Command("git", "--git-dir", a.Dir(), "pack-objects", "-q", filepath.Join(a.Dir(), "objects", "pack", "pack"))
	pack.Stdin = strings.NewReader(string(out))
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("pack-objects: %v %s", err, out)
	}
	git(t, a.Dir(), "prune-packed")
	if _, _, err := b.ReadObject(plumbing.NewHash(strings.TrimSpace(string(out)))); err != nil {
		t.Fatalf("an object of git's pack: %v", err)
	}
}
