package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestFileDiffPatch: a diff's RFC 6902 patch, whole or scoped to a key,
// with pointers from the document root.
func TestFileDiffPatch(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Put(ctx, "plan.json", []byte(`{"risk":{"level":"low","owner":"a"},"steps":[1]}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "plan.json", []byte(`{"risk":{"level":"high","owner":"a"},"steps":[1,2]}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dr, err := st.Diff(ctx, store.DiffOptions{File: "plan.json"})
	diffs := dr.Files
	if err != nil || len(diffs) != 1 {
		t.Fatalf("%+v %v", diffs, err)
	}
	all, err := diffs[0].Patch("")
	if err != nil || len(all) != 2 {
		t.Errorf("whole patch: %+v %v", all, err)
	}
	scoped, err := diffs[0].Patch("risk")
	if err != nil || len(scoped) != 1 || scoped[0].Op != "replace" || scoped[0].Path != "/risk/level" {
		t.Errorf("patch of risk: %+v %v", scoped, err)
	}
	if none, err := diffs[0].Patch("absent.key"); err != nil || len(none) != 0 {
		t.Errorf("patch of an absent key: %+v %v", none, err)
	}
}

// TestDiffShowsMovesAsRenames: a file moved whole is one rename, whether
// moved by mv or by plain git; one moved and changed is a deletion and
// an addition, as git without similarity detection shows it.
func TestDiffShowsMovesAsRenames(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	for _, f := range []string{"a.json", "b.json"} {
		if _, err := st.Put(ctx, f, []byte(`{"k":"`+f+`"}`), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start, _ := st.Resolve("HEAD", "")
	if _, err := st.Move(ctx, "a.json", "moved/a.json", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dr, err := st.Diff(ctx, store.DiffOptions{})
	diffs := dr.Files
	if err != nil || len(diffs) != 1 || diffs[0].Status != "renamed" || diffs[0].From != "a.json" || diffs[0].File != "moved/a.json" {
		t.Fatalf("diff of a move: %+v %v", diffs, err)
	}
	for _, f := range []string{"a.json", "moved/a.json"} {
		if d, _ := st.Diff(ctx, store.DiffOptions{File: f}); len(d.Files) != 1 || d.Files[0].Status != "renamed" {
			t.Errorf("diff of %s: %+v", f, d)
		}
	}
	if _, err := st.Apply(ctx, []store.Op{{Op: "mv", File: "b.json", To: "b2.json"}, {Op: "set", File: "b2.json", Path: "k", Value: []byte(`2`)}}, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dr, err = st.Diff(ctx, store.DiffOptions{})
	diffs = dr.Files
	if err != nil || len(diffs) != 2 || diffs[0].Status != "deleted" || diffs[1].Status != "added" {
		t.Fatalf("diff of a move with a change: %+v %v", diffs, err)
	}
	dr, _ = st.Diff(ctx, store.DiffOptions{From: start.String(), To: "HEAD"})
	diffs = dr.Files
	got := []string{}
	for _, d := range diffs {
		got = append(got, d.Status+" "+d.From+">"+d.File)
	}
	if strings.Join(got, ", ") != "deleted >b.json, added >b2.json, renamed a.json>moved/a.json" {
		t.Errorf("diff across both: %v", got)
	}
}
