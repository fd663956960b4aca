package review_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/review"
	"github.com/aiwg/aiwg-state/store"
)

// A planner changed the risk on its branch while ops changed it on main:
// the review lists the planner's mutation, its net change, and the
// conflict a merge would meet.
func ExampleBranch() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	st.Set(ctx, "plan.json", "risk", []byte(`"low"`), store.WriteOptions{Agent: "lead"})
	st.CreateBranch(ctx, "agents/planner/main", "")
	st.Set(ctx, "plan.json", "risk", []byte(`"high"`), store.WriteOptions{Agent: "planner", Branch: "agents/planner/main"})
	st.Set(ctx, "plan.json", "risk", []byte(`"medium"`), store.WriteOptions{Agent: "ops"})

	r, err := review.Branch(ctx, st, "main", "agents/planner/main", review.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.OK, len(r.Mutations), r.Agents, r.Changes[0].File)
	for _, k := range r.Merge.Keys {
		fmt.Println(k.File, k.Key, k.Strategy, k.Outcome)
	}
	fmt.Println(r.Merge.Status, r.Policy.OK, r.Schemas.OK)
	// Output:
	// false 1 [planner] plan.json
	// plan.json risk merge-objects conflict
	// conflicts true true
}
