package trajectory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// A trajectory records a run's Thought-Action-Observation iterations, one
// commit each, and its outcome with the metrics computed at completion.
func ExampleTrajectories() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, err := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	wo := store.WriteOptions{Agent: "runner"}
	id, _, _ := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "bug_fixing", Prompt: "fix the build"}, wo)
	for _, status := range []string{"failure", "success"} {
		st.Trajectories().RecordIteration(ctx, id, trajectory.IterationInput{Fields: trajectory.IterationFields{
			ThoughtType: "progress", Thought: "try", Tool: "Bash", Status: status, Result: "r"}}, wo)
	}
	st.Trajectories().Complete(ctx, id, trajectory.CompletionInput{Status: "success"}, wo)

	list, _ := st.Trajectories().List(ctx, trajectory.Filter{}, store.ReadOptions{})
	fmt.Println(len(list), list[0].Status, list[0].Iterations)
	// Output:
	// 1 success 2
}
