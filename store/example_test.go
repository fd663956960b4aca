package store_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
)

// An agent keeps its working state in a store: every write is one commit
// authored by the agent, and any revision can be read back.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)

	st, err := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	planner := store.WriteOptions{Agent: "planner", Source: "task-42"}
	st.Set(ctx, "plan.json", "risk.level", []byte(`"low"`), planner)
	m, _ := st.Set(ctx, "plan.json", "risk.level", []byte(`"high"`), planner)
	fmt.Println(m.Subject, "by", m.Agent)

	now, _ := st.Get(ctx, "plan.json", "risk.level", store.ReadOptions{})
	before, _ := st.Get(ctx, "plan.json", "risk.level", store.ReadOptions{At: "HEAD~1"})
	fmt.Printf("now %s, before %s\n", bytes.TrimSpace(now), bytes.TrimSpace(before))
	// Output:
	// update plan.json#risk.level by planner
	// now "high", before "low"
}

// A batch of operations is one transaction: one commit, all or nothing.
func ExampleStore_Apply() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	m, err := st.Apply(ctx, []store.Op{
		{Op: "put", File: "notes/facts/f1.json", Value: []byte(`{"text": "the API is rate limited"}`)},
		{Op: "set", File: "plan.json", Path: "steps", Value: []byte(`["read", "write"]`)},
	}, store.WriteOptions{Agent: "memory-writer"})
	if err != nil {
		panic(err)
	}
	for _, c := range m.Changes {
		fmt.Println(c.Operation, c.Path())
	}
	// A batch with one bad operation changes nothing.
	_, err = st.Apply(ctx, []store.Op{
		{Op: "set", File: "plan.json", Path: "owner", Value: []byte(`"ops"`)},
		{Op: "set", File: "plan.json", Path: "steps.0.x", Value: []byte(`1`)},
	}, store.WriteOptions{})
	fmt.Println(err != nil)
	// Output:
	// create notes/facts/f1.json
	// create plan.json#steps
	// true
}

// The log is the audit trail: who changed what, when, and why.
func ExampleStore_Log() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()
	st.Set(ctx, "plan.json", "goal", []byte(`"ship"`), store.WriteOptions{Agent: "planner"})
	st.Set(ctx, "notes.json", "todo", []byte(`[]`), store.WriteOptions{Agent: "scribe"})
	st.Set(ctx, "plan.json", "goal", []byte(`"ship today"`), store.WriteOptions{Agent: "reviewer", Source: "review-1"})

	st.Log(ctx, store.LogOptions{File: "plan.json"}, func(m *store.Mutation) bool {
		fmt.Println(m.Agent, m.Changes[0].Operation, m.Changes[0].Path(), m.Source)
		return true
	})
	// Output:
	// reviewer update plan.json#goal review-1
	// planner create plan.json#goal
}

// JSON Lines of operations, as `aiwg-state apply` reads them; a bad line
// fails the whole input with its number.
func ExampleReadOps() {
	ops, err := store.ReadOps(strings.NewReader(`# plan for today
{"op":"set","file":"plan.json","path":"risk.level","value":"high"}
{"op":"mv","file":"draft.json","to":"docs/draft.json"}
`))
	fmt.Println(len(ops), ops[1].Op, ops[1].To, err)

	_, err = store.ReadOps(strings.NewReader(`{"op":"set","file":"a.json","path":"x","value":1}
{"op":"put","file":"b.json","value":1,"op":"del"}
`))
	fmt.Println(err)
	// Output:
	// 2 mv docs/draft.json <nil>
	// line 2: invalid JSON: column 39: duplicate object key "op"
}

// The state document's verbs from Go: each is one commit, named as the
// CLI's verb names it.
func ExampleStore_StateDocument() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, filepath.Join(dir, "state.git"), store.InitOptions{})
	defer st.Close()

	doc := st.StateDocument("") // state/state.json
	wo := store.WriteOptions{Agent: "conductor"}
	doc.CreateGoal(ctx, "ship it", "release 1.0", wo)
	doc.CreateSubGoal(ctx, "SHIP-IT", "write docs", "", wo)
	m, _ := doc.AddEvent(ctx, "SHIP-IT", "WRITE-DOCS", statedoc.Event{Type: "reply", Body: "draft ready"}, wo)
	fmt.Println(m.Subject)

	brief, _, _ := doc.Latest(ctx, wo) // marks the event SEEN
	fmt.Println(brief.Event.Body, brief.Remaining)
	// Output:
	// event add SHIP-IT/WRITE-DOCS
	// draft ready 0
}
