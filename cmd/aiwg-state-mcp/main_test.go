package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bin is the directory aiwg-state and aiwg-state-mcp are built into, as
// go install puts them.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aiwg-mcp-bin-")
	if err != nil {
		panic(err)
	}
	bin = dir
	if out, err := exec.Command("go", "build", "-o", dir, ".", "../aiwg-state").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newStore makes a store with the CLI and returns its git directory.
func newStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), "init")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return filepath.Join(dir, ".aiwg", "state.git")
}

func git(t *testing.T, store string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", store}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func fsck(t *testing.T, store string) {
	t.Helper()
	git(t, store, "fsck", "--strict", "--no-progress")
}

func aiwg(t *testing.T, store string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), append(args, "--store", store)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("aiwg-state %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func callOK(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("%s: %s", name, b)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// TestStdio: aiwg-state mcp hands over to aiwg-state-mcp, which serves a
// host over its standard streams as the agent of --agent; a document's
// subscriber hears of a write by another process.
func TestStdio(t *testing.T) {
	store := newStore(t)
	updated := make(chan string, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), "mcp", "--store", store, "--agent", "planner")
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	m := callOK(t, cs, "set", map[string]any{"file": "plan.json", "key": "risk.level", "value": "high"})
	got := git(t, store, "log", "-1", "--format=%an %(trailers:key=Mutation-Id,valueonly,separator=)")
	if want := "planner " + m["mutation_id"].(string); strings.TrimSpace(got) != want {
		t.Fatalf("git log: %q, want %q", got, want)
	}
	uri := "aiwg://main/plan.json"
	r, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(r.Contents[0].Text, "high") {
		t.Fatalf("read %s: %v %v", uri, r, err)
	}
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the watch reads the branch's head first
	aiwg(t, store, "set", "other.json", "a", "1", "--agent", "bystander")
	aiwg(t, store, "set", "plan.json", "risk.level", `"low"`, "--agent", "reviewer")
	select {
	case u := <-updated:
		if u != uri {
			t.Fatalf("updated %s", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification of the other process's write")
	}
	select {
	case u := <-updated:
		t.Fatalf("a second notification (%s): the write to other.json is not plan.json's", u)
	case <-time.After(300 * time.Millisecond):
	}
	fsck(t, store)
}

// TestStdioBadInput: a malformed line and an oversize line are answered
// with a parse error, nothing is written, and the session goes on.
func TestStdioBadInput(t *testing.T) {
	store := newStore(t)
	head := git(t, store, "rev-parse", "HEAD")
	cmd := exec.Command(filepath.Join(bin, "aiwg-state-mcp"), "--store", store, "--agent", "planner")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	r := bufio.NewReaderSize(out, 1<<20)
	send := func(line string) { io.WriteString(in, line+"\n") }
	recv := func() map[string]any {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, bad := range []string{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"set","arguments":{"file":"a.json"`, `garbage`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put","arguments":{"file":"big.json","value":"` + strings.Repeat("x", 17<<20) + `"}}}`} {
		send(bad)
		e := recv()
		if e["error"] == nil || e["error"].(map[string]any)["code"] != -32700.0 {
			t.Fatalf("bad line: %v", e)
		}
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	if e := recv(); e["error"] == nil || !strings.Contains(fmt.Sprint(e["error"]), "nope") {
		t.Fatalf("unknown tool: %v", e)
	}
	if now := git(t, store, "rev-parse", "HEAD"); now != head {
		t.Fatal("bad input wrote a commit")
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"set","arguments":{"file":"a.json","key":"k","value":1}}}`)
	if res := recv(); res["result"] == nil || res["result"].(map[string]any)["isError"] == true {
		t.Fatalf("after bad input: %v", res)
	}
	fsck(t, store)
}

// startHTTP starts aiwg-state mcp --http on a free loopback port and
// returns its URL.
func startHTTP(t testing.TB, store string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), "mcp", "--http", "127.0.0.1:0", "--store", store, "--no-sync")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("the server said nothing: %v", err)
	}
	u := regexp.MustCompile(`http://\S+/`).FindString(line)
	if u == "" {
		t.Fatalf("no address in %q", line)
	}
	go io.Copy(io.Discard, stderr)
	return u
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t testing.TB, url, token string) (*sdk.ClientSession, error) {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	return client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}, nil)
}

// TestHTTP: each client's writes are authored by its token's agent; no
// token, a wrong one, no writes; 8 clients writing at once lose nothing.
func TestHTTP(t *testing.T) {
	store := newStore(t)
	tokens := map[string]string{}
	for i := range 8 {
		agent := fmt.Sprintf("agent-%d", i)
		tokens[agent] = strings.TrimSpace(aiwg(t, store, "mcp", "token", agent))
	}
	if fi, err := os.Stat(filepath.Join(store, "aiwg", "mcp-tokens")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v %v", fi, err)
	}
	url := startHTTP(t, store)
	head := git(t, store, "rev-parse", "HEAD")

	for _, token := range []string{"", "aiwg_not-a-token-of-this-store"} {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set","arguments":{"file":"a.json","key":"k","value":1}}}`))
		if token != "" {
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err = http.DefaultClient.Do(req)
		}
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("token %q: status %d, want 401", token, resp.StatusCode)
		}
		if _, err := connectHTTP(t, url, token); err == nil {
			t.Fatalf("token %q: a session", token)
		}
	}
	if now := git(t, store, "rev-parse", "HEAD"); now != head {
		t.Fatal("an unauthenticated request wrote")
	}

	const each = 10
	var wg sync.WaitGroup
	ids := make(chan string, 8*each)
	for agent, token := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := connectHTTP(t, url, token)
			if err != nil {
				t.Error(err)
				return
			}
			defer cs.Close()
			for i := range each {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "set", Arguments: map[string]any{"file": "agents/" + agent + ".json", "key": fmt.Sprintf("k%d", i), "value": i}})
				if err != nil || res.IsError {
					t.Errorf("%s: %v %v", agent, err, res)
					return
				}
				b, _ := json.Marshal(res.StructuredContent)
				var m struct {
					ID    string `json:"mutation_id"`
					Agent string `json:"agent"`
				}
				json.Unmarshal(b, &m)
				if m.Agent != agent {
					t.Errorf("written as %q by %s's token", m.Agent, agent)
				}
				ids <- m.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	log := git(t, store, "log", "--format=%an %(trailers:key=Mutation-Id,valueonly,separator=)")
	n := 0
	for id := range ids {
		n++
		if !strings.Contains(log, id) {
			t.Errorf("%s is not in the history", id)
		}
	}
	if commits := strings.Count(log, "\n"); n != 8*each || commits != 8*each+1 {
		t.Fatalf("%d writes, %d commits (with init's); want %d", n, commits, 8*each+1)
	}
	for agent := range tokens {
		if c := strings.Count(log, agent+" mut-"); c != each {
			t.Errorf("%s authored %d commits, want %d", agent, c, each)
		}
	}
	fsck(t, store)
}

// TestHTTPRefusals: no address beyond loopback unless told; no tokens, no
// server; --agent is for stdio.
func TestHTTPRefusals(t *testing.T) {
	store := newStore(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--http", "127.0.0.1:0"}, "mcp token AGENT"},
		{[]string{"--http", "127.0.0.1:0", "--agent", "x"}, "--agent is for stdio"},
		{[]string{"token"}, "token needs an AGENT"},
		{[]string{"--nope"}, "flag provided but not defined"},
	} {
		if strings.Contains(strings.Join(tc.args, " "), "--agent") {
			aiwg(t, store, "mcp", "token", "someone")
		}
		cmd := exec.Command(filepath.Join(bin, "aiwg-state-mcp"), append(tc.args, "--store", store)...)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() < 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v %s", tc.args, err, out)
		}
	}
	// A tokens file others may read is refused.
	os.Chmod(filepath.Join(store, "aiwg", "mcp-tokens"), 0o644)
	out, err := exec.Command(filepath.Join(bin, "aiwg-state-mcp"), "--http", "127.0.0.1:0", "--store", store).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "chmod 600") {
		t.Fatalf("a readable tokens file: %v %s", err, out)
	}
}
