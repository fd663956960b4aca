package store_test

import (
	"context"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// initState and setVar make RLM state for the core's tests that need one
// (a rollback restores files as one directory).

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
