package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// client is one MCP client session in a test, and the tools it called.
type client struct {
	t      testing.TB
	cs     *sdk.ClientSession
	mu     sync.Mutex
	called map[string]bool
}

// connect serves st to a new client over the SDK's in-memory transport,
// as agent.
func connect(t testing.TB, st *aiwgstate.Store, agent string) *client {
	t.Helper()
	srv := New(st, Options{Agent: agent, Poll: 10e6})
	return connectTo(t, srv.SDK(), nil)
}

func connectTo(t testing.TB, srv *sdk.Server, opts *sdk.ClientOptions) *client {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &client{t: t, cs: cs, called: map[string]bool{}}
}

// raw calls a tool and returns its result.
func (c *client) raw(name string, args map[string]any) *sdk.CallToolResult {
	c.t.Helper()
	c.mu.Lock()
	c.called[name] = true
	c.mu.Unlock()
	res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// call calls a tool that must succeed, and returns its structured
// content.
func (c *client) call(name string, args map[string]any) map[string]any {
	c.t.Helper()
	res := c.raw(name, args)
	if res.IsError {
		c.t.Fatalf("%s %v: tool error %s", name, args, text(res))
	}
	if len(res.Content) == 0 || text(res) == "" {
		c.t.Fatalf("%s: no text summary", name)
	}
	return structured(c.t, res)
}

// fail calls a tool that must fail, and returns its error object.
func (c *client) fail(name string, args map[string]any) map[string]any {
	c.t.Helper()
	res := c.raw(name, args)
	if !res.IsError {
		c.t.Fatalf("%s %v: want a tool error, got %s", name, args, text(res))
	}
	e := structured(c.t, res)
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || fromText["kind"] != e["kind"] {
		c.t.Fatalf("%s: the error's text is not its object: %s", name, text(res))
	}
	if e["error"] == "" || e["kind"] == "" {
		c.t.Fatalf("%s: error without message or kind: %v", name, e)
	}
	return e
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t testing.TB, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content is not an object: %s", b)
	}
	return m
}

func code(e map[string]any) int { f, _ := e["code"].(float64); return int(f) }

// mutationOf is the mutation in a write's result: the result itself, or
// its "mutation" member.
func mutationOf(t testing.TB, r map[string]any) map[string]any {
	t.Helper()
	if m, ok := r["mutation"].(map[string]any); ok {
		return m
	}
	if _, ok := r["commit"].(string); ok {
		return r
	}
	t.Fatalf("no mutation in %v", r)
	return nil
}

// inHistory checks with git that a write's commit is on the store's
// history, authored by agent, with its mutation id as a trailer.
func inHistory(t testing.TB, st *aiwgstate.Store, r map[string]any, agent string) {
	t.Helper()
	m := mutationOf(t, r)
	commit, id := m["commit"].(string), m["mutation_id"].(string)
	got := strings.TrimSpace(storetest.Git(t, st, "log", "-1", "--format=%an|%(trailers:key=Mutation-Id,valueonly,separator=)", commit))
	if want := agent + "|" + id; got != want || id == "" {
		t.Fatalf("git log of %s: %q, want %q", commit, got, want)
	}
	if out := storetest.Git(t, st, "branch", "-a", "--contains", commit); strings.TrimSpace(out) == "" {
		t.Fatalf("%s is on no branch", commit)
	}
}

