package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestFoldElsewhere: with folds handed elsewhere (as a server hands them
// to a process of its own), a query past the log's bound asks for a fold,
// folds nothing itself and answers as git does from the longer log; Fold
// then folds it, and the answers stay git's.
func TestFoldElsewhere(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	for i := range 12 {
		if _, err := st.Set(ctx, fmt.Sprintf("d%d.json", i%3), "k", []byte(fmt.Sprint(i)), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	audit.FoldElsewhere(func(dir string) { asked = append(asked, dir) })
	defer audit.FoldElsewhere(nil)
	ix := audit.Open(st.Repo())
	ix.FoldAt = 4
	snapshot := filepath.Join(ix.Dir(), "snapshot")
	check := func(when string) {
		t.Helper()
		for _, f := range []string{"d0.json", "d1.json", "d2.json"} {
			if got, want := logOf(t, ix, st, f), gitLog(t, st, f); !slices.Equal(got, want) {
				t.Fatalf("%s: log %s = %d commits, git says %d", when, f, len(got), len(want))
			}
		}
	}
	check("log past its bound")
	if len(asked) == 0 || asked[0] != ix.Dir() {
		t.Fatalf("a query past the bound asked for folds in %q, want %q", asked, ix.Dir())
	}
	if _, err := os.Stat(snapshot); err == nil {
		t.Fatal("a query folded the log itself")
	}
	if err := audit.Open(st.Repo()).Fold(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snapshot); err != nil {
		t.Fatalf("no snapshot after Fold: %v", err)
	}
	ix = audit.Open(st.Repo())
	ix.FoldAt = 4
	asked = nil
	check("after the fold")
	if len(asked) != 0 {
		t.Errorf("a query after the fold asked for another: %q", asked)
	}
}
