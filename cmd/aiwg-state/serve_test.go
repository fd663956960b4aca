package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/serve"
	storepkg "github.com/aiwg/aiwg-state/store"
)

// project makes a directory holding a store at .aiwg/state.git, as
// `aiwg-state init` makes it, with a subdirectory to work from. The
// directory is short: a socket's path may not pass 104 bytes.
func project(t testing.TB) (dir, store string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "aw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	store = filepath.Join(dir, ".aiwg", "state.git")
	mustCLI(t, store, "", "init")
	if err := os.MkdirAll(filepath.Join(dir, "work", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, store
}

// serverProcess is a running `aiwg-state serve -v`; done is closed when
// it ends; log is what it said.
type serverProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// said waits a little for the server's log to hold line (it logs a
// command after answering it).
func (s *serverProcess) said(t *testing.T, line string) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(s.log.String(), line) {
			return true
		}
	}
	return false
}

// startServer runs `aiwg-state serve` on store, with env added to its
// environment, until the test ends.
func startServer(t *testing.T, program, store string, env ...string) *serverProcess {
	t.Helper()
	cmd := exec.Command(program, "serve", "--store", store, "--idle", "5m", "-v")
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the server did not stop on an interrupt: %s", stderr.String())
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(socketPath(store)); err == nil {
			return &serverProcess{cmd, done, stderr}
		}
		select {
		case <-done:
			t.Fatalf("the server ended: %s", stderr.String())
		default:
		}
	}
	t.Fatalf("no socket after 10s: %s", stderr.String())
	return nil
}

type result struct {
	stdout, stderr string
	code           int
}

// execIn runs program with args in dir, with env added and stdin given.
func execIn(t *testing.T, program, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return result{o.String(), e.String(), cmd.ProcessState.ExitCode()}
}