func TestEveryTool(t *testing.T) {
	st := storetest.New(t)
	c := connect(t, st, "planner")
	other := connect(t, st, "reviewer")

	// Documents.
	r := c.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "high", "correlation": "run-1", "source": "task-42"})
	inHistory(t, st, r, "planner")
	first := mutationOf(t, r)
	if g := c.call("get", map[string]any{"file": "plan.json", "key": "risk.level"}); g["value"] != "high" {
		t.Fatalf("get: %v", g)
	}
	inHistory(t, st, c.call("put", map[string]any{"file": "b.json", "value": map[string]any{"x": 1, "big": 12345678901}}), "planner")
	inHistory(t, st, c.call("apply", map[string]any{"ops": []any{
		map[string]any{"op": "set", "file": "b.json", "path": "y", "value": []any{1, "two"}},
		map[string]any{"op": "put", "file": "c.json", "value": map[string]any{}},
	}}), "planner")
	inHistory(t, st, c.call("mv", map[string]any{"file": "c.json", "to": "d.json"}), "planner")
	inHistory(t, st, c.call("del", map[string]any{"file": "b.json", "key": "x"}), "planner")
	if g := c.call("get", map[string]any{"file": "b.json"}); fmt.Sprint(g["value"]) != "map[big:1.2345678901e+10 y:[1 two]]" {
		t.Fatalf("get b.json: %v", g["value"])
	}
	if g := c.call("get", map[string]any{"file": "plan.json", "key": "risk.level", "at": first["commit"]}); g["value"] != "high" {
		t.Fatalf("get at: %v", g)
	}
	if r := c.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "high"}); r["no_change"] != true {
		t.Fatalf("same value: %v", r)
	}
	ls := c.call("ls", nil)
	if n := len(ls["entries"].([]any)); n < 3 {
		t.Fatalf("ls: %v", ls)
	}

	// History.
	lg := c.call("log", map[string]any{"file": "plan.json", "key": "risk.level"})
	if ms := lg["mutations"].([]any); len(ms) != 1 || ms[0].(map[string]any)["mutation_id"] != first["mutation_id"] {
		t.Fatalf("log by key: %v", lg)
	}
	if ms := c.call("log", map[string]any{"correlation": "run-1"})["mutations"].([]any); len(ms) != 1 {
		t.Fatalf("log by correlation: %v", ms)
	}
	if ms := c.call("log", map[string]any{"agent": "planner", "limit": 2, "since": "2000-01-01T00:00:00Z"})["mutations"].([]any); len(ms) != 2 {
		t.Fatalf("log limit 2: %v", ms)
	}
	if d := c.call("diff", nil); len(d["files"].([]any)) != 1 {
		t.Fatalf("diff: %v", d)
	}
	sh := c.call("show", map[string]any{"rev": first["mutation_id"]})
	if sh["mutation"].(map[string]any)["commit"] != first["commit"] {
		t.Fatalf("show: %v", sh)
	}
	if b := c.call("blame", map[string]any{"file": "plan.json"}); len(b["entries"].([]any)) != 1 {
		t.Fatalf("blame: %v", b)
	}
	if r := c.call("reindex", nil); r["commits"] == nil {
		t.Fatalf("reindex: %v", r)
	}

	// Branches and merges.
	c.call("branch_create", map[string]any{"name": "feature"})
	inHistory(t, st, c.call("set", map[string]any{"file": "plan.json", "key": "owner", "value": "ops", "branch": "feature"}), "planner")
	if bs := c.call("branch_list", nil)["branches"].([]any); len(bs) != 2 {
		t.Fatalf("branches: %v", bs)
	}
	// main moves on after feature left it: feature's diff against main is
	// its own change alone, from their merge base, unless head to head.
	c.call("set", map[string]any{"file": "later.json", "key": "x", "value": 1})
	if d := c.call("diff", map[string]any{"from": "main", "to": "feature"}); len(d["files"].([]any)) != 1 || len(d["merge_bases"].([]any)) != 1 {
		t.Fatalf("diff of two branches: %v", d)
	}
	if d := c.call("diff", map[string]any{"from": "main", "to": "feature", "head_to_head": true}); len(d["files"].([]any)) != 2 {
		t.Fatalf("diff of two branches head to head: %v", d)
	}
	if m := c.call("merge", map[string]any{"from": "feature", "dry_run": true}); m["status"] != "merged" || m["dry_run"] != true {
		t.Fatalf("dry run: %v", m)
	}
	c.call("merge", map[string]any{"from": "feature"})
	c.call("branch_create", map[string]any{"name": "agents/reviewer/main"})
	inHistory(t, st, other.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "low", "branch": "agents/reviewer/main"}), "reviewer")
	inHistory(t, st, c.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "medium"}), "planner")
	e := c.fail("merge", map[string]any{"from": "agents/reviewer/main"})
	if code(e) != 4 || e["kind"] != "conflict" || e["result"] == nil {
		t.Fatalf("conflicting merge: %v", e)
	}
	if cs := c.call("conflicts", nil)["conflicts"].([]any); len(cs) != 1 {
		t.Fatalf("conflicts: %v", cs)
	}
	if r := c.call("resolve", map[string]any{"file": "plan.json", "key": "risk.level", "take": "theirs"}); r["remaining_files"] != 0.0 {
		t.Fatalf("resolve: %v", r)
	}
	mc := c.call("merge_continue", nil)
	inHistory(t, st, mc["commit"].(map[string]any), "planner")
	if g := c.call("get", map[string]any{"file": "plan.json", "key": "risk.level"}); g["value"] != "low" {
		t.Fatalf("after the merge: %v", g)
	}
	other.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "x", "branch": "agents/reviewer/main"})
	c.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "y"})
	c.fail("merge", map[string]any{"from": "agents/reviewer/main"})
	if r := c.call("merge_abort", nil); r["aborted"] != true {
		t.Fatalf("abort: %v", r)
	}
	if cs := c.call("conflicts", nil)["conflicts"].([]any); len(cs) != 0 {
		t.Fatalf("conflicts after abort: %v", cs)
	}

	// RLM state.
	si := c.call("state_init", map[string]any{"prompt": "Find all TypeScript errors"})
	inHistory(t, st, si, "planner")
	id := si["state"].(map[string]any)["state_id"].(string)
	inHistory(t, st, c.call("var_set", map[string]any{"state": id, "name": "risk_level", "value": "high"}), "planner")
	c.call("var_set", map[string]any{"state": id, "name": "count", "value": 3, "scope": "session"})
	ck := c.call("checkpoint_create", map[string]any{"state": id, "name": "reviewed"})
	if ck["commit"] == "" || ck["name"] != "reviewed" {
		t.Fatalf("checkpoint: %v", ck)
	}
	if cks := c.call("checkpoint_ls", map[string]any{"state": id})["checkpoints"].([]any); len(cks) != 2 { // init's, and this one
		t.Fatalf("checkpoints: %v", cks)
	}
	c.call("var_set", map[string]any{"state": id, "name": "risk_level", "value": "low"})
	inHistory(t, st, c.call("rollback", map[string]any{"state": id, "checkpoint": "reviewed"}), "planner")
	if v := c.call("var_get", map[string]any{"state": id, "name": "risk_level"}); v["value"] != "high" || v["type"] != "text" {
		t.Fatalf("var_get after rollback: %v", v)
	}
	if v := c.call("var_get", map[string]any{"state": id, "name": "count", "meta": true}); v["value"] != 3.0 {
		t.Fatalf("var_get count: %v", v)
	}
	if vs := c.call("var_ls", map[string]any{"state": id})["variables"].([]any); len(vs) < 2 {
		t.Fatalf("var_ls: %v", vs)
	}
	inHistory(t, st, c.call("final", map[string]any{"state": id, "value": map[string]any{"errors": 0}}), "planner")
	if s := c.call("state_status", map[string]any{"id": id}); s["completion_status"] == "" || s["final"] == nil {
		t.Fatalf("status: %v", s)
	}
	if s := c.call("state_show", map[string]any{"id": id}); s["state_id"] != id {
		t.Fatalf("show: %v", s)
	}

	// Trajectories.
	ts := c.call("traj_start", map[string]any{"task_type": "bug_fixing", "prompt": "fix the build", "extra": map[string]any{"metadata": map[string]any{"temperature": 0.2}}})
	inHistory(t, st, ts, "planner")
	tid := ts["trajectory_id"].(string)
	it := c.call("traj_iter", map[string]any{"id": tid, "thought_type": "reasoning", "thought": "run the tests", "tool": "Bash",
		"params": map[string]any{"command": "go test"}, "status": "success", "result": "ok", "tokens_in": 10, "duration_ms": 1200})
	inHistory(t, st, it, "planner")
	if it["iteration"] != 1.0 {
		t.Fatalf("iteration: %v", it)
	}
	inHistory(t, st, c.call("set", map[string]any{"file": "notes.json", "key": "n", "value": 1, "traj": tid, "iter": 1}), "planner")
	inHistory(t, st, c.call("traj_complete", map[string]any{"id": tid, "status": "success", "final": "fixed"}), "planner")
	if tr := c.call("traj_show", map[string]any{"id": tid}); tr == nil {
		t.Fatal("traj_show: nothing")
	}
	if an := c.call("traj_analyze", map[string]any{"since": "7d"}); an["trajectories"] != 1.0 {
		t.Fatalf("analyze: %v", an)
	}

	// Coordination.
	la := c.call("lease_acquire", map[string]any{"resource": "tasks/t-17", "ttl": "1m"})
	inHistory(t, st, la, "planner")
	lid := la["lease"].(map[string]any)["id"].(string)
	held := other.fail("lease_acquire", map[string]any{"resource": "tasks/t-17"})
	if code(held) != 5 || held["kind"] != "held" || held["holder"] != "planner" || held["until"] == nil {
		t.Fatalf("held: %v", held)
	}
	inHistory(t, st, c.call("lease_renew", map[string]any{"resource": "tasks/t-17", "id": lid, "ttl": "2m"}), "planner")
	if ls := c.call("lease_ls", nil)["leases"].([]any); len(ls) != 1 {
		t.Fatalf("lease_ls: %v", ls)
	}
	inHistory(t, st, c.call("lease_release", map[string]any{"resource": "tasks/t-17"}), "planner")
	inHistory(t, st, c.call("queue_put", map[string]any{"name": "work", "value": map[string]any{"n": 1}}), "planner")
	if ms := other.call("queue_peek", map[string]any{"name": "work"})["messages"].([]any); len(ms) != 1 {
		t.Fatalf("peek: %v", ms)
	}
	tk := other.call("queue_take", map[string]any{"name": "work"})
	inHistory(t, st, tk, "reviewer")
	if p := tk["message"].(map[string]any)["payload"].(map[string]any); p["n"] != 1.0 {
		t.Fatalf("take: %v", tk)
	}
	if e := other.fail("queue_take", map[string]any{"name": "work"}); code(e) != 3 || e["kind"] != "empty" {
		t.Fatalf("empty: %v", e)
	}
	inHistory(t, st, c.call("memory_put", map[string]any{"namespace": "long_term", "kind": "fact", "id": "f1", "value": "the build needs go 1.26"}), "planner")
	inHistory(t, st, c.call("memory_put", map[string]any{"namespace": "session", "kind": "note", "id": "n1", "value": 1, "ttl": "1s"}), "planner")
	time.Sleep(1100 * time.Millisecond) // whole seconds: the shortest time to live
	if r := c.call("memory_get", map[string]any{"namespace": "long_term", "kind": "fact", "id": "f1"}); r["payload"] != "the build needs go 1.26" {
		t.Fatalf("memory_get: %v", r)
	}
	if rs := c.call("memory_ls", map[string]any{"namespace": "long_term"})["records"].([]any); len(rs) != 1 {
		t.Fatalf("memory_ls: %v", rs)
	}
	pr := c.call("memory_prune", nil)
	inHistory(t, st, pr, "planner")
	if ks := pr["pruned"].([]any); len(ks) != 1 {
		t.Fatalf("prune: %v", pr)
	}

	ev := c.call("event_emit", map[string]any{"type": "task.created", "to": "coder", "value": map[string]any{"task": "t-17"}, "correlation": "run-7"})
	inHistory(t, st, ev, "planner")
	if es := c.call("event_ls", map[string]any{"types": []string{"task.*"}, "to": "coder"})["events"].([]any); len(es) != 1 || es[0].(map[string]any)["source"] != "planner" {
		t.Fatalf("event_ls: %v", es)
	}
	if r := c.raw("event_emit", map[string]any{"type": "not a type"}); !r.IsError {
		t.Errorf("event_emit of a bad type: %s", text(r))
	}

	// The disposable tiers (tiers_test.go tests their rules).
	c.call("frame_set", map[string]any{"key": "sum", "value": 5})
	if r := c.call("frame_get", map[string]any{"key": "sum"}); r["value"] != float64(5) {
		t.Errorf("frame_get: %v", r)
	}
	c.call("frame_ls", nil)
	c.call("frame_promote", map[string]any{"key": "sum", "to": "frame.json", "key_path": "sum"})
	c.call("frame_clear", nil)
	c.call("cache_set", map[string]any{"key": "k", "value": "v", "ttl": "1h"})
	if r := c.call("cache_get", map[string]any{"key": "k"}); r["value"] != "v" {
		t.Errorf("cache_get: %v", r)
	}
	c.call("cache_rm", map[string]any{"key": "k"})

	// Every tool listed was called.
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var missed []string
	for _, tl := range tools.Tools {
		if !c.called[tl.Name] && !other.called[tl.Name] {
			missed = append(missed, tl.Name)
		}
		if len(tl.Description) < 40 {
			t.Errorf("tool %s: a description an agent can act on, please: %q", tl.Name, tl.Description)
		}
	}
	if len(missed) > 0 {
		t.Errorf("tools never called: %v", missed)
	}
	storetest.Fsck(t, st)
}

