package repo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMultiPackIndexedPacksStay: after `git multi-pack-index write`, the
// packs it names are never replaced or removed by writes, so git keeps
// reading through the index.
func TestMultiPackIndexedPacksStay(t *testing.T) {
	withGrace(t, 0) // superseded tails would go at once: the index must still hold
	r := newRepo(t)
	for i := range 5 {
		write(t, r, map[string]string{fmt.Sprintf("d%d.json", i): fmt.Sprintf("%d\n", i)})
	}
	git(t, r.Dir(), "multi-pack-index", "write")
	for i := range 5 {
		write(t, r, map[string]string{fmt.Sprintf("d%d.json", i): fmt.Sprintf("v2 %d\n", i)})
	}
	// A fresh process too, which finds its tail on disk.
	fresh, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	write(t, fresh, map[string]string{"d0.json": "v3\n"})
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
	git(t, r.Dir(), "multi-pack-index", "verify")
	if got := git(t, r.Dir(), "show", "main:d0.json"); got != "v3\n" {
		t.Fatalf("d0.json = %q", got)
	}
	if err := r.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestGCRepairsMultiPackIndexNamingMissingPack: a store an older writer
// left with a multi-pack-index naming a removed pack (every git read
// through the index fails) is repaired by maintenance.
func TestGCRepairsMultiPackIndexNamingMissingPack(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			r := newRepo(t)
			write(t, r, map[string]string{"a.json": "1\n"})
			git(t, r.Dir(), "multi-pack-index", "write")
			// What an older writer did: copy the indexed tail, extended,
			// to a new pack and remove the old one.
			idx := newestIdx(t, r)
			list, err := exec.Command("sh", "-c", "git show-index < "+idx+" | cut -d' ' -f2").Output()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "--git-dir", r.Dir(), "pack-objects", "-q", filepath.Join(r.Dir(), "objects", "pack", "pack"))
			cmd.Stdin = strings.NewReader(string(list))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pack-objects: %v %s", err, out)
			}
			os.Remove(strings.TrimSuffix(idx, ".idx") + ".pack")
			os.Remove(idx)
			if err := exec.Command("git", "--git-dir", r.Dir(), "fsck").Run(); err == nil {
				t.Fatal("git fsck passes on a multi-pack-index naming a removed pack: the test proves nothing")
			}
			if err := r.Maintain(context.Background(), full); err != nil {
				t.Fatal(err)
			}
			git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
			if got := git(t, r.Dir(), "show", "main:a.json"); got != "1\n" {
				t.Fatalf("a.json = %q", got)
			}
		})
	}
}

func TestParseMidxPacksAsGitWrites(t *testing.T) {
	r := newRepo(t)
	for i := range 3 {
		write(t, r, map[string]string{"a.json": fmt.Sprintf("%d\n", i)})
		git(t, r.Dir(), "repack", "-q") // a pack each
	}
	git(t, r.Dir(), "multi-pack-index", "write")
	b, err := os.ReadFile(filepath.Join(r.Dir(), "objects", "pack", "multi-pack-index"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := parseMidxPacks(b)
	if err != nil {
		t.Fatal(err)
	}
	idxs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.idx"))
	if len(names) != len(idxs) || len(names) == 0 {
		t.Fatalf("names %v, indexes %v", names, idxs)
	}
	for _, n := range names {
		if !exists(filepath.Join(r.Dir(), "objects", "pack", n+".idx")) {
			t.Fatalf("%s: no such pack", n)
		}
	}
}

func FuzzParseMidxPacks(f *testing.F) {
	f.Add([]byte("MIDX\x01\x01\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		names, err := parseMidxPacks(b)
		if err == nil && names == nil && len(b) > 0 {
			t.Fatal("no error and no names")
		}
	})
}
