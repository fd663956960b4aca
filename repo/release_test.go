package repo

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestLimitCacheAndReleaseMapped: a long read-once pass (reindex) lowers
// the caches' budgets and gets the old ones back after; releasing the
// packs' mapped pages, including in a process that reopened the store
// and reads from mappings only, leaves every object readable and equal.
func TestLimitCacheAndReleaseMapped(t *testing.T) {
	r := newRepo(t)
	sig := NewSignature("a", time.Unix(1700000000, 0))
	var commits []plumbing.Hash
	for i := range 20 {
		h, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			if err := tx.WriteFile(fmt.Sprintf("f%d.json", i%4), bytes.Repeat([]byte{byte('a' + i)}, 3000)); err != nil {
				return nil, err
			}
			return &CommitInfo{Author: sig, Committer: sig, Message: "m\n"}, nil
		}, CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h.Hash)
	}
	if err := r.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	before := r2.cache.maxBytes
	restore := r2.LimitCache(1 << 10)
	if r2.cache.maxBytes != 1<<10 || r2.objs.bases.maxBytes != 1<<10 {
		t.Fatalf("limited budgets: %d, %d", r2.cache.maxBytes, r2.objs.bases.maxBytes)
	}
	read := func() []string {
		var out []string
		for _, h := range commits {
			c, err := r2.ReadCommit(h)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := r2.DiffTrees(plumbing.ZeroHash, c.Tree)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range ch {
				b, err := r2.ReadBlob(f.New)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, f.Path+string(b[:1]))
			}
		}
		return out
	}
	first := read()
	mapped := 0
	for _, p := range r2.objs.packs {
		if p.pack != nil {
			mapped++
		}
	}
	if mapped == 0 {
		t.Fatal("no pack mapped: the test reads nothing from mappings")
	}
	r2.ReleaseMapped()
	if second := read(); fmt.Sprint(first) != fmt.Sprint(second) {
		t.Fatalf("reads after releasing mapped pages differ:\n%v\n%v", first, second)
	}
	restore()
	if r2.cache.maxBytes != before {
		t.Fatalf("budget after restore %d, want %d", r2.cache.maxBytes, before)
	}
	r2.LimitCache(2 * before)
	if r2.cache.maxBytes != before {
		t.Fatalf("LimitCache raised the budget to %d", r2.cache.maxBytes)
	}
}

// TestReadsLetGoOfPages: a reader that lets go of its mapped pages as it
// goes (here after every entry, in the middle of delta chains) reads every
// object the same.
func TestReadsLetGoOfPages(t *testing.T) {
	r := newRepo(t)
	sig := NewSignature("a", time.Unix(1700000000, 0))
	var blobs []plumbing.Hash
	for i := range 30 {
		h, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			body := bytes.Repeat([]byte(fmt.Sprintf("line %d of a document that changes a little\n", i%3)), 200)
			if err := tx.WriteFile("doc.json", append(body, byte('a'+i))); err != nil {
				return nil, err
			}
			return &CommitInfo{Author: sig, Committer: sig, Message: "m\n"}, nil
		}, CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := r.ReadCommit(h.Hash)
		tree, _ := r.ReadTree(c.Tree)
		blobs = append(blobs, tree.Entries[0].Hash)
	}
	if err := r.Maintain(context.Background(), false); err != nil { // deltas
		t.Fatal(err)
	}
	read := func(limit int64) []string {
		old := releaseBudget
		releaseBudget = limit
		ReleaseWhileReading(true)
		defer func() { releaseBudget = old; ReleaseWhileReading(false) }()
		r2, err := Open(context.Background(), r.Dir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r2.Close()
		var out []string
		for _, h := range blobs {
			_, body, err := r2.objs.read(h)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%x", hashObject(plumbing.BlobObject, body)))
			if r2.objs.touched >= max(limit, 1) {
				t.Fatalf("read %d bytes' worth of pages without letting go of them", r2.objs.touched)
			}
		}
		return out
	}
	if a, b := read(1<<40), read(1); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("reads differ when pages are let go of:\n%v\n%v", a, b)
	}
}
