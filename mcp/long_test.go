package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestCancel: a long call the client cancels ends at once and writes
// nothing; the session goes on.
func TestCancel(t *testing.T) {
	st := storetest.New(t)
	c := connect(t, st, "planner")
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: "queue_take", Arguments: map[string]any{"name": "work", "wait": "30s"}})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	// The server's side stops too: a message put now is not taken by
	// the cancelled call.
	time.Sleep(100 * time.Millisecond)
	if storetest.Git(t, st, "rev-parse", "HEAD") != head {
		t.Fatal("a cancelled call wrote")
	}
	c.call("queue_put", map[string]any{"name": "work", "value": 1})
	time.Sleep(300 * time.Millisecond)
	if log := storetest.Git(t, st, "log", "--format=%s"); strings.Count(log, "\n") != 2 {
		t.Fatalf("after the cancel, history:\n%s", log)
	}
	c.call("queue_take", map[string]any{"name": "work"})
	_ = t0
	storetest.Fsck(t, st)
}

// TestProgress: a long call with a progress token reports progress.
func TestProgress(t *testing.T) {
	st := storetest.New(t)
	for i := range 30 {
		if _, err := st.Set(context.Background(), "a.json", "k", []byte{byte('0' + i%10)}, store.WriteOptions{Agent: "seed"}); err != nil && !errors.Is(err, store.ErrNoChange) {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	srv := New(st, Options{Agent: "planner"})
	c := connectTo(t, srv.SDK(), &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, req.Params)
		mu.Unlock()
	}})
	params := &sdk.CallToolParams{Name: "reindex", Arguments: map[string]any{}}
	params.SetProgressToken("reindex-1")
	res, err := c.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("reindex: %v %v", err, res)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress notification")
	}
	last := got[len(got)-1]
	if last.ProgressToken != "reindex-1" || last.Total == 0 || last.Progress != last.Total {
		t.Fatalf("last progress: %+v", last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Progress <= got[i-1].Progress {
			t.Fatalf("progress went back: %+v then %+v", got[i-1], got[i])
		}
	}
}

// TestResources: a document at a branch and at a revision; a missing one
// is the protocol's not-found error.
func TestResources(t *testing.T) {
	st := storetest.New(t)
	c := connect(t, st, "planner")
	ctx := context.Background()
	m := c.call("set", map[string]any{"file": "plan.json", "key": "risk", "value": "high"})
	c.call("branch_create", map[string]any{"name": "agents/planner/main"})
	c.call("set", map[string]any{"file": "plan.json", "key": "risk", "value": "low", "branch": "agents/planner/main"})
	for uri, want := range map[string]string{
		"aiwg://main/plan.json":                        "high",
		"aiwg://agents%2Fplanner%2Fmain/plan.json":     "low",
		DocumentURI(m["commit"].(string), "plan.json"): "high",
		"aiwg://HEAD/plan.json":                        "high",
	} {
		r, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || !strings.Contains(r.Contents[0].Text, want) || r.Contents[0].MIMEType != "application/json" {
			t.Errorf("%s: %v %v", uri, r, err)
		}
	}
	for _, uri := range []string{"aiwg://main/nope.json", "aiwg://no-branch/plan.json"} {
		if _, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("%s: read", uri)
		}
	}
	ts, err := c.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(ts.ResourceTemplates) != 1 || ts.ResourceTemplates[0].URITemplate != uriTemplate {
		t.Fatalf("templates: %v %v", ts, err)
	}
}
