package indexfold_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/indexfold"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestAFoldThatCannotRunFoldsInPlace: when the program named cannot fold
// (an older aiwg-state, or none), the failure is logged and queries fold
// the log in their own process again, rather than read an ever longer
// one.
func TestAFoldThatCannotRunFoldsInPlace(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	for i := range 12 {
		if _, err := st.Set(ctx, fmt.Sprintf("d%d.json", i%3), "k", []byte(fmt.Sprint(i)), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var logged []string
	stop := indexfold.Start("/bin/false", st.Dir(), func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, a...))
	}, false)
	defer stop()
	snapshot := filepath.Join(st.Dir(), filepath.FromSlash(audit.IndexDir), "snapshot")
	query := func() {
		ix := audit.Open(st.Repo())
		ix.FoldAt = 4
		head, err := st.Resolve("HEAD", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Log(ctx, head, audit.LogOptions{File: "d0.json"}, func(audit.Hit) (bool, error) { return true, nil }); err != nil {
			t.Fatal(err)
		}
	}
	query()
	if _, err := os.Stat(snapshot); err == nil {
		t.Fatal("the query folded in place while a fold was handed elsewhere")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(logged)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failed fold was not logged")
		}
	}
	if !strings.Contains(logged[0], "from now on") {
		t.Errorf("logged %q", logged[0])
	}
	query()
	if _, err := os.Stat(snapshot); err != nil {
		t.Errorf("after the failed fold, a query did not fold in place: %v", err)
	}
}
