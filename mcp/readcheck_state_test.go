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
