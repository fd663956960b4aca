package repo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// TestBatchMembersFailAlone: writers queued behind a commit in progress
// are written as one batch, a chain of commits in their order of arrival;
// one whose compare-and-swap does not hold against the commit it would
// sit on, one whose transaction fails, one that changes nothing and one
// that panics drop out alone (the panic is raised again in its own
// goroutine), and the others land, each on the one before.
func TestBatchMembersFailAlone(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	first := write(t, r, map[string]string{"a.json": "0\n"})
	release := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	// A commit in progress: the writers below queue behind it.
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := r.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			close(started)
			<-release
			tx.WriteFile("lead.json", []byte("1\n"))
			return info("lead"), nil
		}, CommitOptions{})
		if err != nil {
			t.Error(err)
		}
	}()
	<-started
	type result struct {
		c   *Commit
		err error
		p   any
	}
	kinds := []string{"ok-1", "stale", "fails", "nochange", "panics", "ok-2"}
	results := make([]result, len(kinds))
	for i, kind := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { results[i].p = recover() }()
			opts := CommitOptions{}
			if kind == "stale" {
				opts.Expect = &first.Hash // the branch moves before its turn
			}
			results[i].c, results[i].err = r.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
				switch kind {
				case "fails":
					tx.WriteFile("x.json", []byte("x\n"))
					return nil, errors.New("refused by its own check")
				case "nochange":
					return info(kind), nil
				case "panics":
					panic("boom")
				}
				tx.WriteFile(kind+".json", []byte(kind+"\n"))
				return info(kind), nil
			}, opts)
		}()
		// In order of arrival.
		waitQueued(t, r, i+1)
	}
	close(release)
	wg.Wait()
	var stale *StaleError
	switch {
	case results[0].err != nil || results[5].err != nil:
		t.Fatalf("the good writes failed: %v, %v", results[0].err, results[5].err)
	case !errors.As(results[1].err, &stale) || stale.Current == first.Hash:
		t.Errorf("stale: %v", results[1].err)
	case results[2].err == nil || results[2].err.Error() != "refused by its own check":
		t.Errorf("fails: %v", results[2].err)
	case !errors.Is(results[3].err, ErrNoChange):
		t.Errorf("nochange: %v", results[3].err)
	case results[4].p != "boom":
		t.Errorf("panics: recovered %v, err %v", results[4].p, results[4].err)
	}
	if got := results[5].c.Parents; len(got) != 1 || got[0] != results[0].c.Hash {
		t.Errorf("the batch's second commit sits on %v, want %s", got, results[0].c.Hash)
	}
	head, _, err := r.readRef("refs/heads/main")
	if err != nil || head != results[5].c.Hash {
		t.Errorf("main at %s (%v), want %s", head, err, results[5].c.Hash)
	}
	if _, err := r.ReadFileAt(mustTree(t, r, head), "x.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed write's file is there: %v", err)
	}
	testutil.Fsck(t, r.dir)
}

func info(msg string) *CommitInfo {
	sig := NewSignature("agent-1", time.Unix(1700000000, 0))
	return &CommitInfo{Author: sig, Committer: sig, Message: FormatMessage(msg, "", nil)}
}

// waitQueued waits until n writers wait in main's queue.
func waitQueued(t *testing.T, r *Repo, n int) {
	t.Helper()
	g := r.group("refs/heads/main")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		got := len(g.queue)
		g.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("%d writers never queued", n)
}

// TestBatchWritesOnePack: a batch of commits changing the same directory
// is one pack, its trees stored as deltas against the previous commit's.
func TestBatchWritesOnePack(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("docs/d%03d.json", i)] = fmt.Sprintf("{\"n\": %d}\n", i)
	}
	write(t, r, files)
	release := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	commit := func(i int, block bool) {
		defer wg.Done()
		_, err := r.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
			if block {
				close(started)
				<-release
			}
			tx.WriteFile(fmt.Sprintf("docs/d%03d.json", i), []byte("changed\n"))
			return info("w"), nil
		}, CommitOptions{})
		if err != nil {
			t.Error(err)
		}
	}
	wg.Add(1)
	go commit(0, true)
	<-started
	const n = 10
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go commit(i, false)
	}
	waitQueued(t, r, n)
	before := r.tail.data
	size := len(before)
	close(release)
	wg.Wait()
	grew := len(r.tail.data) - size
	t.Logf("a batch of %d commits added %d bytes to the tail", n, grew)
	// Two 200-entry trees a commit would be ~17 KB each, whole.
	if grew > n*4<<10 {
		t.Errorf("the batch of %d commits grew the tail by %d bytes", n, grew)
	}
	testutil.Fsck(t, r.dir)
}

// TestGroupCommitIsFair: under 64 writers of one branch in one process,
// each write is written by the batch after the one in progress when it
// arrived (or, arriving to an idle branch, by its own).
func TestGroupCommitIsFair(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	var worst, commits atomic.Int64
	testHookWaited = func(n int64) {
		commits.Add(1)
		for {
			cur := worst.Load()
			if n <= cur || worst.CompareAndSwap(cur, n) {
				break
			}
		}
	}
	defer func() { testHookWaited = func(int64) {} }()
	var wg sync.WaitGroup
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				_, err := r.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
					tx.WriteFile(fmt.Sprintf("w%02d.json", w), []byte(fmt.Sprintf("%d\n", j)))
					return info("w"), nil
				}, CommitOptions{})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if w := worst.Load(); w > 1 {
		t.Errorf("a writer waited for %d batches", w)
	}
	t.Logf("%d commits; the longest wait %d batch", commits.Load(), worst.Load())
	testutil.Fsck(t, r.dir)
}
