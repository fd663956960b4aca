package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func logOf(t *testing.T, ix *audit.Index, st *aiwgstate.Store, file string) []string {
	t.Helper()
	head, err := st.Resolve("HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = ix.Log(context.Background(), head, audit.LogOptions{File: file}, func(h audit.Hit) (bool, error) {
		got = append(got, h.Commit.String())
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func gitLog(t *testing.T, st *aiwgstate.Store, file string) []string {
	t.Helper()
	return strings.Fields(testutil.Git{GitDir: st.Dir()}.Output(t, "log", "--first-parent", "--format=%H", "--", file))
}

// TestIndexSurvivesDamage: folding the log into snapshots, a snapshot that
// fails its checksum, a log with a torn record, an index of the first
// format and a deleted index all give the same answers as git.
func TestIndexSurvivesDamage(t *testing.T) {
	ctx := context.Background()
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
	check := func(when string) {
		t.Helper()
		ix := audit.Open(st.Repo())
		ix.FoldAt = 4
		for _, f := range []string{"d0.json", "d1.json", "d2.json"} {
			if got, want := logOf(t, ix, st, f), gitLog(t, st, f); !slices.Equal(got, want) {
				t.Fatalf("%s: log %s = %d commits, git says %d", when, f, len(got), len(want))
			}
		}
	}
	dir := audit.Open(st.Repo()).Dir()
	write(10)
	check("fresh")
	if _, err := os.Stat(filepath.Join(dir, "snapshot")); err != nil {
		t.Fatalf("no snapshot after folding: %v", err)
	}
	write(3)
	check("snapshot and log")

	// A torn record at the end of the log, then more writes after it.
	logs, _ := filepath.Glob(filepath.Join(dir, "log.*"))
	f, err := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\xa1WG\x1e\x40\x00\x00\x00torn"))
	f.Close()
	write(3)
	check("torn log")

	// A snapshot that fails its checksum is replaced.
	data, _ := os.ReadFile(filepath.Join(dir, "snapshot"))
	data[len(data)/2] ^= 0xff
	os.WriteFile(filepath.Join(dir, "snapshot"), data, 0o644)
	check("corrupt snapshot")
	data2, _ := os.ReadFile(filepath.Join(dir, "snapshot"))
	if string(data2) == string(data) {
		t.Fatal("the corrupt snapshot was not replaced")
	}

	// An index of the first format (its records and snapshot marked as
	// such) is re-derived, not misread.
	write(2)
	logs, _ = filepath.Glob(filepath.Join(dir, "log.*"))
	for _, p := range append(logs, filepath.Join(dir, "snapshot")) {
		data, _ := os.ReadFile(p)
		data = []byte(strings.ReplaceAll(string(data), "\xa1WG\x1e", "\xa1WG\x1d"))
		data = []byte(strings.Replace(string(data), "AIWGIX02", "AIWGIX01", 1))
		os.WriteFile(p, data, 0o644)
	}
	check("index of the first format")
	write(2)
	check("writes after the first format")

	// No index at all.
	os.RemoveAll(dir)
	check("deleted index")
	if _, err := st.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("reindex")

	// Blame reads the same after all that.
	bl, err := audit.Open(st.Repo()).Blame(ctx, mustHead(t, st), "d0.json")
	if err != nil || len(bl) != 1 || !bl[0].Path.HasPrefix(verbiage.MustParsePath("k")) {
		t.Fatalf("blame: %v %v", bl, err)
	}
}

func mustHead(t *testing.T, st *aiwgstate.Store) [20]byte {
	h, err := st.Resolve("HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	return h
}
