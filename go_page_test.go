//lint:file-ignore SA4006 tour is a page of documentation: compiled, never run, its values shown rather than used
//lint:file-ignore SA5001 the same
//lint:file-ignore U1000 the same: TestGoPageIsCompiled reads its source

package aiwgstate_test

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/review"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// tour is the Go API at a glance, as docs/go.md shows it: compiled here,
// so the page cannot name a function or field that does not exist. It is
// not run (it needs a remote and a merge in progress).
func tour(ctx context.Context, dir string, f *os.File, schemaJSON []byte) error {
	st, err := aiwgstate.Open(ctx, dir, store.Options{}) // dir: the store, e.g. project/.aiwg/state.git
	defer st.Close()
	wo := store.WriteOptions{Agent: "planner"}

	// Documents and history: the core (package store), promoted onto the Store.
	m, err := st.Set(ctx, "plan.json", "risk.level", []byte(`"high"`), wo)
	m, err = st.Apply(ctx, []store.Op{{Op: "put", File: "b.json", Value: []byte(`{}`)}}, wo) // one commit
	ops, err := store.ReadOps(f)                                                             // JSON Lines, as apply reads them
	v, err := st.Get(ctx, "plan.json", "risk.level", store.ReadOptions{At: "HEAD~1"})
	err = st.Log(ctx, store.LogOptions{File: "plan.json", Key: "risk.level"}, func(m *store.Mutation) bool { return true })
	d, err := st.Diff(ctx, store.DiffOptions{From: "main", To: "agents/planner/main"}) // d.Files, key by key
	b, err := st.Blame(ctx, "plan.json", store.ReadOptions{}, store.BlameOptions{})
	m, err = st.Show(ctx, m.MutationID, store.ReadOptions{})
	err = st.Watch(ctx, store.WatchOptions{Path: "plan.json"}, func(m *store.Mutation) bool { return true })
	doc := st.StateDocument("") // the state document's verbs: CreateGoal, AddEvent, Latest, SetItem, ...

	// Features: handles on the Store, each from its own package.
	res, err := st.Leases().Acquire(ctx, "tasks/t-17", lease.Options{TTL: 30 * time.Second}, wo) // lease.ErrHeld if taken
	rec, m, err := st.Memory().Put(ctx, memory.Key{Namespace: "long_term", Kind: "fact", ID: "f1"}, []byte(`{}`), 0, wo)
	msg, m, err := st.Queues().Take(ctx, "work", queue.TakeOptions{Wait: time.Minute}, wo)         // queue.ErrEmpty if none came
	info, m, err := st.States().Init(ctx, rlm.StateInit{Prompt: "Find all TypeScript errors"}, wo) // RLM state
	vr, err := st.States().SetVar(ctx, info.StateID, "risk_level", "high", rlm.VarOptions{}, wo)
	vv, err := st.States().Var(ctx, info.StateID, "risk_level", rlm.GetOptions{})
	ck, err := st.States().CreateCheckpoint(ctx, info.StateID, "reviewed", "", wo)
	m, ck, err = st.States().Rollback(ctx, info.StateID, "reviewed", rlm.RollbackOptions{}, wo)
	vr, err = st.States().SetFinal(ctx, info.StateID, "done", wo) // runs the trusted completion handlers
	id, m, err := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "bug_fixing", Prompt: "fix it"}, wo)
	n, m, err := st.Trajectories().RecordIteration(ctx, id, trajectory.IterationInput{Fields: trajectory.IterationFields{Tool: "Bash"}}, wo)
	m, err = st.Schemas().Add(ctx, "agent", []string{"agents/*.json"}, schemaJSON, wo)
	bad, err := st.Schemas().Check(ctx, store.ReadOptions{})                                  // []docschema.Violation
	mr, err := st.Merges().Merge(ctx, "feature", merge.MergeOptions{Into: "main", Write: wo}) // store.ErrConflict: kept in progress
	cs, err := st.Merges().Conflicts(ctx, store.ReadOptions{Branch: "main"})
	left, err := st.Merges().Resolve(ctx, "plan.json", "risk.level", merge.Resolution{Take: "theirs"}, store.WriteOptions{Branch: "main"})
	mr, err = st.Merges().Continue(ctx, store.WriteOptions{Branch: "main"}) // or Abort
	m, err = st.Merges().SetStrategy(ctx, "counters/*.json", jsonmerge.Options{Strategy: jsonmerge.Sum}, wo)
	branch, err := st.Swarm().StartAgent(ctx, "planner", "", "") // agents/planner/main
	sr, err := st.Swarm().Sync(ctx, "origin", remote.SyncOptions{Merge: merge.MergeOptions{Write: wo}})
	ir, err := st.Swarm().Integrate(ctx, "origin", remote.IntegrateOptions{Into: "main"})
	rep, err := review.Branch(ctx, st, "main", "agents/planner/main", review.Options{}) // rep.WriteMarkdown(w): a pull-request comment

	// The storage verbs agents expect, and snapshots of any state.
	cnt, m, err := st.Incr(ctx, "counters.json", "tasks.done", nil, wo) // +1, with a Delta trailer
	m, err = st.SetWith(ctx, "locks.json", "deploy", []byte(`"planner"`), store.SetOptions{IfAbsent: true, TTL: time.Hour}, wo)
	kv, err := st.GetKeys(ctx, "plan.json", []string{"risk.level", "owner"}, store.ReadOptions{}) // one object, one revision
	sn, err := st.Snapshots().Create(ctx, "before-deploy", snapshot.CreateOptions{Paths: []string{"tasks"}}, wo)
	rs, m, err := st.Snapshots().Restore(ctx, "before-deploy", snapshot.RestoreOptions{}, wo) // one new commit

	// Events, and replaying them from any revision.
	_, m, err = st.Events().Emit(ctx, event.Input{Type: "task.created", Target: "coder", Payload: []byte(`{"task":"t-17"}`)}, wo)
	err = st.Events().Replay(ctx, event.Filter{Types: []string{"task.*"}, Source: "planner"}, store.ReadOptions{At: "v1"}, func(e *event.Event) bool { return true })
	_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _ = m, ops, v, d, b, doc, res, rec, msg, info, vr, vv, ck, id, n, bad, mr, cs, left, branch, sr, ir, rep, f
	_, _, _, _ = cnt, kv, sn, rs
	return err
}

// TestGoPageIsCompiled: the code block of docs/go.md is tour's body.
func TestGoPageIsCompiled(t *testing.T) {
	page, err := os.ReadFile("docs/go.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(page), "```go\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/go.md has no go code block")
	}
	src, err := os.ReadFile("go_page_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "go_page_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var body string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "tour" {
			from := fset.Position(fn.Body.Lbrace).Offset + 2
			to := bytes.Index(src[from:], []byte("\t_, _, _")) + from
			for _, line := range strings.Split(strings.TrimRight(string(src[from:to]), "\n"), "\n") {
				body += strings.TrimPrefix(line, "\t") + "\n"
			}
		}
	}
	if body != block {
		t.Errorf("docs/go.md's code block is not tour's body; copy tour's body (go_page_test.go) into the page.\npage:\n%s\ntour:\n%s", block, body)
	}
}
