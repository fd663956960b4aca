package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/store"
)

// TestViewOutlivesFold: an index that loaded the snapshot keeps answering
// from it, rightly, after other indexes (another query, another process)
// folded new snapshots over it, and its mapping was let go of; the old
// file's space is its own until then.
func TestViewOutlivesFold(t *testing.T) {
	ctx := context.Background()
	audit.ReleaseWhileReading(true) // as a server: pages let go of in the middle of queries too
	defer audit.ReleaseWhileReading(false)
	st := storetest.New(t)
	seq := 0
	write := func(n int) {
		for i := 0; i < n; i++ {
			seq++
			if _, err := st.Set(ctx, fmt.Sprintf("d%d.json", seq%3), "k", []byte(fmt.Sprint(seq)), store.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(12)
	old := mustHead(t, st)
	gitLogAt := func(file string) []string {
		return strings.Fields(testutil.Git{GitDir: st.Dir()}.Output(t, "log", "--first-parent", "--format=%H", fmt.Sprintf("%x", old), "--", file))
	}
	logAt := func(ix *audit.Index, file string) []string {
		var got []string
		if err := ix.Log(ctx, old, audit.LogOptions{File: file}, func(h audit.Hit) (bool, error) {
			got = append(got, h.Commit.String())
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := audit.Open(st.Repo())
	first.FoldAt = 4
	logAt(first, "d0.json") // folds, and keeps the view of the snapshot
	snap := filepath.Join(first.Dir(), "snapshot")
	before, err := os.Stat(snap)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		write(6)
		other := audit.Open(st.Repo())
		other.FoldAt = 4
		if got := logOf(t, other, st, "d1.json"); !slices.Equal(got, gitLog(t, st, "d1.json")) {
			t.Fatalf("round %d: the folding index's log is wrong", round)
		}
	}
	if after, err := os.Stat(snap); err != nil || os.SameFile(before, after) {
		t.Fatalf("no new snapshot was folded over the first (%v)", err)
	}
	audit.ReleaseMapped()
	runtime.GC()
	for _, f := range []string{"d0.json", "d1.json", "d2.json"} {
		if got, want := logAt(first, f), gitLogAt(f); !slices.Equal(got, want) {
			t.Fatalf("the view of the replaced snapshot: log %s = %d commits, git says %d", f, len(got), len(want))
		}
	}
}
