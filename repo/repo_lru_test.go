package repo

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestCacheBoundedByBytes: the object cache lets go of its oldest entries
// once they weigh more than its byte budget, not only past its count, so
// a long-running process writing large trees stays flat; the newest entry
// stays whatever it weighs.
func TestCacheBoundedByBytes(t *testing.T) {
	c := newLRU(4096, 1<<20)
	big := func(n int) *Tree {
		t := &Tree{Entries: make([]TreeEntry, n)}
		for i := range t.Entries {
			t.Entries[i].Name = "file-name.json"
		}
		return t
	}
	for i := range 100 {
		c.put(plumbing.Hash{byte(i)}, big(5000)) // ~400 KB each
		if c.bytes > 1<<20 && c.ll.Len() > 1 {
			t.Fatalf("after %d puts: %d bytes in %d entries, over the budget", i+1, c.bytes, c.ll.Len())
		}
	}
	if c.ll.Len() < 2 || c.ll.Len() > 3 {
		t.Fatalf("%d entries of ~400 KB kept in 1 MiB", c.ll.Len())
	}
	if _, ok := c.get(plumbing.Hash{99}); !ok {
		t.Fatal("the newest entry was let go")
	}
	c.put(plumbing.Hash{200}, big(50000)) // 4 MB alone: kept, the rest go
	if _, ok := c.get(plumbing.Hash{200}); !ok || c.ll.Len() != 1 {
		t.Fatalf("an entry over the budget: kept %v, %d entries", ok, c.ll.Len())
	}
	var sum int64
	for e := c.ll.Front(); e != nil; e = e.Next() {
		sum += e.Value.(*lruEntry).size
	}
	if sum != c.bytes {
		t.Fatalf("bytes %d, entries weigh %d", c.bytes, sum)
	}
}

// TestWriterKeepsNoIndexOfPacksGone: a long-running writer whose reads all
// come from its cache (a server, the MCP server) holds the index of no pack
// it replaced or a roll-up removed: each commit's replaced tail goes at
// once, and the list of packs is read again once it has doubled.
func TestWriterKeepsNoIndexOfPacksGone(t *testing.T) {
	r := newRepo(t)
	sig := NewSignature("a", time.Unix(1700000000, 0))
	commit := func(i int) {
		t.Helper()
		_, err := r.Commit(context.Background(), "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			// Large enough to fill tail packs, so that new ones start.
			if err := tx.WriteFile(fmt.Sprintf("d/f%d.json", i%50), bytes.Repeat([]byte{byte('a' + i%26)}, 4096)); err != nil {
				return nil, err
			}
			return &CommitInfo{Author: sig, Committer: sig, Message: "m\n"}, nil
		}, CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	commit(0)
	if _, err := r.ReadCommit(plumbing.ZeroHash); err == nil {
		t.Fatal("read of the zero hash")
	}
	r.mu.Lock()
	r.objs.scan() // as a process that opened an existing store has listed it
	r.mu.Unlock()
	for i := 1; i <= 800; i++ {
		commit(i)
		if i%200 == 0 {
			if err := r.Maintain(context.Background(), false); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.mu.Lock()
	held, retired := len(r.objs.packs), len(r.objs.retired)
	r.mu.Unlock()
	onDisk, err := r.PackCount()
	if err != nil {
		t.Fatal(err)
	}
	if retired != 0 || held > max(2*onDisk, 64)+1 {
		t.Fatalf("after 800 commits: %d packs listed, %d retired, %d on disk", held, retired, onDisk)
	}
}
