package store_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// TestKeyedLogValuesMatchGit: the old and new value a keyed log shows for
// each commit are the key's values in the documents git has at the commit
// and its first parent, whether the index knows the files' blobs (written
// by this store, indexed from plain git, rebuilt) or the trees are read:
// through deletes, a document that became a directory and came back, one
// that was not JSON for a while, a move, and a merge.
func TestKeyedLogValuesMatchGit(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	set := func(file, key, v string) {
		t.Helper()
		if _, err := st.Set(ctx, file, key, []byte(v), store.WriteOptions{Agent: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 6; i++ {
		set("d.json", "a", fmt.Sprint(i))
		set("e.json", "b.c", fmt.Sprint(i*10))
	}
	if _, err := st.Delete(ctx, "d.json", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	set("d.json", "a", `"back"`)
	if _, err := st.Move(ctx, "e.json", "f.json", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	set("f.json", "b.c", "99")
	check := func(when string) {
		t.Helper()
		for _, q := range []struct{ file, key string }{{"d.json", "a"}, {"e.json", "b.c"}, {"f.json", "b.c"}, {"f.json", "b"}} {
			for _, all := range []bool{false, true} {
				n := 0
				err := st.Log(ctx, store.LogOptions{File: q.file, Key: q.key, AllParents: all, Follow: !all}, func(m *store.Mutation) bool {
					n++
					vc := m.Value
					if got, want := valueOf(t, vc.New), gitValue(t, st, m.Commit, vc.File, q.key); !sameValue(got, want) {
						t.Errorf("%s: log %s#%s (all parents %v) at %.12s: new %s, git has %s", when, q.file, q.key, all, m.Commit, vc.New, show(want))
					}
					before := vc.File
					if vc.From != "" {
						before = vc.From
					}
					if got, want := valueOf(t, vc.Old), gitValue(t, st, m.Commit+"^1", before, q.key); !sameValue(got, want) {
						t.Errorf("%s: log %s#%s (all parents %v) at %.12s: old %s, git has %s", when, q.file, q.key, all, m.Commit, vc.Old, show(want))
					}
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					t.Errorf("%s: log %s#%s lists nothing", when, q.file, q.key)
				}
			}
		}
	}
	check("written by the store")

	// Plain git: d.json becomes a directory and comes back, is not JSON
	// for a commit, and a side branch is merged.
	var in bytes.Buffer
	commit := func(ref, extra, body string) {
		msg := "plain\n"
		fmt.Fprintf(&in, "commit %s\ncommitter git <git@example.invalid> 1767225600 +0000\ndata %d\n%s%s%s", ref, len(msg), msg, extra, body)
	}
	file := func(path, data string) string {
		return fmt.Sprintf("M 100644 inline %s\ndata %d\n%s\n", path, len(data), data)
	}
	commit("refs/heads/main", "from refs/heads/main^0\n", "D d.json\n"+file("d.json/x.json", `{"a": 1}`))
	commit("refs/heads/main", "", "D d.json\n"+file("d.json", `{"a": "file again"}`))
	commit("refs/heads/main", "", file("d.json", `not json`))
	commit("refs/heads/main", "", file("d.json", `{"a": "json again"}`))
	commit("refs/heads/side", "from refs/heads/main^0\n", file("d.json", `{"a": "side"}`))
	commit("refs/heads/main", "", file("f.json", `{"b": {"c": "main"}}`))
	commit("refs/heads/main", "merge refs/heads/side\n", file("d.json", `{"a": "side"}`))
	commit("refs/heads/main", "", file("d.json", `{"a": "after the merge"}`))
	cmd := exec.Command("git", "--git-dir", st.Dir(), "fast-import", "--quiet")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	check("indexed from plain git")
	if _, err := st.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
	storetest.Fsck(t, st)
}

// gitValue is the key's value in file at rev as git has it; nil when the
// file, or the key, is not there, or the file is not JSON.
func gitValue(t *testing.T, st *aiwgstate.Store, rev, file, key string) any {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", st.Dir(), "cat-file", "blob", rev+":"+file).Output()
	if err != nil {
		return nil
	}
	doc, err := objects.Decode(out)
	if err != nil {
		return nil
	}
	p, err := verbiage.ParsePath(key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := objects.Get(doc, p)
	if err != nil {
		return nil
	}
	return v
}

func valueOf(t *testing.T, raw []byte) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	v, err := objects.Decode(raw)
	if err != nil {
		t.Fatalf("value %s: %v", raw, err)
	}
	return v
}

func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return objects.Equal(a, b)
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := objects.Encode(v)
	return strings.TrimSpace(string(b))
}
