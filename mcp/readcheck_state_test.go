package mcp

import (
	"context"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// TestStateReadsMeetTheProfile: an RLM state's header, variables and
// checkpoints are documents a sandboxed agent reads only where its
// profile's documents.read lets it.
func TestStateReadsMeetTheProfile(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	admin := store.WriteOptions{Agent: "admin"}
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "do x"}, admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().SetVar(ctx, info.StateID, "apikey", "SECRETVAR", rlm.VarOptions{}, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := st.States().CreateCheckpoint(ctx, info.StateID, "c1", "", admin); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetPolicy(ctx, []byte(sandboxPolicy), admin); err != nil {
		t.Fatal(err)
	}
	c := connect(t, st, "scraper")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"var_get", map[string]any{"state": info.StateID, "name": "apikey"}},
		{"state_show", map[string]any{"id": info.StateID}},
		{"state_status", map[string]any{"id": info.StateID}},
	} {
		if e := c.fail(tc.tool, tc.args); code(e) != 3 || e["rule"] != "documents.read" {
			t.Errorf("%s: %v; want code 3 denied by documents.read", tc.tool, e)
		}
	}
	if vs := c.call("var_ls", map[string]any{"state": info.StateID})["variables"].([]any); len(vs) != 0 {
		t.Errorf("var_ls shows %v", vs)
	}
	if cks := c.call("checkpoint_ls", map[string]any{"state": info.StateID})["checkpoints"].([]any); len(cks) != 0 {
		t.Errorf("checkpoint_ls shows %v", cks)
	}
	// An agent with no profile reads them all.
	a := connect(t, st, "admin")
	if vs := a.call("var_ls", map[string]any{"state": info.StateID})["variables"].([]any); len(vs) == 0 {
		t.Error("var_ls of an agent without a profile is empty")
	}
	a.call("var_get", map[string]any{"state": info.StateID, "name": "apikey"})
}

// TestPrePolicyBranchOverMCP: a branch an agent makes from a commit older
// than the policy is no way out of its profile: reads and writes on it,
// put and set alike, meet the default branch's profile.
func TestPrePolicyBranchOverMCP(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	admin := store.WriteOptions{Agent: "admin"}
	m, err := st.Put(ctx, "private/b.json", []byte(`{"k": "TOPSECRET"}`), admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetPolicy(ctx, []byte(sandboxPolicy), admin); err != nil {
		t.Fatal(err)
	}
	c := connect(t, st, "scraper")
	c.call("branch_create", map[string]any{"name": "agents/scraper/old", "from": m.Commit})
	before, _ := st.Resolve("", "agents/scraper/old")
	for _, tc := range []struct {
		tool string
		args map[string]any
		rule string
	}{
		{"set", map[string]any{"file": "private/b.json", "key": "k", "value": "pwn", "branch": "agents/scraper/old"}, "documents.write"},
		{"put", map[string]any{"file": "secret/new.json", "value": map[string]any{"a": 1}, "branch": "agents/scraper/old"}, "documents.write"},
		{"get", map[string]any{"file": "private/b.json", "branch": "agents/scraper/old"}, "documents.read"},
		{"get", map[string]any{"file": "private/b.json", "branch": "nosuch", "at": "main"}, "documents.read"},
	} {
		if e := c.fail(tc.tool, tc.args); code(e) != 3 || e["rule"] != tc.rule {
			t.Errorf("%s %v: %v; want code 3 denied by %s", tc.tool, tc.args, e, tc.rule)
		}
	}
	if after, _ := st.Resolve("", "agents/scraper/old"); after != before {
		t.Error("a refused write moved the branch")
	}
}
