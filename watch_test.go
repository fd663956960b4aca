package aiwgstate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
)

// TestWatchStreamsWhatLands: a watcher sees every matching mutation after
// its starting point, oldest first, including plain git's commits, and
// goes on along the new line when the branch is reset.
func TestWatchStreamsWhatLands(t *testing.T) {
	st := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	from := strings.TrimSpace(git(t, st, "rev-parse", "HEAD"))
	got := make(chan *aiwgstate.Mutation, 16)
	done := make(chan error, 1)
	go func() {
		done <- st.Watch(ctx, aiwgstate.WatchOptions{From: from, Path: "docs", Poll: time.Millisecond}, func(m *aiwgstate.Mutation) bool {
			got <- m
			return len(got) < 4
		})
	}()
	set := func(file, agent string) string {
		m, err := st.Set(ctx, file, "k", []byte(`1`), aiwgstate.WriteOptions{Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		return m.Commit
	}
	want := []string{set("docs/a.json", "a")}
	set("other.json", "a") // not under docs
	want = append(want, set("docs/sub/b.json", "b"))
	// Plain git: a commit that puts back the tree of the start, without
	// docs/.
	head := strings.TrimSpace(git(t, st, "rev-parse", "HEAD"))
	plain := strings.TrimSpace(git(t, st, "commit-tree", "-p", head, "-m", "undo by hand", from+"^{tree}"))
	git(t, st, "update-ref", "refs/heads/main", plain, head)
	want = append(want, plain)
	// Once the watcher has seen it (a commit reset away before the next
	// poll is never seen: that is polling), reset the branch back, and
	// commit on the new line.
	for len(got) < 3 {
		select {
		case <-ctx.Done():
			t.Fatalf("streamed %d mutations of 3", len(got))
		case <-time.After(time.Millisecond):
		}
	}
	git(t, st, "update-ref", "refs/heads/main", from)
	want = append(want, set("docs/c.json", "c"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(got)
	var commits []string
	for m := range got {
		commits = append(commits, m.Commit)
	}
	if strings.Join(commits, " ") != strings.Join(want, " ") {
		t.Errorf("streamed %v, want %v", commits, want)
	}
}
