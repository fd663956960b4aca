package statedoc

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// memFiles is a store's files in memory.
type memFiles map[string]string

func (m memFiles) ReadFile(path string) ([]byte, error) {
	s, ok := m[path]
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, objects.ErrNotFound)
	}
	return []byte(s), nil
}

// apply stages writes into a copy of m.
func (m memFiles) apply(ws []FileWrite) memFiles {
	out := maps.Clone(m)
	for _, w := range ws {
		out[w.Path] = string(w.Data)
	}
	return out
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := objects.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func canon(t testing.TB, s string) string { return encode(t, testutil.DecodeJSON(t, s)) }

const shardedDoc = `{
  "ACTIVE-PROJECT": {"TITLE": null, "PROJECT-ID": null},
  "GOALS": {"OPS": "ref file://state/OPS/GOAL.json"},
  "ITEMS": {"GLOBAL": {"META": {}, "CONTENT": {"BIG": "ref file://ITEMS/BIG.json"}}, "PROJECTS": []}
}`

func shardedFiles(t testing.TB) memFiles {
	return memFiles{
		"state/state.json": canon(t, shardedDoc),
		"state/OPS/GOAL.json": canon(t, `{"TITLE": "OPS", "SUMMARY": "", "STATUS": "open", "NOTES": [],
			"SUB-GOALS": {"QUEUE": "ref file://QUEUE.json"}}`),
		"state/OPS/QUEUE.json": canon(t, `{"TITLE": "QUEUE", "EVENTS": [], "IN-FLIGHT": false, "LAST-SEEN-IDX": -1}`),
		"state/ITEMS/BIG.json": canon(t, `{"A": [1, 2, 3]}`),
	}
}

func TestDefaultStateDocument(t *testing.T) {
	want := canon(t, `{"ACTIVE-PROJECT": {"TITLE": null, "PROJECT-ID": null}, "GOALS": {},
		"ITEMS": {"GLOBAL": {"META": {}, "CONTENT": {}}, "PROJECTS": []}}`)
	if got := string(DefaultStateDocument()); got != want {
		t.Fatalf("DefaultStateDocument:\n%s\nwant:\n%s", got, want)
	}
	if _, err := Load(memFiles{"state/state.json": want}, "state/state.json"); err != nil {
		t.Fatalf("the default shape does not validate: %v", err)
	}
}

func TestLoadResolvesShardsRecursively(t *testing.T) {
	fs := shardedFiles(t)
	d, err := Load(fs, "state/state.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := objects.Get(d.Resolved(), verbiage.MustParsePath("GOALS.OPS.SUB-GOALS.QUEUE.LAST-SEEN-IDX"))
	if err != nil || encode(t, got) != "-1\n" {
		t.Fatalf("resolved nested shard value = %v, %v", got, err)
	}
	if got := d.Files(); strings.Join(got, " ") != "state/ITEMS/BIG.json state/OPS/GOAL.json state/OPS/QUEUE.json state/state.json" {
		t.Fatalf("Files = %v", got)
	}
	cases := []struct{ key, file, inner string }{
		{"GOALS.OPS.SUB-GOALS.QUEUE.EVENTS", "state/OPS/QUEUE.json", "EVENTS"},
		{"GOALS.OPS.SUB-GOALS.QUEUE", "state/OPS/QUEUE.json", ""},
		{"GOALS.OPS.STATUS", "state/OPS/GOAL.json", "STATUS"},
		{"GOALS.OPS", "state/OPS/GOAL.json", ""},
		{"GOALS", "state/state.json", "GOALS"},
		{"ITEMS.GLOBAL.CONTENT.BIG.A.2", "state/ITEMS/BIG.json", "A.2"},
	}
	for _, c := range cases {
		f, inner := d.Locate(verbiage.MustParsePath(c.key))
		if f != c.file || inner.String() != c.inner {
			t.Errorf("Locate(%s) = %s %q, want %s %q", c.key, f, inner.String(), c.file, c.inner)
		}
	}
	stored, err := d.StoredAt(verbiage.MustParsePath("GOALS.OPS.SUB-GOALS"))
	if err != nil || encode(t, stored) != canon(t, `{"QUEUE": "ref file://QUEUE.json"}`) {
		t.Fatalf("StoredAt (no resolve) = %v, %v", stored, err)
	}
}

func TestLoadRefuses(t *testing.T) {
	base := func(goals string, extra map[string]string) memFiles {
		fs := memFiles{"state/state.json": canon(t, `{"ACTIVE-PROJECT": {}, "GOALS": `+goals+`, "ITEMS": {}}`)}
		for k, v := range extra {
			fs[k] = v
		}
		return fs
	}
	cases := []struct {
		name string
		fs   memFiles
		want error
		msg  string
	}{
		{"cycle to itself", base(`{"A": "ref file://state.json"}`, nil), ErrInvalidState, "cycle"},
		{"cycle through a shard", base(`{"A": "ref file://A.json"}`, map[string]string{"state/A.json": `{"B": "ref file://state.json"}`}), ErrInvalidState, "state/state.json -> state/A.json -> state/state.json"},
		{"missing shard", base(`{"A": "ref file://A.json"}`, nil), ErrInvalidState, "state/A.json"},
		{"shard not JSON", base(`{"A": "ref file://A.json"}`, map[string]string{"state/A.json": `{`}), ErrInvalidState, "state/A.json"},
		{"escape", base(`{"A": "ref file://../../A.json"}`, nil), verbiage.ErrInvalidPath, "leaves the store"},
		{"absolute", base(`{"A": "ref file:///tmp/A.json"}`, nil), verbiage.ErrInvalidPath, "absolute"},
		{"stored init form", base(`{"A": "ref file://A.json {}"}`, map[string]string{"state/A.json": `{}`}), verbiage.ErrInvalidPath, "white space"},
		{"chained mount", base(`{"A": "ref file://A.json"}`, map[string]string{"state/A.json": `"ref file://B.json"`, "state/B.json": `{}`}), ErrInvalidState, "chained"},
		{"bad key in shard", base(`{"A": "ref file://A.json"}`, map[string]string{"state/A.json": `{"ok": 1}`}), verbiage.ErrInvalidKey, "in shard state/A.json"},
		{"bad key in document", base(`{"A_B": {}}`, nil), verbiage.ErrInvalidKey, "A_B"},
		{"shape: goals not object", base(`[]`, nil), ErrInvalidState, "GOALS: must be an object"},
		{"shape: events in shard", base(`{"G": {"SUB-GOALS": {"S": "ref file://S.json"}}}`, map[string]string{"state/S.json": `{"EVENTS": [{"SEEN": "yes"}]}`}), ErrInvalidState, "GOALS.G.SUB-GOALS.S.EVENTS.0.SEEN"},
		{"shape: last seen", base(`{"G": {"SUB-GOALS": {"S": {"LAST-SEEN-IDX": -2}}}}`, nil), ErrInvalidState, "LAST-SEEN-IDX"},
	}
	for _, c := range cases {
		_, err := Load(c.fs, "state/state.json")
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
	}
	if _, err := Load(memFiles{"state/state.json": `{"GOALS": {}, "ITEMS": {}}`}, "state/state.json"); !errors.Is(err, ErrInvalidState) {
		t.Errorf("missing ACTIVE-PROJECT: %v", err)
	}
}

func mustUpdate(t *testing.T, fs memFiles, edit func(any) (any, []verbiage.Path, error)) ([]FileWrite, memFiles) {
	t.Helper()
	d, err := Load(fs, "state/state.json")
	if err != nil {
		t.Fatal(err)
	}
	nv, _, err := edit(d.Resolved())
	if err != nil {
		t.Fatal(err)
	}
	ws, next, err := d.Update(fs, nv)
	if err != nil {
		t.Fatal(err)
	}
	after := fs.apply(ws)
	again, err := Load(after, "state/state.json")
	// An init replaces its ref string by the payload; anything else reads
	// back exactly as edited.
	hasInit := strings.Contains(encode(t, nv), ".json ")
	if err != nil || !objects.Equal(again.Resolved(), next.Resolved()) || (!hasInit && !objects.Equal(again.Resolved(), nv)) {
		t.Fatalf("after the writes the document does not read back as edited (%v)", err)
	}
	return ws, after
}

func paths(ws []FileWrite) string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Path)
	}
	return strings.Join(out, " ")
}

