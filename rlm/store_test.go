package rlm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func initState(t *testing.T, st *aiwgstate.Store, in rlm.StateInit) string {
	t.Helper()
	info, _, err := st.States().Init(context.Background(), in, store.WriteOptions{Agent: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	return info.StateID
}

func setVar(t *testing.T, st *aiwgstate.Store, id, name string, v any, vo rlm.VarOptions) *rlm.VarResult {
	t.Helper()
	res, err := st.States().SetVar(context.Background(), id, name, v, vo, store.WriteOptions{Agent: "worker", Source: "task-1a2b3c4d"})
	if err != nil {
		t.Fatalf("set %s: %v", name, err)
	}
	return res
}

func TestRLMVariablesScenario(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	id := initState(t, st, rlm.StateInit{Prompt: "Find all TypeScript errors"})
	storetest.Fsck(t, st)
	if n := strings.Count(storetest.Git(t, st, "rev-list", "main"), "\n"); n != 2 {
		t.Fatalf("init wrote %d commits, want store init + one", n)
	}
	if tags := storetest.Git(t, st, "tag", "-l"); tags != "checkpoints/"+id+"/initial_state\n" {
		t.Fatalf("tags after init: %q", tags)
	}

	// All eight types, inferred or declared.
	cases := []struct {
		name string
		v    any
		typ  rlm.Type
		want rlm.Type
	}{
		{"summary_text", "three risks", "", rlm.TypeText},
		{"risk_count", json.Number("3"), "", rlm.TypeNumber},
		{"is_done", true, "", rlm.TypeBoolean},
		{"nothing_yet", nil, "", rlm.TypeNull},
		{"error_map", map[string]any{"a": json.Number("1")}, "", rlm.TypeJSON},
		{"error_list", []any{"x"}, "", rlm.TypeArray},
		{"report_path", "file:reports/a.md", "", rlm.TypeFilePath},
		{"small_blob", "kept in a file", rlm.TypeFileContent, rlm.TypeFileContent},
		{"list_as_json", []any{json.Number("1")}, rlm.TypeJSON, rlm.TypeJSON},
	}
	for _, c := range cases {
		setVar(t, st, id, c.name, c.v, rlm.VarOptions{Type: c.typ})
		got, err := st.States().Var(ctx, id, c.name, rlm.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != c.want || !objects.Equal(got.Value, c.v) {
			t.Errorf("%s: got %v (%s), want %v (%s)", c.name, got.Value, got.Type, c.v, c.want)
		}
	}
	if _, err := st.States().SetVar(ctx, id, "bad", "x", rlm.VarOptions{Type: rlm.TypeNumber}, store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("type mismatch: %v", err)
	}

	// Each variable is its own file: git log -- <file> is its history.
	setVar(t, st, id, "risk_count", json.Number("4"), rlm.VarOptions{})
	setVar(t, st, id, "summary_text", "four risks", rlm.VarOptions{})
	setVar(t, st, id, "risk_count", json.Number("5"), rlm.VarOptions{})
	file := "sessions/sess-" + strings.TrimPrefix(id, "state-") + "/variables/risk_count.json"
	log := storetest.Git(t, st, "log", "--format=%s", "--", file)
	if log != "update "+file+"\nupdate "+file+"\ncreate "+file+"\n" {
		t.Errorf("git log -- %s:\n%s", file, log)
	}
	if _, err := st.States().SetVar(ctx, id, "risk_count", json.Number("5"), rlm.VarOptions{}, store.WriteOptions{}); !errors.Is(err, store.ErrNoChange) {
		t.Errorf("same value again: %v, want no change", err)
	}

	// Reads never commit; they count.
	head := storetest.Git(t, st, "rev-parse", "main")
	for i := 0; i < 3; i++ {
		st.States().Var(ctx, id, "risk_count", rlm.GetOptions{})
	}
	v, _ := st.States().Var(ctx, id, "risk_count", rlm.GetOptions{})
	if storetest.Git(t, st, "rev-parse", "main") != head || v.AccessCount == nil || *v.AccessCount < 4 {
		t.Errorf("reads: head moved or access_count = %v", v.AccessCount)
	}

	// Refusals name the variable.
	for _, name := range []string{"prompt"} {
		_, err := st.States().SetVar(ctx, id, name, "x", rlm.VarOptions{}, store.WriteOptions{})
		if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), name) {
			t.Errorf("write %s: %v", name, err)
		}
	}
	setVar(t, st, id, "threshold", json.Number("0.8"), rlm.VarOptions{ReadOnly: true})
	if _, err := st.States().SetVar(ctx, id, "threshold", json.Number("1"), rlm.VarOptions{}, store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "threshold") {
		t.Errorf("read-only: %v", err)
	}
	if _, err := st.States().SetVar(ctx, id, strings.Repeat("a", 129), "x", rlm.VarOptions{}, store.WriteOptions{}); !errors.Is(err, verbiage.ErrInvalidName) {
		t.Errorf("long name: %v", err)
	}
	if res := setVar(t, st, id, "data1", "x", rlm.VarOptions{}); len(res.Advice) == 0 {
		t.Error("no naming advice for data1")
	}

	// Scopes resolve state → temporary → tree → session → global.
	setVar(t, st, id, "region", "global-eu", rlm.VarOptions{Scope: rlm.ScopeGlobal})
	if v, _ := st.States().Var(ctx, id, "region", rlm.GetOptions{}); v.Value != "global-eu" {
		t.Fatalf("global read: %v", v.Value)
	}
	setVar(t, st, id, "region", "session-us", rlm.VarOptions{})
	ttl := time.Second
	setVar(t, st, id, "region", "temp-ap", rlm.VarOptions{TTL: &ttl})
	if v, _ := st.States().Var(ctx, id, "region", rlm.GetOptions{}); v.Value != "temp-ap" || v.Metadata.Scope != rlm.ScopeTemporary {
		t.Fatalf("temporary shadows: %v %s", v.Value, v.Metadata.Scope)
	}
	time.Sleep(1100 * time.Millisecond)
	if v, _ := st.States().Var(ctx, id, "region", rlm.GetOptions{}); v.Value != "session-us" {
		t.Fatalf("expired temporary still visible: %v", v.Value)
	}
	m, removed, err := st.States().RemoveExpired(ctx, store.WriteOptions{})
	if err != nil || len(removed) != 1 || m == nil {
		t.Fatalf("RemoveExpired: %v %v", removed, err)
	}
	if _, _, err := st.States().RemoveExpired(ctx, store.WriteOptions{}); !errors.Is(err, store.ErrNoChange) {
		t.Errorf("second RemoveExpired: %v", err)
	}

	// Large values live beside the variable; reads return the content.
	big := strings.Repeat("line of a long report\n", 600)
	res := setVar(t, st, id, "long_report", big, rlm.VarOptions{})
	dataFile := strings.TrimSuffix(res.File, ".json") + ".data"
	if got := storetest.Git(t, st, "show", "main:"+dataFile); got != big {
		t.Fatalf(".data holds %d bytes, want the text", len(got))
	}
	if v, _ := st.States().Var(ctx, id, "long_report", rlm.GetOptions{}); v.Value != big || v.Type != rlm.TypeText {
		t.Fatalf("get of a large value: type %s", v.Type)
	}
	if v, _ := st.States().Var(ctx, id, "long_report", rlm.GetOptions{Raw: true}); v.Value != "file:"+dataFile {
		t.Fatalf("raw: %v", v.Value)
	}
	setVar(t, st, id, "long_report", big+"one more line\n", rlm.VarOptions{})
	if d := storetest.Git(t, st, "diff", "main~1", "main", "--", dataFile); !strings.Contains(d, "+one more line") {
		t.Errorf("diff of a large value is not readable:\n%s", d)
	}

	// rename and remove
	if _, err := st.States().RenameVar(ctx, id, "data1", "first_draft", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().DeleteVar(ctx, id, "first_draft", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().Var(ctx, id, "first_draft", rlm.GetOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removed variable: %v", err)
	}
	storetest.Fsck(t, st)

	out, err := st.States().Export(ctx, id, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
	var doc rlm.Document
	json.Unmarshal(out, &doc)
	if doc.Metadata.CompletionStatus != "incomplete" || doc.Metadata.VariableCount != len(doc.Variables) || doc.Metadata.CheckpointCount != 1 {
		t.Errorf("metadata: %+v", doc.Metadata)
	}
	found := false
	for _, m := range doc.History.Mutations {
		if m.VariableName == "risk_count" && string(m.OldValue) == "4" && string(m.NewValue) == "5" {
			found = true
		}
	}
	if !found {
		t.Error("export lacks the update risk_count 4 -> 5")
	}
}

func validate(t *testing.T, doc []byte) {
	t.Helper()
	sch, err := rlm.CompileSchema(rlm.RLMSchema())
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("export does not validate: %v", err)
	}
}

// The converted schema accepts its own (repaired) examples and refuses
// what the specification's defects let through.
func TestRLMSchemaExamples(t *testing.T) {
	data, err := os.ReadFile("../rlm/state.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := rlm.CompileSchema(data)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Examples []json.RawMessage `json:"examples"`
	}
	json.Unmarshal(data, &s)
	if len(s.Examples) != 3 {
		t.Fatalf("%d examples", len(s.Examples))
	}
	for i, ex := range s.Examples {
		if err := sch.Validate(ex); err != nil {
			t.Errorf("example %d: %v", i, err)
		}
	}
	bad := []string{
		`{"version":"1.0.0","state_id":"state-a1b2c3d4","variables":{"x":{"name":"x","value":1}}}`,
		`{"version":"1.0.0","state_id":"state-a1b2c3d4","variables":{"x":{"name":"x","value":1,"type":null}}}`,
		`{"version":"1.0.0","state_id":"state-a1b2c3d4","variables":{},"history":{"checkpoints":[{"checkpoint_id":"ckpt-init001","name":"a","timestamp":"2026-02-09T10:00:00Z"}]}}`,
		`{"version":"1.0.0","state_id":"state-a1b2c3d4","tree_id":"tree-1","variables":{}}`,
		`{"version":"1.0.0","state_id":"state-a1b2c3d4","variables":{},"metadata":{"created_at":"yesterday"}}`,
	}
	for _, b := range bad {
		if err := sch.Validate([]byte(b)); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
	if err := sch.Validate([]byte(`{"version":"1.0.0","state_id":"state-a1b2c3d4","tree_id":null,"variables":{"Final":null,"x":{"name":"x","value":null,"type":"null"}}}`)); err != nil {
		t.Errorf("null tree_id / Final / type null: %v", err)
	}
}

func TestRLMFinalAndTaskTree(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	parent := initState(t, st, rlm.StateInit{Prompt: "root task", Tree: "tree-1a2b3c4d"})
	child := initState(t, st, rlm.StateInit{Prompt: "leaf task", Parent: parent})
	info, err := st.States().Get(ctx, child, store.ReadOptions{})
	if err != nil || info.TreeID != "tree-1a2b3c4d" || info.ParentStateID != parent {
		t.Fatalf("child: %+v %v", info, err)
	}
	res, err := st.States().SetFinal(ctx, child, "leaf answer", store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// One commit carries the child's Final and the parent's result.
	files := storetest.Git(t, st, "show", "--name-only", "--format=", res.Mutation.Commit)
	if !strings.Contains(files, "states/"+child+"/variables/Final.json") || !strings.Contains(files, "states/"+parent+"/variables/"+rlm.ResultName(child)+".json") {
		t.Fatalf("propagation commit changed:\n%s", files)
	}
	v, err := st.States().Var(ctx, parent, rlm.ResultName(child), rlm.GetOptions{})
	if err != nil || v.Value != "leaf answer" || v.Source != child {
		t.Fatalf("parent result: %+v %v", v, err)
	}
	if _, err := st.States().SetFinal(ctx, child, "another answer", store.WriteOptions{}); !errors.Is(err, rlm.ErrComplete) || !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("second Final: %v", err)
	}
	pi, _ := st.States().Get(ctx, parent, store.ReadOptions{})
	if pi.CompletionStatus != "incomplete" || len(pi.Children) != 1 {
		t.Fatalf("parent: %+v", pi)
	}
	ci, _ := st.States().Get(ctx, "", store.ReadOptions{})
	if ci.StateID != child || ci.CompletionStatus != "complete" {
		t.Fatalf("newest state: %+v", ci)
	}
	storetest.Fsck(t, st)
	out, err := st.States().Export(ctx, child, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
}

func TestRLMCheckpointsAndRollback(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	id := initState(t, st, rlm.StateInit{Prompt: "p"})
	other := initState(t, st, rlm.StateInit{Prompt: "other"})
	setVar(t, st, id, "plan", map[string]any{"steps": []any{"a", "b"}}, rlm.VarOptions{})
	setVar(t, st, id, "long_value", strings.Repeat("x", 11000), rlm.VarOptions{})
	ck, err := st.States().CreateCheckpoint(ctx, id, "before_decomposition", "plan agreed", store.WriteOptions{Agent: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	if !verbiage.ValidID("ckpt", ck.ID) {
		t.Fatalf("id %s", ck.ID)
	}
	if _, err := st.States().CreateCheckpoint(ctx, id, "before_decomposition", "", store.WriteOptions{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate checkpoint: %v", err)
	}
	shown := storetest.Git(t, st, "show", "--no-patch", "checkpoints/"+id+"/before_decomposition")
	for _, want := range []string{"Tagger: planner", "Checkpoint: " + ck.ID, "State: " + id, "plan agreed"} {
		if !strings.Contains(shown, want) {
			t.Errorf("git show lacks %q:\n%s", want, shown)
		}
	}
	snapshot := func(rev string) string {
		return storetest.Git(t, st, "ls-tree", "-r", rev, "states/"+id, "sessions/sess-"+strings.TrimPrefix(id, "state-"), "temp/"+id)
	}
	before := snapshot("main")
	otherBefore := storetest.Git(t, st, "ls-tree", "-r", "main", "states/"+other)
	setVar(t, st, id, "plan", "replaced", rlm.VarOptions{})
	setVar(t, st, id, "long_value", "short now", rlm.VarOptions{})
	setVar(t, st, id, "extra", json.Number("1"), rlm.VarOptions{})
	st.States().SetFinal(ctx, id, "done", store.WriteOptions{})
	setVar(t, st, other, "unrelated", json.Number("2"), rlm.VarOptions{})
	otherAfter := storetest.Git(t, st, "ls-tree", "-r", "main", "states/"+other, "sessions/sess-"+strings.TrimPrefix(other, "state-"))
	commits := strings.Count(storetest.Git(t, st, "rev-list", "main"), "\n")

	m, _, err := st.States().Rollback(ctx, id, "before_decomposition", rlm.RollbackOptions{}, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot("main"); got != before {
		t.Fatalf("rollback is not byte-identical:\n%s\nwant:\n%s", got, before)
	}
	if got := strings.Count(storetest.Git(t, st, "rev-list", "main"), "\n"); got != commits+1 {
		t.Fatalf("rollback wrote %d commits", got-commits)
	}
	if storetest.Git(t, st, "ls-tree", "-r", "main", "states/"+other, "sessions/sess-"+strings.TrimPrefix(other, "state-")) != otherAfter || otherBefore == "" {
		t.Fatal("rollback touched another state")
	}
	msg := storetest.Git(t, st, "log", "-1", "--format=%B", m.Commit)
	if !strings.Contains(msg, "Operation: rollback") || !strings.Contains(msg, "Checkpoint: "+ck.ID) {
		t.Fatalf("rollback trailers:\n%s", msg)
	}
	storetest.Fsck(t, st)

	// 100 checkpoints at most; the 101st says what to prune.
	for i := len(mustList(t, st, id)); i < checkpoint.MaxPerState; i++ {
		if _, err := st.States().CreateCheckpoint(ctx, id, fmt.Sprintf("step_%03d", i), "", store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = st.States().CreateCheckpoint(ctx, id, "one_too_many", "", store.WriteOptions{})
	var le *checkpoint.LimitError
	if !errors.Is(err, store.ErrLimit) || !errors.As(err, &le) || len(le.Oldest) == 0 || !strings.Contains(err.Error(), le.Oldest[0]) {
		t.Fatalf("101st checkpoint: %v", err)
	}
	removed, err := st.States().PruneCheckpoints(ctx, id, 90, store.ReadOptions{})
	if err != nil || len(removed) != 10 {
		t.Fatalf("prune: %d %v", len(removed), err)
	}
	if _, err := st.States().DeleteCheckpoint(ctx, id, "step_050", store.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(mustList(t, st, id)); n != 89 {
		t.Fatalf("%d checkpoints left", n)
	}
	storetest.Fsck(t, st)
}

func mustList(t *testing.T, st *aiwgstate.Store, id string) []checkpoint.Checkpoint {
	cks, err := st.States().Checkpoints(context.Background(), id, store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cks
}

func TestRLMVariableLimit(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	id := initState(t, st, rlm.StateInit{Prompt: "p"})
	dir := "sessions/sess-" + strings.TrimPrefix(id, "state-") + "/variables/"
	var ops []store.Op
	for i := 0; i < rlm.MaxVariables-2; i++ {
		ops = append(ops, store.Op{Op: "put", File: fmt.Sprintf("%sv_%04d.json", dir, i),
			Value: []byte(fmt.Sprintf(`{"name":"v_%04d","value":%d,"type":"number","metadata":{"scope":"session"}}`, i, i))})
	}
	if _, err := st.Apply(ctx, ops, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := st.States().SetVar(ctx, id, "one_more", json.Number("1"), rlm.VarOptions{}, store.WriteOptions{})
	if !errors.Is(err, store.ErrLimit) || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("1001st variable: %v", err)
	}
	setVar(t, st, id, "v_0001", json.Number("7"), rlm.VarOptions{}) // updates stay allowed

	// Another state, in another session, may not create a global variable
	// either: the full state would see it too.
	other := initState(t, st, rlm.StateInit{Prompt: "q"})
	_, err = st.States().SetVar(ctx, other, "shared_cfg", json.Number("1"), rlm.VarOptions{Scope: rlm.ScopeGlobal}, store.WriteOptions{})
	if !errors.Is(err, store.ErrLimit) || !strings.Contains(err.Error(), id) {
		t.Fatalf("a global variable past the limit of %s, set from %s: %v", id, other, err)
	}
	setVar(t, st, other, "own_value", json.Number("1"), rlm.VarOptions{}) // its own scope is its own
}

func TestRLMImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := storetest.New(t)
	id := initState(t, src, rlm.StateInit{Prompt: "p"})
	setVar(t, src, id, "a_value", json.Number("1"), rlm.VarOptions{})
	setVar(t, src, id, "a_value", json.Number("2"), rlm.VarOptions{})
	setVar(t, src, id, "shared_config", "x", rlm.VarOptions{Scope: rlm.ScopeGlobal, Description: "cfg"})
	src.States().RenameVar(ctx, id, "a_value", "b_value", "", store.WriteOptions{})
	src.States().CreateCheckpoint(ctx, id, "middle", "half way", store.WriteOptions{})
	src.States().SetFinal(ctx, id, "answer", store.WriteOptions{})
	out, err := src.States().Export(ctx, id, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dst := storetest.New(t)
	if _, err := dst.States().Import(ctx, out, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	storetest.Fsck(t, dst)
	again, err := dst.States().Export(ctx, id, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := normalize(t, out), normalize(t, again)
	if a != b {
		os.WriteFile(os.TempDir()+"/rt-a.json", []byte(a), 0o644)
		os.WriteFile(os.TempDir()+"/rt-b.json", []byte(b), 0o644)
		t.Fatalf("round trip differs (see $TMPDIR/rt-a.json, rt-b.json)")
	}
	if _, err := dst.States().Import(ctx, out, store.WriteOptions{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second import: %v", err)
	}
	if _, err := dst.States().Import(ctx, []byte(`{"version":"1.0.0","state_id":"nope","variables":{}}`), store.WriteOptions{}); !errors.Is(err, rlm.ErrInvalidState) {
		t.Fatalf("invalid document: %v", err)
	}
}

// normalize drops what an import cannot keep (commit ids, access counts,
// sub-second times) and the prompt's default source.
func normalize(t *testing.T, doc []byte) string {
	var d rlm.Document
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	for i := range d.History.Mutations {
		delete(d.History.Mutations[i].Metadata, "commit")
	}
	for _, v := range d.Variables {
		v.AccessCount = nil
		v.Source = ""
		v.CreatedAt, v.UpdatedAt = "", ""
	}
	d.Metadata.CreatedAt, d.Metadata.TotalSizeBytes = "", 0
	b, _ := json.MarshalIndent(d, "", " ")
	return string(b)
}

// TestVariablesKeepTheDocumentLimit: limits.max_document_bytes holds for
// a variable's files as for documents, inline or kept beside the state.
func TestVariablesKeepTheDocumentLimit(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	id := initState(t, st, rlm.StateInit{Prompt: "p"})
	if _, err := st.SetConfig(ctx, "limits.max_document_bytes", []byte(`2000`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	before := storetest.Git(t, st, "rev-parse", "main")
	for _, v := range []string{strings.Repeat("x", 3000), strings.Repeat("y", 50000)} {
		if _, err := st.States().SetVar(ctx, id, "big", v, rlm.VarOptions{}, store.WriteOptions{}); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("a %d-byte variable over a 2000-byte limit: %v", len(v), err)
		}
	}
	if storetest.Git(t, st, "rev-parse", "main") != before {
		t.Fatal("a refused variable was committed")
	}
	setVar(t, st, id, "small", "fits", rlm.VarOptions{})
	storetest.Fsck(t, st)
}

// TestRLMImportRefusedChangesNothing: an import over the specification's limits is
// refused before it writes, and one that fails part way (here a
// checkpoint named twice) takes back its commits and checkpoints.
func TestRLMImportRefusedChangesNothing(t *testing.T) {
	ctx := context.Background()
	src := storetest.New(t)
	id := initState(t, src, rlm.StateInit{Prompt: "p"})
	setVar(t, src, id, "a_value", json.Number("1"), rlm.VarOptions{})
	src.States().CreateCheckpoint(ctx, id, "middle", "half way", store.WriteOptions{})
	setVar(t, src, id, "a_value", json.Number("2"), rlm.VarOptions{})
	out, err := src.States().Export(ctx, id, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(map[string]any)) []byte {
		var d map[string]any
		json.Unmarshal(out, &d)
		f(d)
		b, _ := json.Marshal(d)
		return b
	}
	tooMany := edit(func(d map[string]any) {
		vars := d["variables"].(map[string]any)
		proto := vars["a_value"].(map[string]any)
		for i := len(vars); i <= rlm.MaxVariables; i++ {
			v := map[string]any{}
			for k, x := range proto {
				v[k] = x
			}
			name := fmt.Sprintf("v_%04d", i)
			v["name"] = name
			vars[name] = v
		}
	})
	twice := edit(func(d map[string]any) {
		h := d["history"].(map[string]any)
		cks := h["checkpoints"].([]any)
		h["checkpoints"] = append(cks, cks[len(cks)-1])
	})
	mistyped := edit(func(d map[string]any) {
		v := d["variables"].(map[string]any)["a_value"].(map[string]any)
		v["type"], v["value"] = "number", "s"
	})
	dst := storetest.New(t)
	before := storetest.Git(t, dst, "for-each-ref")
	head := storetest.Git(t, dst, "rev-parse", "main")
	for _, c := range []struct {
		name string
		doc  []byte
		want error
	}{
		{"over 1,000 variables", tooMany, store.ErrLimit},
		{"a checkpoint named twice", twice, store.ErrExists},
		{"a value that is not of its declared type", mistyped, rlm.ErrInvalidState},
	} {
		if _, err := dst.States().Import(ctx, c.doc, store.WriteOptions{}); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if storetest.Git(t, dst, "rev-parse", "main") != head || storetest.Git(t, dst, "for-each-ref") != before {
			t.Fatalf("%s: the refused import left commits or checkpoints:\n%s", c.name, storetest.Git(t, dst, "for-each-ref"))
		}
	}
	if _, err := dst.States().Import(ctx, out, store.WriteOptions{}); err != nil {
		t.Fatalf("the document itself: %v", err)
	}
	storetest.Fsck(t, dst)
}

// TestRLMImportKeepsVariableSources: a variable's source as exported
// survives an import, even where it differs from the source of the
// mutation that last wrote it (the specification's examples have such variables).
func TestRLMImportKeepsVariableSources(t *testing.T) {
	ctx := context.Background()
	src := storetest.New(t)
	id := initState(t, src, rlm.StateInit{Prompt: "p"})
	setVar(t, src, id, "error_list", []any{"x"}, rlm.VarOptions{})
	out, err := src.States().Export(ctx, id, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	json.Unmarshal(out, &d)
	d["variables"].(map[string]any)["error_list"].(map[string]any)["source"] = "task-scan001"
	edited, _ := json.Marshal(d)
	dst := storetest.New(t)
	if _, err := dst.States().Import(ctx, edited, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	v, err := dst.States().Var(ctx, id, "error_list", rlm.GetOptions{})
	if err != nil || v.Source != "task-scan001" {
		t.Fatalf("error_list after import: source %q, %v", v.Source, err)
	}
}

// TestRollbackOfANamedSession: a state given its session by name restores
// it when no other state uses it; when another does, a rollback whose only
// changes are in that session is refused rather than reported as no
// change, and --shared (RollbackOptions.Shared) restores it.
func TestRollbackOfANamedSession(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	id := initState(t, st, rlm.StateInit{Prompt: "p", Session: "sess-aaaa1111"})
	setVar(t, st, id, "risk_count", json.Number("1"), rlm.VarOptions{})
	if _, err := st.States().CreateCheckpoint(ctx, id, "cp1", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	setVar(t, st, id, "risk_count", json.Number("2"), rlm.VarOptions{})
	get := func() string {
		v, err := st.States().Var(ctx, id, "risk_count", rlm.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v.Value)
	}
	if _, _, err := st.States().Rollback(ctx, id, "cp1", rlm.RollbackOptions{}, store.WriteOptions{}); err != nil || get() != "1" {
		t.Fatalf("rollback of a session no other state uses: %v, risk_count %s", err, get())
	}

	// Now another state shares the session.
	initState(t, st, rlm.StateInit{Prompt: "q", Session: "sess-aaaa1111"})
	setVar(t, st, id, "risk_count", json.Number("3"), rlm.VarOptions{})
	head := storetest.Git(t, st, "rev-parse", "main")
	if _, _, err := st.States().Rollback(ctx, id, "cp1", rlm.RollbackOptions{}, store.WriteOptions{}); !errors.Is(err, store.ErrUsage) || !strings.Contains(err.Error(), "sessions/sess-aaaa1111") {
		t.Errorf("rollback with only a shared session changed: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Error("the refused rollback wrote")
	}
	if _, _, err := st.States().Rollback(ctx, id, "cp1", rlm.RollbackOptions{Shared: true}, store.WriteOptions{}); err != nil || get() != "1" {
		t.Errorf("rollback --shared: %v, risk_count %s", err, get())
	}
}

// TestRollbackOfAParentRestoresItsSession: a parent's own session is
// rolled back though its children share it.
func TestRollbackOfAParentRestoresItsSession(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	parent := initState(t, st, rlm.StateInit{Prompt: "p"})
	initState(t, st, rlm.StateInit{Prompt: "child", Parent: parent})
	if _, err := st.States().CreateCheckpoint(ctx, parent, "ck1", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	setVar(t, st, parent, "own_count", json.Number("1"), rlm.VarOptions{})
	if _, _, err := st.States().Rollback(ctx, parent, "ck1", rlm.RollbackOptions{}, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().Var(ctx, parent, "own_count", rlm.GetOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("own_count after the rollback: %v", err)
	}
}

// TestRLMStateEnds: a state ends as error or cancelled (one commit to its
// header), its variables are read-only afterwards, the export says so
// (valid against the specification's schema), and a rollback to a checkpoint
// taken before reopens it. A complete state cannot end otherwise.
func TestRLMStateEnds(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	id := initState(t, st, rlm.StateInit{Prompt: "p"})
	setVar(t, st, id, "plan", "draft", rlm.VarOptions{})
	if _, err := st.States().CreateCheckpoint(ctx, id, "before_end", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.States().End(ctx, id, "done", "", store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("an unknown status: %v", err)
	}
	info, m, err := st.States().End(ctx, id, "cancelled", "user stopped it", store.WriteOptions{Agent: "operator"})
	if err != nil || info.CompletionStatus != "cancelled" || info.EndReason != "user stopped it" {
		t.Fatalf("end: %+v %v", info, err)
	}
	if files := storetest.Git(t, st, "show", "--name-only", "--format=", m.Commit); files != rlm.HeaderPath(id)+"\n" {
		t.Errorf("the end's commit changed:\n%s", files)
	}
	if _, err := st.States().SetVar(ctx, id, "plan", "final draft", rlm.VarOptions{}, store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("a write to an ended state: %v", err)
	}
	if _, err := st.States().SetFinal(ctx, id, "answer", store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("a Final for an ended state: %v", err)
	}
	if _, err := st.States().DeleteVar(ctx, id, "plan", "", store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("a delete in an ended state: %v", err)
	}
	if _, _, err := st.States().End(ctx, id, "error", "", store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "already ended") {
		t.Errorf("ending twice: %v", err)
	}
	out, err := st.States().Export(ctx, id, rlm.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
	if !strings.Contains(string(out), `"completion_status": "cancelled"`) {
		t.Errorf("the export does not say cancelled")
	}
	// Imported elsewhere, it is ended there too.
	other := storetest.New(t)
	if info, err := other.States().Import(ctx, out, store.WriteOptions{}); err != nil || info.CompletionStatus != "cancelled" {
		t.Fatalf("import: %+v %v", info, err)
	}
	if info, _ := other.States().Get(ctx, id, store.ReadOptions{}); info.CompletionStatus != "cancelled" {
		t.Errorf("imported state: %s", info.CompletionStatus)
	}
	if _, err := other.States().SetVar(ctx, id, "plan", "x", rlm.VarOptions{}, store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("a write to the imported ended state: %v", err)
	}
	// No child starts under an ended state.
	if _, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "child", Parent: id}, store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("a child of an ended state: %v", err)
	}
	if _, _, err := st.States().Rollback(ctx, id, "before_end", rlm.RollbackOptions{}, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if info, _ := st.States().Get(ctx, id, store.ReadOptions{}); info.CompletionStatus != "incomplete" {
		t.Errorf("after rollback: %s", info.CompletionStatus)
	}
	if _, err := st.States().SetFinal(ctx, id, "answer", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.States().End(ctx, id, "error", "", store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "complete") {
		t.Errorf("ending a complete state: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestChildFinalOfAnEndedParent: a child that completes after its parent
// ended completes; its result is not written into the parent, and its
// commit says so.
func TestChildFinalOfAnEndedParent(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	parent := initState(t, st, rlm.StateInit{Prompt: "root", Tree: "tree-0a0b0c0d"})
	child := initState(t, st, rlm.StateInit{Prompt: "leaf", Parent: parent})
	if _, _, err := st.States().End(ctx, parent, "cancelled", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := st.States().SetFinal(ctx, child, "late answer", store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Parent-Ended,valueonly)", res.Mutation.Commit); strings.TrimSpace(got) != parent+" (cancelled)" {
		t.Errorf("Parent-Ended trailer: %q", got)
	}
	if _, err := st.States().Var(ctx, parent, rlm.ResultName(child), rlm.GetOptions{}); err == nil {
		t.Error("the result was written into the ended parent")
	}
}

// TestParentFinalWaitsForChildren: a parent sets Final once all its
// children have completed or ended (the RLM state specification's completion propagation).
func TestParentFinalWaitsForChildren(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	parent := initState(t, st, rlm.StateInit{Prompt: "root", Tree: "tree-1a1a1a1a"})
	done := initState(t, st, rlm.StateInit{Prompt: "leaf 1", Parent: parent})
	running := initState(t, st, rlm.StateInit{Prompt: "leaf 2", Parent: parent})
	if _, err := st.States().SetFinal(ctx, done, "one", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := st.States().SetFinal(ctx, parent, "all", store.WriteOptions{})
	if !errors.Is(err, rlm.ErrInvalidState) || !strings.Contains(err.Error(), running) || strings.Contains(err.Error(), done) {
		t.Fatalf("Final with a child running: %v", err)
	}
	if _, _, err := st.States().End(ctx, running, "cancelled", "not needed", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().SetFinal(ctx, parent, "all", store.WriteOptions{}); err != nil {
		t.Errorf("Final once every child completed or ended: %v", err)
	}
}