// TestServedCommandsMatchTheCLI: a command through the server prints what
// the CLI prints and exits as it exits, and a write is the commit the CLI
// would make: the client's agent, files, input and directory, never the
// server's.
func TestServedCommandsMatchTheCLI(t *testing.T) {
	dir, store := project(t)
	work := filepath.Join(dir, "work", "sub")
	mustCLI(t, store, "", "set", "a.json", "s", `"text"`, "--agent", "seed")
	mustCLI(t, store, "", "set", "a.json", "list", `[1, 2, {"k": "v"}]`, "--agent", "seed")
	// The server's own environment names another agent and store: what a
	// command sees must be the client's.
	server := startServer(t, bin, store, "AIWG_AGENT=server-agent", "AIWG_STATE_STORE=/nonexistent")
	env := []string{"AIWG_AGENT=", "AIWG_STATE_STORE=", "NO_COLOR=1"}
	for _, args := range [][]string{
		{"get", "a.json"},
		{"get", "a.json", "list.2.k", "--json"},
		{"cat", "a.json"},
		{"ls"},
		{"ls", "--json"},
		{"log"},
		{"log", "a.json#s", "--json"},
		{"blame", "a.json"},
		{"diff", "HEAD~1", "HEAD"},
		{"show", "HEAD", "--json"},
		{"branch", "--json"},
		{"var", "ls", "--json"},
		{"bisect", "--pred", "a.json#list exists", "--json"},
		// Errors: one line, the same code, with and without --json.
		{"get", "a.json", "missing"},
		{"get", "nope.json", "--json"},
		{"set", "a.json", "x", "{bad"},
		{"set", "a.json", "s.x", "1"},
		{"set", "a.json", "x", "1", "--expect", "HEAD~1", "--json"},
		{"set", "a.json", "x", "1", "--no-such-flag"},
		{"apply", "nosuch.jsonl"},
		{"incr", "a.json", "s"},
		{"get", "a.json", "--at", "HEAD~9"},
		{"nosuchcommand"},
		{"log", "-n", "-1"},
	} {
		// (aiwg-state itself would send it to the server too.)
		direct := execIn(t, bin, work, "", append(env, "AIWG_STATE_NO_SERVE=1"), args...)
		client := execIn(t, clientBin, work, "", env, args...)
		if client != direct {
			t.Errorf("%v:\nthrough the server: %+v\ndirect:             %+v", args, client, direct)
		}
		if args[0] != "nosuchcommand" && !server.said(t, "ran "+strings.Join(args, " ")+":") {
			t.Errorf("%v was not run by the server: %s", args, server.log.String())
		}
	}

	// Writes: the author is the client's agent, files are read from the
	// client's directory, standard input is the client's.
	os.WriteFile(filepath.Join(work, "ops.jsonl"), []byte(`{"op":"set","file":"b.json","path":"from","value":"file"}`+"\n"), 0o644)
	for _, w := range []struct {
		args  []string
		env   []string
		stdin string
		agent string
	}{
		{[]string{"set", "b.json", "k", "1"}, []string{"AIWG_AGENT=client-agent"}, "", "client-agent"},
		{[]string{"set", "b.json", "k", "2"}, []string{"AIWG_AGENT=", "USER=login-name"}, "", "login-name"},
		{[]string{"set", "b.json", "k", "3", "--agent", "flag-agent"}, []string{"AIWG_AGENT=client-agent"}, "", "flag-agent"},
		{[]string{"apply", "ops.jsonl"}, []string{"AIWG_AGENT=applier"}, "", "applier"},
		{[]string{"set", "b.json", "in", "-"}, []string{"AIWG_AGENT=piper"}, `{"piped": true}`, "piper"},
		{[]string{"set", "b.json", "rel", "1", "--store", "../../.aiwg/state.git"}, []string{"AIWG_AGENT=relative"}, "", "relative"},
	} {
		r := execIn(t, clientBin, work, w.stdin, append([]string{"AIWG_STATE_STORE="}, w.env...), w.args...)
		if r.code != 0 {
			t.Fatalf("%v: %+v", w.args, r)
		}
		if got := strings.TrimSpace(gitOut(t, store, "log", "-1", "--format=%an")); got != w.agent {
			t.Errorf("%v: author %q, want %q", w.args, got, w.agent)
		}
	}
	if n := strings.Count(server.log.String(), "ran set b.json") + strings.Count(server.log.String(), "ran apply ops.jsonl"); n != 6 {
		t.Errorf("the server ran %d of the 6 writes: %s", n, server.log.String())
	}
	want := "{\n  \"from\": \"file\",\n  \"in\": {\n    \"piped\": true\n  },\n  \"k\": 3,\n  \"rel\": 1\n}\n"
	if got := gitOut(t, store, "show", "main:b.json"); got != want {
		t.Errorf("b.json:\n%s\nwant:\n%s", got, want)
	}
	if out := gitOut(t, store, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Fatal(out)
	}
}