// TestSchemas: every field names its JSON type, and a raw JSON value is
// any value, never a byte array.
func TestSchemas(t *testing.T) {
	c := connect(t, storetest.New(t), "planner")
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		json.Unmarshal(b, &s)
		for name, p := range s.Properties {
			if name == "value" && p["type"] != nil {
				t.Errorf("%s.value: a raw JSON value takes any type, got %v", tl.Name, p)
			}
			if name != "value" && p["type"] == nil && p["types"] == nil {
				t.Errorf("%s.%s: no JSON type in %v", tl.Name, name, p)
			}
			if items, ok := p["items"].(map[string]any); ok && items["type"] == "integer" {
				t.Errorf("%s.%s: an array of integers (bytes?): %v", tl.Name, name, p)
			}
			if p["description"] == nil {
				t.Errorf("%s.%s: no description", tl.Name, name)
			}
		}
		if slices.Contains([]string{"set", "put", "queue_put", "memory_put", "var_set", "final"}, tl.Name) && !slices.Contains(s.Required, "value") {
			t.Errorf("%s: value is not required: %s", tl.Name, b)
		}
	}
}

// TestErrors: every error kind an agent acts on arrives as a tool error
// with the CLI's exit code, and nothing is written.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	c := connect(t, st, "planner")
	head := func() string { return strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD")) }
	c.call("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "high"})
	h0 := head()
	cases := []struct {
		tool string
		args map[string]any
		code int
		kind string
	}{
		{"set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "low", "expect": "HEAD~1"}, 6, "stale"},
		{"set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "low", "expect": ""}, 2, "usage"},
		{"get", map[string]any{"file": "nope.json"}, 3, "not_found"},
		{"get", map[string]any{"file": "plan.json", "key": "risk.nope"}, 3, "not_found"},
		{"set", map[string]any{"file": "plan.json", "key": "risk.level.deeper", "value": 1}, 3, "not_container"},
		{"set", map[string]any{"file": "../x.json", "key": "a", "value": 1}, 2, "invalid_path"},
		{"set", map[string]any{"file": "plan.json", "key": "risk.level"}, 2, "usage"},                            // value missing
		{"set", map[string]any{"file": "plan.json", "key": 5, "value": 1}, 2, "usage"},                           // mistyped
		{"set", map[string]any{"file": "plan.json", "key": "a", "value": 1, "expekt": "HEAD"}, 2, "usage"},       // misspelt
		{"lease_acquire", map[string]any{"resource": "tasks/t", "ttl": "soon"}, 2, "usage"},                      // bad duration
		{"merge", map[string]any{"from": "no-such-branch"}, 3, "not_found"},                                      // missing branch
		{"put", map[string]any{"file": "big.json", "value": strings.Repeat("x", 10<<20+1)}, 3, "limit"},          // oversize
		{"set", map[string]any{"file": "plan.json", "key": "a", "value": 1, "iter": 2}, 2, "usage"},              // iter without traj
		{"resolve", map[string]any{"file": "plan.json", "take": "ours"}, 3, "not_found"},                         // no merge in progress
		{"traj_iter", map[string]any{"id": "traj-0000beef", "tool": "Bash"}, 3, ""},                              // missing trajectory
		{"memory_put", map[string]any{"namespace": "a/b", "kind": "k", "id": "i", "value": 1}, 2, "invalid"},     // bad namespace
		{"var_set", map[string]any{"name": "x", "value": 1, "type": "nonsense", "state": "st-nope"}, 2, "usage"}, // bad type
	}
	for _, tc := range cases {
		e := c.fail(tc.tool, tc.args)
		if code(e) != tc.code || (tc.kind != "" && e["kind"] != tc.kind) {
			t.Errorf("%s %v: got code %v kind %v (%v), want %d %s", tc.tool, tc.args, e["code"], e["kind"], e["error"], tc.code, tc.kind)
		}
		if h := head(); h != h0 {
			t.Fatalf("%s: a failed call wrote %s", tc.tool, h)
		}
	}
	// A stale error names the head to re-read at.
	if e := c.fail("set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "low", "expect": "HEAD~1"}); e["current"] != h0 {
		t.Fatalf("stale: %v", e)
	}
	// The policy judges an MCP write as a CLI one.
	policy := `{"rules": [{"agents": ["admin"], "paths": ["**"]}, {"agents": ["*"], "paths": ["locked/**"], "effect": "deny"}, {"agents": ["*"], "paths": ["**"]}]}`
	if _, err := st.SetPolicy(ctx, []byte(policy), store.WriteOptions{Agent: "admin"}); err != nil {
		t.Fatal(err)
	}
	h1 := head()
	if e := c.fail("set", map[string]any{"file": "locked/a.json", "key": "a", "value": 1}); code(e) != 3 || e["kind"] != "denied" {
		t.Fatalf("denied: %v", e)
	}
	if e := c.fail("put", map[string]any{"file": ".aiwg/policy.json", "value": map[string]any{"rules": []any{}}}); e["kind"] != "read_only" {
		t.Fatalf("policy rewrite: %v", e)
	}
	if head() != h1 {
		t.Fatal("a denied write moved the branch")
	}
	// Unknown tool: a protocol error; the session goes on.
	if _, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Fatalf("unknown tool: %v", err)
	}
	c.call("get", map[string]any{"file": "plan.json"})
	storetest.Fsck(t, st)
}

func TestPrompts(t *testing.T) {
	c := connect(t, storetest.New(t), "planner")
	ctx := context.Background()
	ps, err := c.cs.ListPrompts(ctx, nil)
	if err != nil || len(ps.Prompts) < 3 {
		t.Fatalf("prompts: %v %v", ps, err)
	}
	for _, p := range ps.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "x"
		}
		r, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: args})
		if err != nil || len(r.Messages) == 0 {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
	if _, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review_branch"}); err == nil {
		t.Fatal("a prompt without its required argument")
	}
}