func TestWriteInsideMountGoesToShard(t *testing.T) {
	fs := shardedFiles(t)
	ws, after := mustUpdate(t, fs, func(doc any) (any, []verbiage.Path, error) {
		return AddEvent(doc, "ops", "queue", Event{ID: "E1", Type: "reply", Body: "hi"})
	})
	if paths(ws) != "state/OPS/QUEUE.json" {
		t.Fatalf("writes = %s, want only the shard", paths(ws))
	}
	if after["state/state.json"] != fs["state/state.json"] || after["state/OPS/GOAL.json"] != fs["state/OPS/GOAL.json"] {
		t.Fatal("the parents changed; they must keep their refs")
	}
	// Unchanged: no writes at all.
	d, _ := Load(after, "state/state.json")
	if ws, _, err := d.Update(after, d.Resolved()); err != nil || len(ws) != 0 {
		t.Fatalf("a no-op update wrote %s, %v", paths(ws), err)
	}
	// Replacing the mounted subtree whole still writes the shard.
	ws, after = mustUpdate(t, after, func(doc any) (any, []verbiage.Path, error) {
		return SetPath(doc, verbiage.MustParsePath("GOALS.OPS.SUB-GOALS.QUEUE"), NewSubGoal("QUEUE", "new"))
	})
	if paths(ws) != "state/OPS/QUEUE.json" || !strings.Contains(after["state/OPS/GOAL.json"], `"ref file://QUEUE.json"`) {
		t.Fatalf("replacing a mount: writes %s", paths(ws))
	}
	// Deleting the mount point unmounts; the file stays.
	ws, after = mustUpdate(t, after, func(doc any) (any, []verbiage.Path, error) {
		return DeletePath(doc, verbiage.MustParsePath("GOALS.OPS.SUB-GOALS.QUEUE"))
	})
	if paths(ws) != "state/OPS/GOAL.json" || after["state/OPS/QUEUE.json"] == "" {
		t.Fatalf("unmount: writes %s", paths(ws))
	}
}