// TestClientRunsWhatTheServerDoesNot: with no server, with a command the
// server leaves to the client, and with help, the client runs aiwg-state
// itself, and the result is aiwg-state's.
func TestClientRunsWhatTheServerDoesNot(t *testing.T) {
	dir, store := project(t)
	work := filepath.Join(dir, "work")
	if r := execIn(t, clientBin, work, "", []string{"AIWG_AGENT=no-server"}, "set", "c.json", "k", "1"); r.code != 0 {
		t.Fatalf("without a server: %+v", r)
	}
	if got := gitOut(t, store, "log", "-1", "--format=%an"); strings.TrimSpace(got) != "no-server" {
		t.Errorf("author %q", got)
	}
	server := startServer(t, bin, store)
	// init, declined by name, runs in the client's directory.
	if r := execIn(t, clientBin, work, "", nil, "init"); r.code != 0 || !strings.Contains(r.stdout, "created store") {
		t.Fatalf("init through the client: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(work, ".aiwg", "state.git", "HEAD")); err != nil {
		t.Errorf("init did not run in the client's directory: %v", err)
	}
	if !server.said(t, "declined init: ") {
		t.Errorf("init was not declined: %s", server.log.String())
	}
	os.RemoveAll(filepath.Join(work, ".aiwg"))
	// A client whose process differs from the server's in what the server
	// cannot take on for it runs the command itself.
	for _, c := range []struct {
		env  []string
		args []string
		why  string
	}{
		{[]string{"TZ=Asia/Tokyo"}, []string{"set", "c.json", "tz", "1"}, "time zone"},
		{[]string{"TZ="}, []string{"set", "c.json", "tz", "2"}, "time zone"}, // set empty is UTC, not the system's zone
		{nil, []string{"state", "help"}, "help is printed by the client"},
		{nil, []string{"state"}, "help is printed by the client"},
		{nil, []string{"get", "c.json", "--help=true"}, "help is printed by the client"},
		{nil, []string{"get", "--h", "c.json"}, "help is printed by the client"},
		{nil, []string{"policy", "show"}, `"policy" is run by the client`},
	} {
		if r := execIn(t, clientBin, work, "", c.env, c.args...); r.code != 0 && c.args[0] == "set" {
			t.Errorf("%v: %+v", c.args, r)
		}
		if !server.said(t, "declined "+strings.Join(c.args, " ")+": ") || !strings.Contains(server.log.String(), c.why) {
			t.Errorf("%v was not declined for %q: %s", c.args, c.why, server.log.String())
		}
	}
	// Another store (no server of its own): the client runs the command.
	other := filepath.Join(work, "other.git")
	mustCLI(t, other, "", "init")
	if r := execIn(t, clientBin, work, "", nil, "set", "c.json", "k", "2", "--store", other); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if got := gitOut(t, other, "show", "main:c.json"); !strings.Contains(got, `"k": 2`) {
		t.Errorf("the write to the other store: %s", got)
	}
	if _, err := os.Stat(filepath.Join(work, "other.git", "HEAD")); err != nil {
		t.Errorf("init did not run in the client's directory: %v", err)
	}
	direct, client := execIn(t, bin, work, "", nil, "set", "--help"), execIn(t, clientBin, work, "", nil, "set", "--help")
	if client != direct || !strings.Contains(client.stdout, "Examples") {
		t.Errorf("help through the client differs:\n%+v\n%+v", client, direct)
	}
	// Outside any store, the client says what aiwg-state says.
	outside := t.TempDir()
	direct, client = execIn(t, bin, outside, "", []string{"AIWG_STATE_STORE="}, "get", "a.json"), execIn(t, clientBin, outside, "", []string{"AIWG_STATE_STORE="}, "get", "a.json")
	if client != direct || client.code != exitDomain {
		t.Errorf("outside a store:\n%+v\n%+v", client, direct)
	}
}

// TestCompletionHandlersRunAsTheClient: a write through the server that
// completes a state runs the handler in the client's directory and
// environment, as the same write by the CLI would.
func TestCompletionHandlersRunAsTheClient(t *testing.T) {
	dir, store := project(t)
	work := filepath.Join(dir, "work")
	id := newState(t, store)
	mustCLI(t, store, "", "state", "on-complete", `echo "$AIWG_STATE_ID $MARK $(pwd)" >> completed.log`)
	// The server's PATH has no sh: the handler's is found on the client's.
	server := startServer(t, bin, store, "MARK=server", "PATH=/nonexistent")
	if r := execIn(t, clientBin, work, "", []string{"MARK=client"}, "final", "done", "--state", id); r.code != 0 {
		t.Fatalf("final: %+v", r)
	}
	if !server.said(t, "ran final done") {
		t.Fatalf("final was not run by the server: %s", server.log.String())
	}
	data, err := os.ReadFile(filepath.Join(work, "completed.log"))
	if err != nil {
		t.Fatalf("the handler did not run in the client's directory: %v", err)
	}
	if got, want := strings.TrimSpace(string(data)), id+" client "+work; got != want {
		t.Errorf("handler saw %q, want %q", got, want)
	}
}

// TestServedWritersLoseNothing: clients through the server and CLI
// processes writing one store at once: every write is one commit, none
// lost.
func TestServedWritersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir, store := project(t)
	server := startServer(t, bin, store)
	const writers, each = 6, 30
	var wg sync.WaitGroup
	errs := make(chan string, writers*each)
	for w := 0; w < writers; w++ {
		program := clientBin
		if w%3 == 2 {
			program = bin
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				cmd := exec.Command(program, "set", "shared.json", fmt.Sprintf("w%d", w), fmt.Sprint(i), "--no-sync", "--agent", fmt.Sprintf("w%d", w))
				cmd.Dir = dir
				// aiwg-state writes in its own process, beside the
				// server's writes, rather than sending them there.
				cmd.Env = append(os.Environ(), "AIWG_STATE_NO_SERVE=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Sprintf("writer %d: %v: %s", w, err, out)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := strings.TrimSpace(gitOut(t, store, "rev-list", "--count", "main")); n != fmt.Sprint(1+writers*each) {
		t.Errorf("%s commits, want %d", n, 1+writers*each)
	}
	if n := strings.Count(server.log.String(), "ran set shared.json"); n != 4*each {
		t.Errorf("the server ran %d of the clients' %d writes", n, 4*each)
	}
	want := "{\n"
	for w := 0; w < writers; w++ {
		want += fmt.Sprintf("  \"w%d\": %d", w, each-1)
		if w < writers-1 {
			want += ","
		}
		want += "\n"
	}
	want += "}\n"
	if got := gitOut(t, store, "show", "main:shared.json"); got != want {
		t.Errorf("shared.json:\n%s\nwant:\n%s", got, want)
	}
}

// TestKilledServer: a server killed with SIGKILL in the middle of a stream
// of writes leaves a store git accepts; each write either landed once or
// was reported lost, and never ran twice; the next client runs the
// command itself.
func TestKilledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir, store := project(t)
	server := startServer(t, bin, store)
	var landed, lost int
	for i := 0; i < 60; i++ {
		if i == 20 {
			go func() {
				time.Sleep(time.Millisecond)
				server.cmd.Process.Signal(syscall.SIGKILL)
			}()
		}
		r := execIn(t, clientBin, dir, "", nil, "set", "k.json", fmt.Sprintf("i%d", i), "1", "--no-sync")
		switch {
		case r.code == 0:
			landed++
		case strings.Contains(r.stderr, "may have run"):
			lost++
		default:
			t.Fatalf("write %d: %+v", i, r)
		}
	}
	if out := gitOut(t, store, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Fatal(out)
	}
	commits := strings.Count(gitOut(t, store, "log", "--format=%H", "main"), "\n") - 1
	if commits < landed || commits > landed+lost {
		t.Errorf("%d commits for %d writes acknowledged and %d lost", commits, landed, lost)
	}
	if lost > 1 {
		t.Errorf("%d writes lost: only the one in flight at the kill may be", lost)
	}
	if n := strings.Count(server.log.String(), "ran set k.json"); n < 20 {
		t.Errorf("the server ran %d writes before it was killed, want the first 20", n)
	}
}

// TestServerStopsWhenItsProgramIsReplaced: a rebuilt aiwg-state is not
// served by the old server: the client's command runs the new program, and
// the old server ends.
func TestServerStopsWhenItsProgramIsReplaced(t *testing.T) {
	dir, store := project(t)
	tmp := t.TempDir()
	program := filepath.Join(tmp, "aiwg-state")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(program, data, 0o755); err != nil {
		t.Fatal(err)
	}
	server := startServer(t, program, store)
	// Replaced as go install replaces it: a new file renamed over the old.
	if err := os.WriteFile(program+".new", data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(program+".new", program); err != nil {
		t.Fatal(err)
	}
	if r := execIn(t, clientBin, dir, "", nil, "set", "r.json", "k", "1"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	select {
	case <-server.done:
	case <-time.After(time.Minute): // a bound for a hang, not a timing: it ends at once unloaded
		t.Fatal("the old server is still running")
	}
}

// TestServedCommandsRunConcurrently: a server's commands run at once in
// one process, each with its own pooled store (run under -race, it checks
// they share nothing unguarded).
func TestServedCommandsRunConcurrently(t *testing.T) {
	dir, store := project(t)
	home, _ := os.Stat(store)
	sv := &server{store: store, home: home, pool: newStorePool(store), stop: func() {}, log: io.Discard}
	defer sv.pool.close()
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				var out, errb bytes.Buffer
				req := &serve.Invocation{Request: serve.Request{Args: []string{"aiwg-state", "set", "c.json", fmt.Sprintf("w%d", w), fmt.Sprint(i), "--no-sync", "--agent", "a"}, Dir: dir}, Stdout: &out, Stderr: &errb}
				if code := sv.run(context.Background(), req); code != 0 {
					t.Errorf("exit %d: %s", code, errb.String())
				}
				req = &serve.Invocation{Request: serve.Request{Args: []string{"aiwg-state", "get", "c.json", "--json"}, Dir: dir}, Stdout: &out, Stderr: &errb}
				if code := sv.run(context.Background(), req); code != 0 {
					t.Errorf("exit %d: %s", code, errb.String())
				}
			}
		}(w)
	}
	wg.Wait()
	if n := strings.TrimSpace(gitOut(t, store, "rev-list", "--count", "main")); n != fmt.Sprint(1+workers*each) {
		t.Errorf("%s commits, want %d", n, 1+workers*each)
	}
}

