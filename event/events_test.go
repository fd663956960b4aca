package event_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/store"
)

func emit(t *testing.T, st *aiwgstate.Store, typ, agent string, in event.Input, wo store.WriteOptions) (*event.Event, *store.Mutation) {
	t.Helper()
	in.Type = typ
	wo.Agent = agent
	e, m, err := st.Events().Emit(context.Background(), in, wo)
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// TestEmitListReplay: an emit is one commit holding the event's file with
// its trailers; List filters by type, family, source, target, correlation
// and time, at any revision; log filters by event type.
func TestEmitListReplay(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 23, 59, 59, 0, time.UTC)
	at := func(d time.Duration) store.WriteOptions { return store.WriteOptions{Time: t0.Add(d)} }
	e1, m1 := emit(t, st, "task.created", "planner", event.Input{Target: "coder", Correlation: "run-1", Payload: []byte(`{"task":"t-1"}`)}, at(0))
	emit(t, st, "task.completed", "coder", event.Input{Correlation: "run-1"}, at(time.Second)) // the next day
	_, m3 := emit(t, st, "handoff.requested", "planner", event.Input{Target: "reviewer"}, at(2*time.Second))

	if got := storetest.Git(t, st, "show", "--format=%an|%(trailers:key=Event,valueonly,separator=)|%(trailers:key=Event-Id,valueonly,separator=)|%(trailers:key=Event-Target,valueonly,separator=)|%(trailers:key=Correlation-Id,valueonly,separator=)", "--name-only", m1.Commit); !strings.Contains(got, "planner|task.created|"+e1.ID+"|coder|run-1") || !strings.Contains(got, e1.File()) {
		t.Errorf("the emit's commit:\n%s", got)
	}
	if n := strings.Count(storetest.Git(t, st, "log", "--format=%H", m1.Parents[0]+".."), "\n"); n != 3 {
		t.Errorf("%d commits for 3 emits", n)
	}
	types := func(f event.Filter, ro store.ReadOptions) string {
		t.Helper()
		es, err := st.Events().List(ctx, f, ro)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Type)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		f    event.Filter
		ro   store.ReadOptions
		want string
	}{
		{event.Filter{}, store.ReadOptions{}, "task.created task.completed handoff.requested"},
		{event.Filter{Types: []string{"task.*"}}, store.ReadOptions{}, "task.created task.completed"},
		{event.Filter{Types: []string{"handoff.requested", "task.completed"}}, store.ReadOptions{}, "task.completed handoff.requested"},
		{event.Filter{Source: "planner"}, store.ReadOptions{}, "task.created handoff.requested"},
		{event.Filter{Target: "coder"}, store.ReadOptions{}, "task.created"},
		{event.Filter{Correlation: "run-1"}, store.ReadOptions{}, "task.created task.completed"},
		{event.Filter{Since: t0.Add(time.Second)}, store.ReadOptions{}, "task.completed handoff.requested"},
		{event.Filter{Until: t0.Add(time.Second)}, store.ReadOptions{}, "task.created"},
		{event.Filter{Limit: 1}, store.ReadOptions{}, "task.created"},
		{event.Filter{}, store.ReadOptions{At: m3.Parents[0]}, "task.created task.completed"},
		{event.Filter{}, store.ReadOptions{At: m1.Parents[0]}, ""},
	} {
		if got := types(c.f, c.ro); got != c.want {
			t.Errorf("%+v at %q: %q, want %q", c.f, c.ro.At, got, c.want)
		}
	}
	var logged []string
	if err := st.Log(ctx, store.LogOptions{Event: "task.*"}, func(m *store.Mutation) bool { logged = append(logged, m.Subject); return true }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(logged, "|") != "event task.completed|event task.created" {
		t.Errorf("log --event task.*: %q", logged)
	}
	if _, _, err := st.Events().Emit(ctx, event.Input{Type: "bad type"}, store.WriteOptions{}); !errors.Is(err, event.ErrInvalid) {
		t.Errorf("a bad type: %v", err)
	}
	if _, err := st.Events().List(ctx, event.Filter{Types: []string{"a b"}}, store.ReadOptions{}); !errors.Is(err, event.ErrInvalid) {
		t.Errorf("a bad filter: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestGuardKeepsEvents: a write cannot leave a malformed event, rewrite
// one, or emit as another agent; removing one is allowed; nothing moves
// on a refusal.
func TestGuardKeepsEvents(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	e, _ := emit(t, st, "task.created", "planner", event.Input{}, store.WriteOptions{})
	head := func() string { return strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD")) }
	before := head()
	forged := *e
	forged.ID = "evt-00000001"
	fb, _ := forged.Encode()
	rewritten := *e
	rewritten.Payload = []byte(`"changed"`)
	rb, _ := rewritten.Encode()
	for name, c := range map[string]struct {
		agent, file string
		body        []byte
	}{
		"malformed":      {"planner", "events/planner/2026-01-01/x.json", []byte(`{}`)},
		"rewritten":      {"planner", e.File(), rb},
		"as another":     {"mallory", forged.File(), fb},
		"outside a file": {"planner", "events/readme.json", []byte(`{}`)},
	} {
		_, err := st.Apply(ctx, []store.Op{{Op: "put", File: c.file, Value: c.body}}, store.WriteOptions{Agent: c.agent})
		if !errors.Is(err, store.ErrInvalidRecord) {
			t.Errorf("%s: %v, want ErrInvalidRecord", name, err)
		}
		if head() != before {
			t.Fatalf("%s: the branch moved", name)
		}
	}
	// Its own agent may write an event file by hand (as emit would).
	if _, err := st.Apply(ctx, []store.Op{{Op: "put", File: forged.File(), Value: fb}}, store.WriteOptions{Agent: "planner"}); err != nil {
		t.Errorf("an agent's own event by put: %v", err)
	}
	if _, err := st.Delete(ctx, e.File(), "", store.WriteOptions{Agent: "cleaner"}); err != nil {
		t.Errorf("removing an event: %v", err)
	}
	// The hook's check.
	if rule, _ := aiwgstate.ValidateKnownFile("events/planner/2026-01-01/x.json", []byte(`{}`)); rule != store.RuleRecord {
		t.Errorf("hook rule %q", rule)
	}
	if rule, _ := aiwgstate.ValidateKnownFile(forged.File(), fb); rule != "" {
		t.Errorf("hook rule %q for an event", rule)
	}
	storetest.Fsck(t, st)
}

// TestConcurrentEmittersMerge: agents emitting at once on their own
// branches, the same agent on two of them, merge without a conflict by
// git's own merge and by the store's, and every event is there after.
func TestConcurrentEmittersMerge(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	emit(t, st, "system.started", "coordinator", event.Input{}, store.WriteOptions{})
	branches := []string{"agents/a/main", "agents/b/main", "agents/c/main", "agents/d/main"}
	for _, b := range branches {
		if _, err := st.CreateBranch(ctx, b, ""); err != nil {
			t.Fatal(err)
		}
	}
	const each = 5
	var wg sync.WaitGroup
	errs := make(chan error, len(branches)*each)
	for i, b := range branches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := []string{"alpha", "beta", "alpha", "gamma"}[i] // alpha emits on two branches
			for n := range each {
				_, _, err := st.Events().Emit(ctx, event.Input{Type: "task.progress", Correlation: b, Payload: []byte(fmt.Sprint(n))}, store.WriteOptions{Branch: b, Agent: agent})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// git merge-tree, as git merge does it, of a and b, then of that and c.
	g := testutil.Git{GitDir: st.Dir(), Env: testutil.AgentEnv("merger")}
	tip := strings.TrimSpace(g.Output(t, "rev-parse", branches[0]))
	for _, b := range branches[1:3] {
		out, err := g.Try("merge-tree", "--write-tree", tip, b)
		if err != nil {
			t.Fatalf("git merge-tree %s: %v\n%s", b, err, out)
		}
		tree := strings.Fields(out)[0]
		tip = strings.TrimSpace(g.Output(t, "commit-tree", tree, "-p", tip, "-p", b, "-m", "merge "+b))
	}
	g.Run(t, "update-ref", "refs/heads/gitmerged", tip)
	es, err := st.Events().List(ctx, event.Filter{Types: []string{"task.progress"}}, store.ReadOptions{At: "gitmerged"})
	if err != nil || len(es) != 3*each {
		t.Fatalf("after git's merges: %d events (%v), want %d", len(es), err, 3*each)
	}
	// The store's merge, each branch into main.
	for _, b := range branches {
		if _, err := st.Merges().Merge(ctx, b, merge.MergeOptions{Into: "main", NoFF: true, Write: store.WriteOptions{Agent: "coordinator"}}); err != nil {
			t.Fatalf("merge %s: %v", b, err)
		}
	}
	es, err = st.Events().List(ctx, event.Filter{Types: []string{"task.progress"}}, store.ReadOptions{})
	if err != nil || len(es) != len(branches)*each {
		t.Fatalf("after the store's merges: %d events (%v), want %d", len(es), err, len(branches)*each)
	}
	// git's merged line merges into main too: the same files, no conflict.
	if _, err := st.Merges().Merge(ctx, "gitmerged", merge.MergeOptions{Into: "main", Write: store.WriteOptions{Agent: "coordinator"}}); err != nil {
		t.Fatalf("merge of git's merge: %v", err)
	}
	// log --event with every parent finds each emit in its own commit.
	n := 0
	if err := st.Log(ctx, store.LogOptions{Event: "task.progress", AllParents: true}, func(*store.Mutation) bool { n++; return true }); err != nil || n != len(branches)*each {
		t.Errorf("log --event: %d (%v)", n, err)
	}
	storetest.Fsck(t, st)
}
