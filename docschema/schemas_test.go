package docschema_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

const agentSchema = `{"type":"object","required":["status"],"properties":{"status":{"enum":["idle","busy","down"]}}}`

// TestSchemasGuardWrites: once a schema rules a path, a write that would
// leave a document there breaking it changes nothing; a schema a document
// already breaks is refused; writes elsewhere, and deletions, pass.
func TestSchemasGuardWrites(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "conductor"}
	if _, err := st.Put(ctx, "agents/pulse.json", []byte(`{"status":"asleep"}`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Schemas().Add(ctx, "agent", []string{"agents/*.json"}, []byte(agentSchema), wo); !errors.Is(err, docschema.ErrInvalid) || !strings.Contains(err.Error(), "agents/pulse.json") {
		t.Fatalf("a schema a document already breaks: %v", err)
	}
	if _, err := st.Put(ctx, "agents/pulse.json", []byte(`{"status":"idle"}`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Schemas().Add(ctx, "agent", []string{"agents/*.json"}, []byte(agentSchema), wo); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	refused := map[string]error{}
	_, refused["set"] = st.Set(ctx, "agents/pulse.json", "status", []byte(`"asleep"`), wo)
	_, refused["put"] = st.Put(ctx, "agents/beat.json", []byte(`{}`), wo)
	_, refused["apply"] = st.Apply(ctx, []store.Op{{Op: "put", File: "ok.json", Value: []byte(`1`)}, {Op: "put", File: "agents/x.json", Value: []byte(`"x"`)}}, wo)
	for op, err := range refused {
		if !errors.Is(err, docschema.ErrInvalid) {
			t.Errorf("%s that breaks the schema: %v", op, err)
		}
	}
	if !strings.Contains(refused["set"].Error(), "agents/pulse.json breaks its schema .aiwg/schemas/agent.schema.json: field status") {
		t.Errorf("the refusal names no file and field: %v", refused["set"])
	}
	if got := storetest.Git(t, st, "rev-parse", "HEAD"); got != head {
		t.Error("a refused write made a commit")
	}
	if _, err := st.Set(ctx, "agents/beat.json", "status", []byte(`"busy"`), wo); err != nil {
		t.Errorf("a valid document: %v", err)
	}
	if _, err := st.Set(ctx, "plan.json", "status", []byte(`"anything"`), wo); err != nil {
		t.Errorf("a write outside the ruled paths: %v", err)
	}
	if _, err := st.Delete(ctx, "agents/beat.json", "", wo); err != nil {
		t.Errorf("a deletion: %v", err)
	}
	// The rules and schemas are versioned files; check reads any revision.
	if bad, err := st.Schemas().Check(ctx, store.ReadOptions{}); err != nil || len(bad) != 0 {
		t.Errorf("check: %+v %v", bad, err)
	}
	// Plain git is not checked as it writes; check finds what it left.
	storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, "agents/byhand.json", `{"status":"on fire"}`))
	if bad, err := st.Schemas().Check(ctx, store.ReadOptions{}); err != nil || len(bad) != 1 || bad[0].File != "agents/byhand.json" {
		t.Errorf("check after plain git: %+v %v", bad, err)
	}
	if bad, err := st.Schemas().Check(ctx, store.ReadOptions{At: "HEAD~1"}); err != nil || len(bad) != 0 {
		t.Errorf("check before it: %+v %v", bad, err)
	}
	if _, err := st.Delete(ctx, "agents/byhand.json", "", wo); err != nil {
		t.Fatal(err)
	}
	rules, err := st.Schemas().Rules(ctx, store.ReadOptions{})
	if err != nil || len(rules.Rules) != 1 || rules.Rules[0].Schema != ".aiwg/schemas/agent.schema.json" {
		t.Errorf("rules: %+v %v", rules, err)
	}
	if _, err := st.Schemas().Remove(ctx, "agent", wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "agents/pulse.json", "status", []byte(`"asleep"`), wo); err != nil {
		t.Errorf("a write once the schema is gone: %v", err)
	}
	if _, err := st.Schemas().Remove(ctx, "agent", wo); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removing it again: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestSchemaRulesKeepTheirPlace: replacing a schema keeps its rule where
// it stands (the first match decides), and a schema may refer to another
// in the store.
func TestSchemaRulesKeepTheirPlace(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{}
	if _, err := st.Schemas().Add(ctx, "status", []string{"x/*.json"}, []byte(`{"type":"string"}`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Schemas().Add(ctx, "strict", []string{"x/*.json"}, []byte(`{"$ref":"status.schema.json"}`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Schemas().Add(ctx, "loose", []string{"x/**"}, []byte(`{}`), wo); err != nil {
		t.Fatal(err)
	}
	// strict is second, after status; replacing it keeps it there.
	if _, err := st.Schemas().Add(ctx, "strict", []string{"x/*.json"}, []byte(`{"$ref":"status.schema.json","maxLength":3}`), wo); err != nil {
		t.Fatal(err)
	}
	rules, _ := st.Schemas().Rules(ctx, store.ReadOptions{})
	var order []string
	for _, r := range rules.Rules {
		order = append(order, r.Schema)
	}
	if strings.Join(order, " ") != ".aiwg/schemas/status.schema.json .aiwg/schemas/strict.schema.json .aiwg/schemas/loose.schema.json" {
		t.Errorf("rules after a replace: %v", order)
	}
	if _, err := st.Put(ctx, "x/a.json", []byte(`7`), wo); !errors.Is(err, docschema.ErrInvalid) {
		t.Errorf("a document the first rule refuses: %v", err)
	}
	// A schema's $ref to a store file follows that file as it changes.
	if _, err := st.Schemas().Remove(ctx, "status", wo); err == nil {
		t.Error("removed a schema another refers to") // strict's $ref would dangle
	}
}

// TestSchemasCoverEveryStagedFile: a rollback restores files it records
// as one directory; each is checked against its schema.
func TestSchemasCoverEveryStagedFile(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "p"}, store.WriteOptions{Agent: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	id := info.StateID
	setVar := func(v any) {
		t.Helper()
		if _, err := st.States().SetVar(ctx, id, "risk_count", v, rlm.VarOptions{Scope: "session"}, store.WriteOptions{Agent: "worker"}); err != nil {
			t.Fatal(err)
		}
	}
	setVar(1)
	if _, err := st.States().CreateCheckpoint(ctx, id, "one", "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	setVar("many")
	if _, err := st.Schemas().Add(ctx, "text_vars", []string{"sessions/*/variables/risk_count.json"}, []byte(`{"properties":{"value":{"type":"string"}}}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.States().Rollback(ctx, id, "one", rlm.RollbackOptions{}, store.WriteOptions{}); !errors.Is(err, docschema.ErrInvalid) {
		t.Errorf("a rollback that restores a document breaking its schema: %v", err)
	}
}

// TestUnrelatedInvalidDocumentDoesNotBlockSchemas: a document plain git
// left breaking its schema blocks no change to another schema.
func TestUnrelatedInvalidDocumentDoesNotBlockSchemas(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Schemas().Add(ctx, "a", []string{"a/*.json"}, []byte(`{"type":"string"}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, "a/bad.json", `7`))
	if _, err := st.Schemas().Add(ctx, "b", []string{"b/*.json"}, []byte(`{}`), store.WriteOptions{}); err != nil {
		t.Errorf("a schema for other paths: %v", err)
	}
	if _, err := st.Schemas().Add(ctx, "a", []string{"a/*.json"}, []byte(`{"type":"string","maxLength":9}`), store.WriteOptions{}); !errors.Is(err, docschema.ErrInvalid) {
		t.Errorf("a change to the schema the document breaks: %v", err)
	}
}

// TestSchemasGuardFastForwards: a fast-forward writes no commit for the
// write checks, so the merge checks what the branch brings itself.
func TestSchemasGuardFastForwards(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Schemas().Add(ctx, "a", []string{"d/*.json"}, []byte(`{"type":"object","required":["must"]}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A branch plain git made, one commit ahead, bringing a bad document.
	storetest.Git(t, st, "update-ref", "refs/heads/bad", storetest.PlainCommit(t, st, "d/x.json", `{}`))
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	if _, err := st.Merges().Merge(ctx, "bad", merge.MergeOptions{}); !errors.Is(err, docschema.ErrInvalid) {
		t.Errorf("a fast-forward bringing a document that breaks its schema: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "HEAD") != head {
		t.Error("the refused fast-forward moved the branch")
	}
}

// TestBrokenSchemaRulesHaveAWayOut: rules broken by plain git refuse
// writes as a broken store (exit 3), and schema rm --all clears them.
func TestBrokenSchemaRulesHaveAWayOut(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, ".aiwg/schemas.json", `{"rules":[{"paths":["x/*"],"schema":"nope.json"}]}`))
	var be *store.BrokenFileError
	if _, err := st.Put(ctx, "y.json", []byte(`1`), store.WriteOptions{}); !errors.Is(err, store.ErrInvalidRecord) || !errors.As(err, &be) || be.Kind != store.BrokenSchemaRules {
		t.Fatalf("a write under broken rules: %v", err)
	}
	if _, err := st.Schemas().Remove(ctx, "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "y.json", []byte(`1`), store.WriteOptions{}); err != nil {
		t.Errorf("a write once the rules are cleared: %v", err)
	}
	// A schema refers only to schemas in .aiwg/schemas/.
	if _, err := st.Schemas().Add(ctx, "c", []string{"c/*.json"}, []byte(`{"$ref":"file:///y.json"}`), store.WriteOptions{}); !errors.Is(err, docschema.ErrRules) {
		t.Errorf("a $ref to an ordinary document: %v", err)
	}
}

// TestFastForwardSkipsUntouchedInvalidDocuments: a branch that changes
// other schemas fast-forwards over a document plain git left invalid
// under a schema it does not touch, as a merge commit would.
func TestFastForwardSkipsUntouchedInvalidDocuments(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Schemas().Add(ctx, "a", []string{"a/*.json"}, []byte(`{"type":"string"}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, "a/bad.json", `7`))
	if _, err := st.CreateBranch(ctx, "f", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Schemas().Add(ctx, "note", []string{"notes/*.json"}, []byte(`{}`), store.WriteOptions{Branch: "f"}); err != nil {
		t.Fatal(err)
	}
	if res, err := st.Merges().Merge(ctx, "f", merge.MergeOptions{}); err != nil || res.Status != merge.MergeFastForward {
		t.Errorf("a fast-forward changing other schemas: %+v %v", res, err)
	}
}

// plainCommit commits path with body on HEAD by plain git, past the
// store's rules, and returns the commit.

// TestFsckChecksSchemas: the store's fsck runs the schemas' check after
// the core's, and reports a document plain git left breaking its schema.
func TestFsckChecksSchemas(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Schemas().Add(ctx, "a", []string{"a/*.json"}, []byte(`{"type":"string"}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, "a/bad.json", `7`))
	rep, err := st.Fsck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Checks, ", "); !strings.HasSuffix(got, "history index, manifest, policy, ttl, schemas") {
		t.Errorf("checks: %s", got)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Check != "schemas" || rep.Problems[0].File != "a/bad.json" {
		t.Errorf("problems: %+v", rep.Problems)
	}
}
