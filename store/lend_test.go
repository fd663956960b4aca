package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestLentHandlesShareOneStore: handles lent from one open store, each
// with a default branch of its own, written through from many goroutines
// at once (as a server's commands write), land every acknowledged write as
// one commit of their own branch; a handle reads HEAD when lent, so a
// moved HEAD moves the next handle's writes; closing a handle leaves the
// store open; git fsck --strict is clean.
func TestLentHandlesShareOneStore(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	storetest.Git(t, st, "branch", "other")
	const writers, each = 8, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := store.Options{}
			if w%2 == 1 {
				opts.Branch = "other"
			}
			for j := range each {
				h, err := st.Lend(opts)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := h.Set(ctx, fmt.Sprintf("w%d.json", w), "n", []byte(fmt.Sprint(j)), store.WriteOptions{Agent: fmt.Sprintf("agent-%d", w)}); err != nil {
					t.Error(err)
				}
				if err := h.Close(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for branch, parity := range map[string]int{"main": 0, "other": 1} {
		got := storetest.Git(t, st, "log", "--format=%an", "main.."+branch)
		if branch == "main" {
			got = storetest.Git(t, st, "log", "--format=%an", "other..main")
		}
		counts := map[string]int{}
		for _, a := range strings.Fields(got) {
			counts[a]++
		}
		for w := parity; w < writers; w += 2 {
			if n := counts[fmt.Sprintf("agent-%d", w)]; n != each {
				t.Errorf("%s: %d commits by agent-%d, want %d", branch, n, w, each)
			}
		}
		if len(counts) != writers/2 {
			t.Errorf("%s: commits by %v, want only its own writers'", branch, counts)
		}
	}

	storetest.Git(t, st, "symbolic-ref", "HEAD", "refs/heads/other")
	h, err := st.Lend(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Branch() != "other" {
		t.Errorf("a handle lent after HEAD moved writes to %q, want other", h.Branch())
	}
	if _, err := st.Set(ctx, "after.json", "k", []byte("1"), store.WriteOptions{}); err != nil {
		t.Errorf("the store after its handles closed: %v", err)
	}
	storetest.Fsck(t, st)
}
