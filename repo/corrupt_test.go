package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// damagedStore writes a few commits into one tail pack, closes the Repo,
// lets damage change the pack's files, and reopens it cold.
func damagedStore(t *testing.T, damage func(idx, pack string, blobs map[string]plumbing.Hash)) (*Repo, []string) {
	t.Helper()
	withGrace(t, 0)
	r := newRepo(t)
	files := map[string]string{}
	for i := range 8 {
		p := fmt.Sprintf("docs/d%d.json", i)
		files[p] = fmt.Sprintf("{\"k\": %d, \"pad\": %q}\n", i, fmt.Sprint(time.Now().UnixNano()))
		write(t, r, map[string]string{p: files[p]})
	}
	r.Close()
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs, want the one tail", len(packs))
	}
	base := packs[0][:len(packs[0])-len(".pack")]
	os.Chmod(base+".idx", 0o644)
	os.Chmod(base+".pack", 0o644)
	blobs := map[string]plumbing.Hash{}
	for p, v := range files {
		blobs[p] = hashObject(plumbing.BlobObject, []byte(v))
	}
	damage(base+".idx", base+".pack", blobs)
	before := listPackDir(t, r.Dir())
	r2, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r2.Close() })
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	// A write refuses, and leaves the damaged pack as it was.
	_, err = r2.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
		if err := tx.WriteFile("docs/new.json", []byte("{}\n")); err != nil {
			return nil, err
		}
		sig := NewSignature("agent-1", time.Unix(1700000000, 0))
		return &CommitInfo{Author: sig, Committer: sig, Message: "x\n"}, nil
	}, CommitOptions{})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("write on a damaged pack: %v, want ErrCorrupt", err)
	}
	if after := listPackDir(t, r.Dir()); !slices.Equal(before, after) {
		t.Fatalf("the refused write changed the pack directory:\n%v\n%v", before, after)
	}
	return r2, paths
}

func listPackDir(t *testing.T, dir string) []string {
	es, err := os.ReadDir(filepath.Join(dir, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// readsAsCorrupt reads every file at the head: none may read as absent,
// and at least one must report the damage.
func readsAsCorrupt(t *testing.T, r *Repo, paths []string) {
	t.Helper()
	head, err := r.Ref("refs/heads/main")
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return
		}
		t.Fatal(err)
	}
	c, err := r.ReadCommit(head)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("reading the head commit: %v, want ErrCorrupt", err)
		}
		return
	}
	corrupt := 0
	for _, p := range paths {
		_, err := r.ReadFileAt(c.Tree, p)
		if errors.Is(err, ErrNotFound) {
			t.Fatalf("%s reads as absent from a damaged pack: %v", p, err)
		}
		if errors.Is(err, ErrCorrupt) {
			corrupt++
		}
	}
	if corrupt == 0 {
		t.Fatal("no read reported the damage")
	}
}

func flipByte(t *testing.T, path string, off int64, mask byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= mask
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFlippedIndexNameIsDamageNotAbsence(t *testing.T) {
	r, paths := damagedStore(t, func(idx, _ string, blobs map[string]plumbing.Hash) {
		// A bit of the name of a document's blob: it is hidden.
		b, _ := os.ReadFile(idx)
		objs, _, err := parseIdx(b)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(objs, func(e packEntry) bool { return e.hash == blobs["docs/d3.json"] })
		flipByte(t, idx, int64(8+1024+20*i+19), 0x01)
	})
	readsAsCorrupt(t, r, paths)
}

func TestTruncatedIndexIsDamage(t *testing.T) {
	r, paths := damagedStore(t, func(idx, _ string, _ map[string]plumbing.Hash) {
		fi, _ := os.Stat(idx)
		os.Truncate(idx, fi.Size()/2)
	})
	readsAsCorrupt(t, r, paths)
}

func TestFlippedPackBytesAreDamage(t *testing.T) {
	r, paths := damagedStore(t, func(_, pack string, _ map[string]plumbing.Hash) {
		// Stored deflate blocks: a byte near the end is an object's
		// body, which only zlib's checksum at the stream's end catches.
		flipByte(t, pack, -40, 0x04)
	})
	readsAsCorrupt(t, r, paths)
}
