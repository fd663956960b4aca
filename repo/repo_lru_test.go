package repo

import (
	"testing"

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