func TestInlineInit(t *testing.T) {
	fs := shardedFiles(t)
	ws, after := mustUpdate(t, fs, func(doc any) (any, []verbiage.Path, error) {
		return SetPath(doc, verbiage.MustParsePath("goals.new"), `ref file://state/NEW/GOAL.json {"title": "NEW", "sub-goals": {}}`)
	})
	if paths(ws) != "state/NEW/GOAL.json state/state.json" {
		t.Fatalf("init writes %s", paths(ws))
	}
	if !ws[0].Create || after["state/NEW/GOAL.json"] != canon(t, `{"SUB-GOALS": {}, "TITLE": "NEW"}`) {
		t.Fatalf("init shard = %s (create %v)", after["state/NEW/GOAL.json"], ws[0].Create)
	}
	if !strings.Contains(after["state/state.json"], `"NEW": "ref file://state/NEW/GOAL.json"`) {
		t.Fatalf("the parent does not hold the canonical ref:\n%s", after["state/state.json"])
	}
	// A string payload, inside a shard: relative to the shard's directory.
	ws, after = mustUpdate(t, after, func(doc any) (any, []verbiage.Path, error) {
		return SetPath(doc, verbiage.MustParsePath("GOALS.NEW.SUMMARY"), "ref file://SUMMARY.json plain words here")
	})
	if after["state/NEW/SUMMARY.json"] != "\"plain words here\"\n" || paths(ws) != "state/NEW/GOAL.json state/NEW/SUMMARY.json" {
		t.Fatalf("string init: writes %s, shard %q", paths(ws), after["state/NEW/SUMMARY.json"])
	}

	d, _ := Load(after, "state/state.json")
	refuse := []struct {
		name  string
		key   string
		value string
		want  error
	}{
		{"no clobber of a mounted shard", "ITEMS.GLOBAL.CONTENT.X", "ref file://../state/OPS/QUEUE.json {}", ErrExists},
		{"no clobber through the state/ rule", "ITEMS.GLOBAL.CONTENT.X", `ref file://state/OPS/GOAL.json {"A": 1}`, ErrExists},
		{"no clobber at its own mount", "GOALS.OPS", `ref file://state/OPS/GOAL.json {}`, ErrExists},
		{"init of the document itself", "ITEMS.GLOBAL.CONTENT.X", `ref file://state.json {}`, ErrExists},
		{"white space after the path only", "ITEMS.GLOBAL.CONTENT.X", "ref file://X.json  ", verbiage.ErrInvalidPath},
		{"white space in the URI", "ITEMS.GLOBAL.CONTENT.X", "ref file://my file.json {}", verbiage.ErrInvalidPath},
		{"escape", "ITEMS.GLOBAL.CONTENT.X", "ref file://../../X.json {}", verbiage.ErrInvalidPath},
		{"payload keys", "ITEMS.GLOBAL.CONTENT.X", `ref file://X.json {"a_b": 1}`, verbiage.ErrInvalidKey},
		{"plain ref to a missing file", "ITEMS.GLOBAL.CONTENT.X", "ref file://MISSING.json", ErrInvalidState},
		{"ref creating a cycle", "ITEMS.GLOBAL.CONTENT.X", "ref file://state.json", ErrInvalidState},
	}
	for _, c := range refuse {
		nv, _, err := SetPath(d.Resolved(), verbiage.MustParsePath(c.key), c.value)
		if err == nil {
			_, _, err = d.Update(after, nv)
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	// An unmounted file may be initialized again (the specification overwrites it).
	_, after = mustUpdate(t, after, func(doc any) (any, []verbiage.Path, error) {
		return DeletePath(doc, verbiage.MustParsePath("ITEMS.GLOBAL.CONTENT.BIG"))
	})
	_, after = mustUpdate(t, after, func(doc any) (any, []verbiage.Path, error) {
		return SetPath(doc, verbiage.MustParsePath("ITEMS.GLOBAL.CONTENT.BIG"), "ref file://ITEMS/BIG.json [0]")
	})
	if after["state/ITEMS/BIG.json"] != canon(t, `[0]`) {
		t.Fatalf("re-init of an unmounted file: %s", after["state/ITEMS/BIG.json"])
	}
}

func TestFileMountedTwice(t *testing.T) {
	fs := memFiles{
		"state/state.json": canon(t, `{"ACTIVE-PROJECT": {}, "GOALS": {}, "ITEMS": {"GLOBAL": {"META": {}, "CONTENT": {"A": "ref file://S.json", "B": "ref file://S.json"}}}}`),
		"state/S.json":     `{"N": 1}`,
	}
	d, err := Load(fs, "state/state.json")
	if err != nil {
		t.Fatalf("a file mounted twice must read: %v", err)
	}
	nv, _, _ := SetPath(d.Resolved(), verbiage.MustParsePath("ITEMS.GLOBAL.CONTENT.A.N"), 2)
	if _, _, err := d.Update(fs, nv); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("diverging writes to one shard: %v", err)
	}
	nv, _, _ = SetPath(nv, verbiage.MustParsePath("ITEMS.GLOBAL.CONTENT.B.N"), 2)
	if ws, _, err := d.Update(fs, nv); err != nil || paths(ws) != "state/S.json" {
		t.Fatalf("the same write through both mounts: %s, %v", paths(ws), err)
	}
}

func TestReplaceResets(t *testing.T) {
	fs := shardedFiles(t)
	d, _ := Load(fs, "state/state.json")
	ws, next, err := d.Replace(fs, Default())
	if err != nil || paths(ws) != "state/state.json" || string(ws[0].Data) != string(DefaultStateDocument()) {
		t.Fatalf("reset: %s, %v", paths(ws), err)
	}
	if len(next.Mounts()) != 0 {
		t.Fatal("reset kept mounts")
	}
}

func canonOrEmpty(s string) string {
	v, err := objects.Decode([]byte(s))
	if err != nil {
		return ""
	}
	b, _ := objects.Encode(v)
	return string(b)
}
