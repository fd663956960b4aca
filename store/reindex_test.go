package store_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// fastImportOnto adds n commits to main with plain git (one fast-import
// process, as a push of many commits would), each setting a and b.c in one
// of three documents; salt makes the values differ between calls.
func fastImportOnto(t *testing.T, st *aiwgstate.Store, n int, salt string) {
	t.Helper()
	var in bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter git <git@example.invalid> %d +0000\n", 1767225600+i)
		msg := fmt.Sprintf("plain %s %d\n", salt, i)
		fmt.Fprintf(&in, "data %d\n%s", len(msg), msg)
		if i == 0 {
			in.WriteString("from refs/heads/main^0\n")
		}
		body := fmt.Sprintf("{\"a\": %q, \"b\": {\"c\": %d}}\n", salt, i%7)
		if i%5 == 0 {
			body = fmt.Sprintf("{\"a\": %q}\n", fmt.Sprint(salt, i)) // b goes away
		}
		fmt.Fprintf(&in, "M 100644 inline d%d.json\ndata %d\n%s\n", i%3, len(body), body)
	}
	cmd := exec.Command("git", "--git-dir", st.Dir(), "fast-import", "--quiet")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
}

// indexAnswers is what log FILE#KEY, log FILE and blame say about every
// document, as text to compare.
func indexAnswers(t *testing.T, st *aiwgstate.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, doc := range []string{"d0.json", "d1.json", "d2.json"} {
		for _, key := range []string{"", "a", "b", "b.c"} {
			fmt.Fprintf(&b, "log %s#%s:", doc, key)
			err := st.Log(ctx, store.LogOptions{File: doc, Key: key}, func(m *store.Mutation) bool {
				fmt.Fprintf(&b, " %.12s", m.Commit)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n")
		}
		blame, err := st.Blame(ctx, doc, store.ReadOptions{}, store.BlameOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range blame {
			fmt.Fprintf(&b, "blame %s %s %.12s\n", doc, e.Path, e.Commit)
		}
	}
	return b.String()
}

// TestIncrementalIndexEqualsRebuild: after commits made with plain git,
// the first query indexes only those (the snapshot stays, the log holds
// exactly the new ones), and its answers equal a full rebuild's and
// git's. After a history rewrite (main reset to an older commit, then new
// commits: a force-push), the answers follow the new history, equal a
// rebuild's, and name none of the dropped commits.
func TestIncrementalIndexEqualsRebuild(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	for i := 0; i < 30; i++ {
		doc := fmt.Sprintf("d%d.json", i%3)
		key := []string{"a", "b.c"}[i%2]
		if _, err := st.Set(ctx, doc, key, []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ix := audit.Open(st.Repo())
	before, err := ix.Stats()
	if err != nil {
		t.Fatal(err)
	}

	const plain = 300
	fastImportOnto(t, st, plain, "x")
	incremental := indexAnswers(t, st)
	after, err := ix.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if after.Snapshot != before.Commits || after.Log != plain || after.Commits != before.Commits+plain {
		t.Fatalf("incremental indexing: before %+v, after %+v; want the snapshot kept and %d commits logged", before, after, plain)
	}
	for _, doc := range []string{"d0.json", "d1.json"} {
		var got []string
		st.Log(ctx, store.LogOptions{File: doc}, func(m *store.Mutation) bool {
			got = append(got, m.Commit)
			return true
		})
		want := strings.Fields(storetest.Git(t, st, "log", "--first-parent", "--format=%H", "main", "--", doc))
		if !slices.Equal(got, want) {
			t.Fatalf("log %s after plain-git commits: %d commits, git says %d", doc, len(got), len(want))
		}
	}
	if _, err := st.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if full := indexAnswers(t, st); full != incremental {
		t.Fatalf("incremental index differs from a rebuild:\nincremental:\n%s\nrebuild:\n%s", incremental, full)
	}

	// Rewrite: drop the last 120 commits and add 40 others.
	dropped := strings.Fields(storetest.Git(t, st, "rev-list", "--max-count=120", "main"))
	storetest.Git(t, st, "update-ref", "refs/heads/main", "main~120")
	fastImportOnto(t, st, 40, "y")
	rewritten := indexAnswers(t, st)
	for _, h := range dropped {
		if strings.Contains(rewritten, h[:12]) {
			t.Fatalf("after the rewrite, the answers still name dropped commit %s", h)
		}
	}
	for _, doc := range []string{"d0.json", "d2.json"} {
		var got []string
		st.Log(ctx, store.LogOptions{File: doc}, func(m *store.Mutation) bool {
			got = append(got, m.Commit)
			return true
		})
		want := strings.Fields(storetest.Git(t, st, "log", "--first-parent", "--format=%H", "main", "--", doc))
		if !slices.Equal(got, want) {
			t.Fatalf("log %s after a rewrite: %d commits, git says %d", doc, len(got), len(want))
		}
	}
	if _, err := st.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if full := indexAnswers(t, st); full != rewritten {
		t.Fatalf("after a rewrite, the incremental index differs from a rebuild:\nincremental:\n%s\nrebuild:\n%s", rewritten, full)
	}
	storetest.Fsck(t, st)
}
