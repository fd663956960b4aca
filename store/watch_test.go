package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestWatchStreamsWhatLands: a watcher sees every matching mutation after
// its starting point, oldest first, including plain git's commits; a
// reset is reported before the new line's mutations, and commits that
// come back after a reset are not streamed twice.
func TestWatchStreamsWhatLands(t *testing.T) {
	st := storetest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	from := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD"))
	var mu sync.Mutex
	var events []string
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(events) }
	done := make(chan error, 1)
	go func() {
		done <- st.Watch(ctx, store.WatchOptions{From: from, Path: "docs", Poll: time.Millisecond,
			OnReset: func(a, b string) bool {
				mu.Lock()
				events = append(events, "reset "+a+" "+b)
				mu.Unlock()
				return true
			}}, func(m *store.Mutation) bool {
			mu.Lock()
			events = append(events, m.Commit)
			mu.Unlock()
			return true
		})
	}()
	// waitFor: until the watcher has streamed n events (a commit reset
	// away before the next poll is never seen: that is polling).
	waitFor := func(n int) {
		t.Helper()
		for count() < n {
			select {
			case <-ctx.Done():
				t.Fatalf("streamed %d events of %d: %v", count(), n, events)
			case <-time.After(time.Millisecond):
			}
		}
	}
	set := func(file, agent string) string {
		m, err := st.Set(ctx, file, "k", []byte(`1`), store.WriteOptions{Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		return m.Commit
	}
	a := set("docs/a.json", "a")
	set("other.json", "a") // not under docs
	b := set("docs/sub/b.json", "b")
	// Plain git: a commit that puts back the tree of the start, without
	// docs/.
	head := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD"))
	plain := strings.TrimSpace(storetest.Git(t, st, "commit-tree", "-p", head, "-m", "undo by hand", from+"^{tree}"))
	storetest.Git(t, st, "update-ref", "refs/heads/main", plain, head)
	waitFor(3)
	// Reset back to the start, and a commit on the new line.
	storetest.Git(t, st, "update-ref", "refs/heads/main", from)
	waitFor(4)
	c := set("docs/c.json", "c")
	waitFor(5)
	// Back to the old line: a reset, and nothing streamed twice.
	storetest.Git(t, st, "update-ref", "refs/heads/main", plain)
	waitFor(6)
	d := set("docs/d.json", "d")
	waitFor(7)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	want := []string{a, b, plain, "reset " + plain + " " + from, c, "reset " + c + " " + plain, d}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("streamed\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}

// TestWatchDoesNotRestreamItsStart: a watch does not stream the commit it
// started at when the branch is reset back and forward again.
func TestWatchDoesNotRestreamItsStart(t *testing.T) {
	st := storetest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := st.Put(ctx, "a.json", []byte(`1`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m2, err := st.Put(ctx, "a.json", []byte(`2`), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 10)
	resets := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- st.Watch(ctx, store.WatchOptions{From: m2.Commit, Poll: time.Millisecond,
			OnReset: func(_, to string) bool { resets <- to; return true }}, func(m *store.Mutation) bool {
			got <- m.Commit
			return true
		})
	}()
	storetest.Git(t, st, "update-ref", "refs/heads/main", m2.Parents[0])
	select {
	case to := <-resets:
		if to != m2.Parents[0] {
			t.Fatalf("reset to %s, want %s", to, m2.Parents[0])
		}
	case <-ctx.Done():
		t.Fatal("the watch saw no reset")
	}
	storetest.Git(t, st, "update-ref", "refs/heads/main", m2.Commit)
	// A commit after the start shows the watcher has passed the forward
	// move: anything it streams before it is a repeat.
	m3, err := st.Put(ctx, "a.json", []byte(`3`), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c != m3.Commit {
			t.Errorf("streamed %s before %s: the commit the watch started at, again", c, m3.Commit)
		}
	case <-ctx.Done():
		t.Fatal("the watch streamed nothing")
	}
	cancel()
	<-done
}

// TestWatchStreamsMergedCommits: a merge streams the commits it brought
// in, then itself; a reset names the commits it dropped; a watch resumed
// from its cursor (After) streams what came after it, nothing twice.
func TestWatchStreamsMergedCommits(t *testing.T) {
	st := storetest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, err := st.Put(ctx, "a.json", []byte(`0`), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "side", ""); err != nil {
		t.Fatal(err)
	}
	var side []string
	for i := range 3 {
		m, err := st.Put(ctx, "s.json", []byte(strings.Repeat("1", i+1)), store.WriteOptions{Branch: "side"})
		if err != nil {
			t.Fatal(err)
		}
		side = append(side, m.Commit)
	}
	main1, err := st.Put(ctx, "a.json", []byte(`1`), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A merge made by git: side's three commits come with it.
	out := storetest.Git(t, st, "merge-tree", "--write-tree", "main", "side")
	merged := strings.TrimSpace(storetest.Git(t, st, "commit-tree", strings.Fields(out)[0], "-p", main1.Commit, "-p", side[2], "-m", "merge side"))
	storetest.Git(t, st, "update-ref", "refs/heads/main", merged)

	var got, dropped []string
	var cursor []string
	err = st.Watch(ctx, store.WatchOptions{From: start.Commit, Poll: time.Millisecond,
		OnCursor: func(c []string) { cursor = c }}, func(m *store.Mutation) bool {
		got = append(got, m.Commit)
		return len(got) < 5
	})
	if err != nil {
		t.Fatal(err)
	}
	// Commit order: each after its parents; main1 and side's commits are
	// apart, in time order.
	pos := map[string]int{}
	for i, c := range got {
		pos[c] = i
	}
	if len(got) != 5 || pos[side[0]] > pos[side[1]] || pos[side[1]] > pos[side[2]] || pos[merged] != 4 {
		t.Fatalf("streamed %v; side %v, main %s, merge %s", got, side, main1.Commit, merged)
	}
	if len(cursor) != 1 || cursor[0] != merged {
		t.Errorf("cursor %v, want the merge", cursor)
	}
	// Resumed from the cursor, after a reset to main1 and a new commit:
	// the reset names the merge and side's commits as dropped.
	storetest.Git(t, st, "update-ref", "refs/heads/main", main1.Commit)
	after, err := st.Put(ctx, "a.json", []byte(`2`), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	err = st.Watch(ctx, store.WatchOptions{After: cursor, Poll: time.Millisecond,
		OnDropped: func(cs []string) bool { dropped = cs; return true }}, func(m *store.Mutation) bool {
		got = append(got, m.Commit)
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != after.Commit {
		t.Errorf("resumed: %v, want %s", got, after.Commit)
	}
	if want := append(slices.Clone(side), merged); len(dropped) != 4 || !slices.Contains(dropped, side[0]) || dropped[3] != merged {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
}
