package aiwgstate_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/docschema"
)

const agentSchema = `{"type":"object","required":["status"],"properties":{"status":{"enum":["idle","busy","down"]}}}`

// TestSchemasGuardWrites: once a schema rules a path, a write that would
// leave a document there breaking it changes nothing; a schema a document
// already breaks is refused; writes elsewhere, and deletions, pass.
func TestSchemasGuardWrites(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	wo := aiwgstate.WriteOptions{Agent: "conductor"}
	if _, err := st.Put(ctx, "agents/pulse.json", []byte(`{"status":"asleep"}`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddSchema(ctx, "agent", []string{"agents/*.json"}, []byte(agentSchema), wo); !errors.Is(err, docschema.ErrInvalid) || !strings.Contains(err.Error(), "agents/pulse.json") {
		t.Fatalf("a schema a document already breaks: %v", err)
	}
	if _, err := st.Put(ctx, "agents/pulse.json", []byte(`{"status":"idle"}`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddSchema(ctx, "agent", []string{"agents/*.json"}, []byte(agentSchema), wo); err != nil {
		t.Fatal(err)
	}
	head := git(t, st, "rev-parse", "HEAD")
	refused := map[string]error{}
	_, refused["set"] = st.Set(ctx, "agents/pulse.json", "status", []byte(`"asleep"`), wo)
	_, refused["put"] = st.Put(ctx, "agents/beat.json", []byte(`{}`), wo)
	_, refused["apply"] = st.Apply(ctx, []aiwgstate.Op{{Op: "put", File: "ok.json", Value: []byte(`1`)}, {Op: "put", File: "agents/x.json", Value: []byte(`"x"`)}}, wo)
	for op, err := range refused {
		if !errors.Is(err, docschema.ErrInvalid) {
			t.Errorf("%s that breaks the schema: %v", op, err)
		}
	}
	if !strings.Contains(refused["set"].Error(), "agents/pulse.json breaks its schema .aiwg/schemas/agent.schema.json: field status") {
		t.Errorf("the refusal names no file and field: %v", refused["set"])
	}
	if got := git(t, st, "rev-parse", "HEAD"); got != head {
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
	if bad, err := st.CheckSchemas(ctx, aiwgstate.ReadOptions{}); err != nil || len(bad) != 0 {
		t.Errorf("check: %+v %v", bad, err)
	}
	// Plain git is not checked as it writes; check finds what it left.
	blob := strings.TrimSpace(gitIn(t, st, `{"status":"on fire"}`, "hash-object", "-w", "--stdin"))
	idx := filepath.Join(t.TempDir(), "index")
	gitEnv(t, st, idx, "read-tree", "HEAD")
	gitEnv(t, st, idx, "update-index", "--add", "--cacheinfo", "100644,"+blob+",agents/byhand.json")
	tree := strings.TrimSpace(gitEnv(t, st, idx, "write-tree"))
	c := strings.TrimSpace(git(t, st, "commit-tree", "-p", "HEAD", "-m", "by hand", tree))
	git(t, st, "update-ref", "refs/heads/main", c)
	if bad, err := st.CheckSchemas(ctx, aiwgstate.ReadOptions{}); err != nil || len(bad) != 1 || bad[0].File != "agents/byhand.json" {
		t.Errorf("check after plain git: %+v %v", bad, err)
	}
	if bad, err := st.CheckSchemas(ctx, aiwgstate.ReadOptions{At: "HEAD~1"}); err != nil || len(bad) != 0 {
		t.Errorf("check before it: %+v %v", bad, err)
	}
	if _, err := st.Delete(ctx, "agents/byhand.json", "", wo); err != nil {
		t.Fatal(err)
	}
	rules, err := st.SchemaRules(ctx, aiwgstate.ReadOptions{})
	if err != nil || len(rules.Rules) != 1 || rules.Rules[0].Schema != ".aiwg/schemas/agent.schema.json" {
		t.Errorf("rules: %+v %v", rules, err)
	}
	if _, err := st.RemoveSchema(ctx, "agent", wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "agents/pulse.json", "status", []byte(`"asleep"`), wo); err != nil {
		t.Errorf("a write once the schema is gone: %v", err)
	}
	if _, err := st.RemoveSchema(ctx, "agent", wo); !errors.Is(err, aiwgstate.ErrNotFound) {
		t.Errorf("removing it again: %v", err)
	}
	fsck(t, st)
}
