package event_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/store"
)

// Agents emit events, each one commit; any agent lists them back by
// type, target or correlation id, at any revision.
func ExampleEvents_Emit() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	at := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	ev, _, err := st.Events().Emit(ctx, event.Input{Type: "task.created", Target: "coder", Correlation: "run-7", Payload: []byte(`{"task":"t-17"}`)},
		store.WriteOptions{Agent: "planner", Time: at})
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.File()[:len("events/planner/2026-11-20/093000.000000000")])
	st.Events().Emit(ctx, event.Input{Type: "task.completed", Correlation: "run-7"}, store.WriteOptions{Agent: "coder", Time: at.Add(time.Minute)})

	es, _ := st.Events().List(ctx, event.Filter{Types: []string{"task.*"}, Correlation: "run-7"}, store.ReadOptions{})
	for _, e := range es {
		fmt.Println(e.Type, e.Source, e.Target, string(e.Payload))
	}
	// Output:
	// events/planner/2026-11-20/093000.000000000
	// task.created planner coder {"task":"t-17"}
	// task.completed coder  null
}