// TestServeStatusAndStop: serve --status names the running server's
// process, serve --stop ends it and waits, and both say so when none runs.
func TestServeStatusAndStop(t *testing.T) {
	dir, store := project(t)
	if r := execIn(t, bin, dir, "", nil, "serve", "--status"); r.code != exitDomain || !strings.Contains(r.stderr, "no server runs") {
		t.Errorf("status with no server: %+v", r)
	}
	server := startServer(t, bin, store)
	r := execIn(t, bin, dir, "", nil, "serve", "--status", "--json")
	var st struct {
		PID    int    `json:"pid"`
		Socket string `json:"socket"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 || st.PID != server.cmd.Process.Pid || st.Socket != socketPath(store) {
		t.Fatalf("status: %+v (%v); server pid %d", r, err, server.cmd.Process.Pid)
	}
	if r := execIn(t, bin, filepath.Join(dir, "work"), "", nil, "serve", "--stop"); r.code != 0 || !strings.Contains(r.stdout, "stopped the server") {
		t.Fatalf("stop: %+v", r)
	}
	select {
	case <-server.done: // the lock goes with the process's last act; its exit follows
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not end after serve --stop")
	}
	if _, err := os.Stat(socketPath(store)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket outlived the server: %v", err)
	}
	if r := execIn(t, bin, dir, "", nil, "serve", "--stop"); r.code != exitDomain {
		t.Errorf("stop with no server: %+v", r)
	}
}

// panickingWriter panics on every write, as a bug in a command would, at
// the point where a command prints its result.
type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) { panic("a bug\nacross lines") }

// TestServedPanicEndsTheCommandNotTheServer: a command that panics gives
// its client one line and exit 1, its stack goes to the server's log, the
// shared store it borrowed is retired (closed once no command holds it;
// the next command gets a new one), and the next command runs as usual.
func TestServedPanicEndsTheCommandNotTheServer(t *testing.T) {
	dir, store := project(t)
	home, _ := os.Stat(store)
	var log syncBuffer
	sv := &server{store: store, home: home, pool: newStorePool(store), stop: func() {}, log: &log}
	defer sv.pool.close()
	run := func(stdout io.Writer, args ...string) (int, string) {
		var errb bytes.Buffer
		req := &serve.Invocation{Request: serve.Request{Args: append([]string{"aiwg-state"}, args...), Dir: dir}, Stdout: stdout, Stderr: &errb}
		return sv.run(context.Background(), req), errb.String()
	}
	if code, stderr := run(io.Discard, "set", "c.json", "k", "1", "--no-sync", "--agent", "a"); code != 0 {
		t.Fatalf("set: exit %d: %s", code, stderr)
	}
	nosync := sv.pool.shared[1]
	if nosync == nil || nosync.users != 0 {
		t.Fatalf("after a --no-sync command: shared store %+v, want one with no handles out", nosync)
	}
	if code, stderr := run(io.Discard, "set", "c.json", "j", "2", "--agent", "a"); code != 0 {
		t.Fatalf("set: exit %d: %s", code, stderr)
	}
	shared := sv.pool.shared[0]
	if shared == nil || shared.users != 0 {
		t.Fatalf("after a command: shared store %+v, want one with no handles out", shared)
	}

	code, stderr := run(panickingWriter{}, "get", "c.json", "k")
	if code != exitUnexpected {
		t.Errorf("exit %d, want %d", code, exitUnexpected)
	}
	if want := "aiwg-state: internal error: a bug across lines (the server's log has the details)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if !strings.Contains(log.String(), "internal error running get c.json k: a bug") || !strings.Contains(log.String(), "goroutine ") {
		t.Errorf("the server's log has no stack for the panic:\n%s", log.String())
	}
	if sv.pool.shared[0] != nil || !shared.retired {
		t.Errorf("the shared store the panicking command used is still lent out")
	}
	if sv.pool.shared[1] != nosync {
		t.Errorf("a panic on one shared store retired the other")
	}

	var out bytes.Buffer
	if code, stderr := run(&out, "get", "c.json", "k"); code != 0 || out.String() != "1\n" {
		t.Errorf("after the panic: exit %d, stdout %q, stderr %q", code, out.String(), stderr)
	}
	if sv.pool.shared[0] == nil || sv.pool.shared[0] == shared {
		t.Errorf("after the panic the next command did not get a new shared store")
	}
}

// TestCLIForwardsToARunningServer: with a server running, aiwg-state
// itself sends its command line there (so many processes' writes are
// committed as a group), with the same output and exit code; what the
// server leaves to its client, and AIWG_STATE_NO_SERVE, run in the
// process.
func TestCLIForwardsToARunningServer(t *testing.T) {
	dir, store := project(t)
	server := startServer(t, bin, store)
	if r := execIn(t, bin, dir, "", nil, "set", "plan.json", "forwarded", "1", "--agent", "cli"); r.code != 0 {
		t.Fatalf("set: %+v", r)
	}
	if !server.said(t, "ran set plan.json forwarded 1 --agent cli:") {
		t.Fatalf("the server did not run the CLI's set: %s", server.log.String())
	}
	if r := execIn(t, bin, dir, "", nil, "get", "plan.json", "nosuchkey"); r.code != exitDomain {
		t.Errorf("a forwarded failure: %+v", r)
	}
	if r := execIn(t, bin, dir, "", []string{"AIWG_STATE_NO_SERVE=1"}, "set", "plan.json", "local", "2", "--agent", "cli"); r.code != 0 {
		t.Fatalf("set in the process: %+v", r)
	}
	if strings.Contains(server.log.String(), "ran set plan.json local") {
		t.Errorf("AIWG_STATE_NO_SERVE went to the server: %s", server.log.String())
	}
	if r := execIn(t, bin, dir, "", nil, "serve", "--status"); r.code != 0 || !server.said(t, "declined serve --status") {
		t.Errorf("serve --status is the process's own: %+v\n%s", r, server.log.String())
	}
	if out := gitOut(t, store, "log", "--format=%an %s", "main"); !strings.Contains(out, "cli create plan.json#forwarded") || !strings.Contains(out, "cli create plan.json#local") {
		t.Errorf("history:\n%s", out)
	}
}

// TestServerFoldsTheIndexInAProcessOfItsOwn: once the history index's log
// passes its bound, a served query answers from the longer log and the
// server runs `reindex --fold` in a process of its own, which publishes a
// new snapshot; answers before and after are git's, and git accepts the
// store.
func TestServerFoldsTheIndexInAProcessOfItsOwn(t *testing.T) {
	dir, store := project(t)
	st, err := aiwgstate.Open(context.Background(), store, storepkg.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range audit.DefaultFoldAt + 10 {
		if _, err := st.Set(context.Background(), fmt.Sprintf("d%d.json", i%4), "k", []byte(fmt.Sprint(i)), storepkg.WriteOptions{Agent: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	snapshot := filepath.Join(store, filepath.FromSlash(audit.IndexDir), "snapshot")
	before, _ := os.Stat(snapshot)
	server := startServer(t, bin, store)
	want := strings.Fields(gitIn(store, "", "log", "--format=%h", "--", "d1.json"))
	countLog := func() int {
		t.Helper()
		r := execIn(t, bin, dir, "", nil, "log", "d1.json", "--json")
		if r.code != 0 {
			t.Fatalf("log: %+v", r)
		}
		var entries []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
			t.Fatalf("log --json: %v: %s", err, r.stdout)
		}
		return len(entries)
	}
	if n := countLog(); n != len(want) {
		t.Fatalf("served log of d1.json: %d entries, git has %d commits", n, len(want))
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		now, err := os.Stat(snapshot)
		if err == nil && (before == nil || !os.SameFile(before, now)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new snapshot 30 s after the query: %s", server.log.String())
		}
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(server.log.String(), "folded the history index in process "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the fold did not run in a process of the server's: %s", server.log.String())
		}
	}
	if n := countLog(); n != len(want) {
		t.Errorf("served log of d1.json after the fold: %d entries, git has %d commits", n, len(want))
	}
	if out, err := exec.Command("git", "--git-dir", store, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v: %s", err, out)
	}
}

// TestServerFollowsTheManifestsSyncSetting: a server's shared store
// settles its sync setting at its first write; once a command changes the
// manifest's setting, the next command gets a store that settles it
// again, so a store whose users turn fsync back on is flushed at once.
func TestServerFollowsTheManifestsSyncSetting(t *testing.T) {
	dir, store := project(t)
	home, _ := os.Stat(store)
	sv := &server{store: store, home: home, pool: newStorePool(store), stop: func() {}, log: io.Discard}
	defer sv.pool.close()
	run := func(args ...string) {
		t.Helper()
		var errb bytes.Buffer
		req := &serve.Invocation{Request: serve.Request{Args: append([]string{"aiwg-state"}, args...), Dir: dir}, Stdout: io.Discard, Stderr: &errb}
		if code := sv.run(context.Background(), req); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	syncs := func() bool { return sv.pool.shared[0].st.Repo().Options().Sync }
	run("set", "c.json", "k", "1", "--agent", "a")
	if !syncs() {
		t.Fatal("a fresh store's writes do not sync")
	}
	run("config", "sync", "false", "--agent", "a")
	run("set", "c.json", "k", "2", "--agent", "a")
	if syncs() {
		t.Error("after config sync false, the server's writes still sync")
	}
	run("config", "sync", "true", "--agent", "a")
	run("set", "c.json", "k", "3", "--agent", "a")
	if !syncs() {
		t.Error("after config sync true, the server's writes do not sync")
	}
}
