package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/store"
)

const sandboxPolicy = `{"default": "allow", "rules": [],
 "profiles": {"reader": {"documents": {"read": ["public/**"], "write": ["agents/{agent}/**"]}, "memory": ["session"]}},
 "sandbox": [{"agents": ["scraper"], "profile": "reader"}, {"agents": ["worker"], "profile": "minimal"}]}`

// TestProfilesOverMCP: a sandboxed agent's tool calls meet its profile:
// reads, writes, memory, queues, the cache and the frame; each refusal
// is code 3 naming the profile and the rule.
func TestProfilesOverMCP(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	admin := store.WriteOptions{Agent: "admin"}
	if _, err := st.SetPolicy(ctx, []byte(sandboxPolicy), admin); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"public/a.json", "private/b.json"} {
		if _, err := st.Put(ctx, f, []byte(`{"x": 1}`), admin); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.Memory().Put(ctx, memory.Key{Namespace: "long_term", Kind: "fact", ID: "f"}, []byte(`1`), 0, admin); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Memory().Put(ctx, memory.Key{Namespace: "session", Kind: "fact", ID: "s"}, []byte(`2`), 0, admin); err != nil {
		t.Fatal(err)
	}
	c := connect(t, st, "scraper")
	c.call("get", map[string]any{"file": "public/a.json"})
	head, _ := st.Resolve("", "")
	for _, tc := range []struct {
		tool string
		args map[string]any
		rule string
	}{
		{"get", map[string]any{"file": "private/b.json"}, "documents.read"},
		{"blame", map[string]any{"file": "private/b.json"}, "documents.read"},
		{"set", map[string]any{"file": "public/a.json", "key": "x", "value": 2}, "documents.write"},
		{"memory_get", map[string]any{"namespace": "long_term", "kind": "fact", "id": "f"}, "memory"},
		{"memory_put", map[string]any{"namespace": "long_term", "kind": "fact", "id": "g", "value": 1}, "memory"},
		{"queue_peek", map[string]any{"name": "jobs"}, "queues"},
		{"queue_put", map[string]any{"name": "jobs", "value": 1}, "queues"},
		{"cache_set", map[string]any{"key": "k", "value": 1}, "cache.allowed"},
		{"cache_get", map[string]any{"key": "k"}, "cache.allowed"},
		{"log", map[string]any{"file": "private/b.json", "key": "x"}, "documents.read"},
		{"diff", map[string]any{"from": "HEAD~1", "file": "private/b.json"}, "documents.read"},
		{"traj_show", map[string]any{"id": "traj-00000000"}, "documents.read"},
		{"event_ls", nil, "coordination"},
		{"lease_ls", nil, "coordination"},
	} {
		e := c.fail(tc.tool, tc.args)
		if code(e) != 3 || e["kind"] != "denied" || e["profile"] != "reader" || e["rule"] != tc.rule {
			t.Errorf("%s: %v; want code 3 denied by reader's %s", tc.tool, e, tc.rule)
		}
	}
	if now, _ := st.Resolve("", ""); now != head {
		t.Error("a refused call moved the branch")
	}
	// A listing shows what the agent may read, no more.
	es := c.call("ls", map[string]any{"dir": "public"})["entries"].([]any)
	if len(es) != 1 {
		t.Errorf("ls public: %v", es)
	}
	if es := c.call("ls", map[string]any{"dir": "private"})["entries"].([]any); len(es) != 0 {
		t.Errorf("ls private shows %v", es)
	}
	// Documents as resources, too.
	if _, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: DocumentURI("main", "public/a.json")}); err != nil {
		t.Errorf("a readable resource: %v", err)
	}
	if _, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: DocumentURI("main", "private/b.json")}); err == nil || !strings.Contains(err.Error(), "documents.read") {
		t.Errorf("a resource the agent may not read: %v", err)
	}
	// A diff or a mutation shows the files the agent may read, no more.
	m, err := st.Put(ctx, "private/b.json", []byte(`{"x": "secret"}`), admin)
	if err != nil {
		t.Fatal(err)
	}
	if files := c.call("show", map[string]any{"rev": m.Commit})["diff"].([]any); len(files) != 0 {
		t.Errorf("show reveals %v", files)
	}
	if files := c.call("diff", map[string]any{"from": "HEAD~1", "to": "HEAD"})["files"].([]any); len(files) != 0 {
		t.Errorf("diff reveals %v", files)
	}
	recs := c.call("memory_ls", nil)["records"].([]any)
	if len(recs) != 1 || !strings.Contains(recs[0].(map[string]any)["namespace"].(string), "session") {
		t.Errorf("memory_ls: %v", recs)
	}
	// The frame is every profile's.
	w := connect(t, st, "worker")
	w.call("frame_set", map[string]any{"key": "k", "value": 1})
	if e := w.fail("cache_get", map[string]any{"key": "k"}); e["profile"] != "minimal" {
		t.Errorf("minimal cache: %v", e)
	}
}

// TestSessionFrames: each session has its own run, held in memory, never
// reachable by another agent, and discarded when the session closes.
func TestSessionFrames(t *testing.T) {
	st := storetest.New(t)
	srv := New(st, Options{Agent: "a"})
	c := connectTo(t, srv.SDK(), nil)
	run := c.call("frame_set", map[string]any{"key": "k", "value": "v"})["run"].(string)
	if !strings.HasPrefix(run, "mcp-") {
		t.Fatalf("session run %q", run)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), frame.Dir)); !os.IsNotExist(err) {
		t.Errorf("the server's frame is on disk: %v", err)
	}
	// Another session of another agent naming the run cannot read it.
	other := connect(t, st, "b")
	if e := other.fail("frame_get", map[string]any{"key": "k", "run": run}); code(e) != 3 || e["kind"] != "denied" {
		t.Errorf("another agent read the run: %v", e)
	}
	// A second session of its own has a run of its own.
	if r := connectTo(t, srv.SDK(), nil).call("frame_set", map[string]any{"key": "k", "value": 1}); r["run"] == run {
		t.Error("two sessions share a run")
	}
	if _, err := st.Frames().Get(context.Background(), run, "k", frame.Options{Agent: "a"}); err != nil {
		t.Fatalf("before the session closes: %v", err)
	}
	c.cs.Close()
	// The session's end discards its frame.
	for i := 0; i < 200; i++ {
		if _, err := st.Frames().Get(context.Background(), run, "k", frame.Options{Agent: "a"}); err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the frame outlived its session")
}
