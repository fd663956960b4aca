package rlm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// A state holds an agent's variables; a checkpoint marks a point to roll
// back to, and Final completes the state once.
func ExampleStates() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, err := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	wo := store.WriteOptions{Agent: "planner"}
	info, _, _ := st.States().Init(ctx, rlm.StateInit{Prompt: "Find all TypeScript errors"}, wo)
	st.States().SetVar(ctx, info.StateID, "risk_level", "low", rlm.VarOptions{}, wo)
	st.States().CreateCheckpoint(ctx, info.StateID, "reviewed", "", wo)
	st.States().SetVar(ctx, info.StateID, "risk_level", "high", rlm.VarOptions{}, wo)

	st.States().Rollback(ctx, info.StateID, "reviewed", rlm.RollbackOptions{}, wo)
	v, _ := st.States().Var(ctx, info.StateID, "risk_level", rlm.GetOptions{})
	fmt.Println("risk_level:", v.Value)

	st.States().SetFinal(ctx, info.StateID, "3 errors", wo)
	now, _ := st.States().Get(ctx, info.StateID, store.ReadOptions{})
	fmt.Println(now.CompletionStatus, now.Final)
	// Output:
	// risk_level: low
	// complete 3 errors
}
