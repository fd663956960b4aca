package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newState(t *testing.T, s string, extra ...string) string {
	t.Helper()
	out := mustCLI(t, s, "", append([]string{"state", "init", "--prompt", "Analyze risks", "--json"}, extra...)...)
	var r struct {
		State struct {
			StateID string `json:"state_id"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.State.StateID == "" {
		t.Fatalf("state init --json: %q %v", out, err)
	}
	return r.State.StateID
}

func TestRLMCLIScenario(t *testing.T) {
	s := newStore(t)
	id := newState(t, s)
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
	if got := mustCLI(t, s, "", "state", "status"); got != id+" incomplete\n" {
		t.Fatalf("status = %q", got)
	}
	mustCLI(t, s, "", "var", "set", "risk_count", "3")
	mustCLI(t, s, "", "var", "set", "city", "Paris")
	mustCLI(t, s, "", "var", "set", "endpoints", `["/login"]`, "--scope", "global")
	mustCLI(t, s, "", "var", "set", "risk_count", "4", "--source", "task-1a2b3c4d")
	if got := mustCLI(t, s, "", "var", "get", "city", "--raw"); got != "Paris\n" {
		t.Fatalf("get --raw = %q", got)
	}
	if got := mustCLI(t, s, "", "var", "get", "risk_count"); got != "4\n" {
		t.Fatalf("get = %q", got)
	}
	meta := mustCLI(t, s, "", "var", "get", "risk_count", "--meta")
	if !strings.Contains(meta, `"access_count": 2`) || !strings.Contains(meta, `"source": "task-1a2b3c4d"`) {
		t.Fatalf("--meta:\n%s", meta)
	}
	file := "sessions/sess-" + strings.TrimPrefix(id, "state-") + "/variables/risk_count.json"
	if got := gitOut(t, s, "log", "--format=%s", "--", file); got != "update "+file+"\ncreate "+file+"\n" {
		t.Fatalf("git log -- %s:\n%s", file, got)
	}
	_, errOut, code := runCLI(t, s, "", "var", "set", "x", "1")
	if code != 0 || !strings.Contains(errOut, "warning:") {
		t.Fatalf("naming advice: exit %d %q", code, errOut)
	}
	head := gitOut(t, s, "rev-parse", "main")
	refusals := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"var", "set", "prompt", "new"}, exitDomain, "prompt"},
		{[]string{"var", "set", "1bad", "1"}, exitUsage, "1bad"},
		{[]string{"var", "set", strings.Repeat("n", 129), "1"}, exitUsage, "129"},
		{[]string{"var", "set", "n", "abc", "--type", "number"}, exitUsage, "number"},
		{[]string{"var", "set", "n", "1", "--scope", "tree"}, exitUsage, "tree"},
		{[]string{"var", "get", "missing_one"}, exitDomain, "missing_one"},
		{[]string{"var", "rm", "Final"}, exitDomain, "Final"},
		{[]string{"checkpoint", "create", "initial_state"}, exitDomain, "initial_state"},
		{[]string{"rollback", "initial_state", "--hard"}, exitUsage, "--yes"},
		{[]string{"state", "show", "state-00000000"}, exitDomain, "state-00000000"},
	}
	for _, r := range refusals {
		_, errOut, code := runCLI(t, s, "", r.args...)
		if code != r.code || !strings.Contains(errOut, r.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d naming %q", r.args, code, errOut, r.code, r.want)
		}
	}
	mustCLI(t, s, "", "var", "set", "limit_value", "5", "--read-only")
	if _, errOut, code := runCLI(t, s, "", "var", "set", "limit_value", "6"); code != exitDomain || !strings.Contains(errOut, "limit_value") {
		t.Errorf("read-only: exit %d %q", code, errOut)
	}
	if gitOut(t, s, "rev-parse", "main") == head {
		t.Fatal("expected the read-only variable's commit")
	}

	mustCLI(t, s, "", "checkpoint", "create", "before_final", "-m", "ready to answer")
	if !strings.Contains(gitOut(t, s, "tag", "-l"), "checkpoints/"+id+"/before_final") {
		t.Fatal("git tag -l lacks the checkpoint")
	}
	if shown := gitOut(t, s, "show", "--no-patch", "checkpoints/"+id+"/before_final"); !strings.Contains(shown, "ready to answer") {
		t.Fatalf("git show:\n%s", shown)
	}
	before := gitOut(t, s, "ls-tree", "-r", "main", "states/"+id, "sessions/sess-"+strings.TrimPrefix(id, "state-"))
	mustCLI(t, s, "", "var", "mv", "city", "home_city")
	mustCLI(t, s, "", "var", "rm", "risk_count")
	mustCLI(t, s, "", "final", "Three risks found")
	if got := mustCLI(t, s, "", "state", "status"); got != id+" complete\n" {
		t.Fatalf("status = %q", got)
	}
	mustCLI(t, s, "", "rollback", "before_final")
	if got := gitOut(t, s, "ls-tree", "-r", "main", "states/"+id, "sessions/sess-"+strings.TrimPrefix(id, "state-")); got != before {
		t.Fatalf("rollback not byte-identical:\n%s\nwant\n%s", got, before)
	}
	if msg := gitOut(t, s, "log", "-1", "--format=%B"); !strings.Contains(msg, "Operation: rollback") || !strings.Contains(msg, "Checkpoint: ckpt-") {
		t.Fatalf("rollback commit:\n%s", msg)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")

	export := mustCLI(t, s, "", "state", "export")
	var doc map[string]any
	if err := json.Unmarshal([]byte(export), &doc); err != nil || doc["state_id"] != id {
		t.Fatalf("export: %v", err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(path, []byte(export), 0o644)
	other := newStore(t)
	mustCLI(t, other, "", "state", "import", path)
	if got := mustCLI(t, other, "", "var", "get", "limit_value", "--state", id); got != "5\n" {
		t.Fatalf("imported value = %q", got)
	}
	gitOut(t, other, "fsck", "--strict", "--no-dangling")
	if !strings.Contains(gitOut(t, other, "tag", "-l"), "checkpoints/"+id+"/before_final") {
		t.Fatal("import lost the checkpoint")
	}

	mustCLI(t, s, "", "rollback", "initial_state", "--hard", "--yes")
	if n := strings.Count(gitOut(t, s, "rev-list", "main"), "\n"); n != 2 {
		t.Fatalf("--hard left %d commits", n)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

// Two processes set Final at once: one completes the state, the other is
// refused, and the completion handler runs exactly once.
func TestRLMFinalRaceRunsHandlerOnce(t *testing.T) {
	for round := 0; round < 3; round++ {
		s := newStore(t)
		id := newState(t, s)
		done := filepath.Join(t.TempDir(), "completed.log")
		mustCLI(t, s, "", "state", "on-complete", fmt.Sprintf(`echo "$AIWG_STATE_ID $(cat)" >> %s`, done))
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				cmd := exec.Command(bin, "final", fmt.Sprintf("answer-%d", i), "--state", id, "--store", s, "--no-sync")
				cmd.Run()
				codes[i] = cmd.ProcessState.ExitCode()
			}(i)
		}
		wg.Wait()
		if !(codes[0] == 0 && codes[1] == exitDomain || codes[0] == exitDomain && codes[1] == 0) {
			t.Fatalf("round %d: exit codes %v, want one 0 and one %d", round, codes, exitDomain)
		}
		data, _ := os.ReadFile(done)
		if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], id+" ") {
			t.Fatalf("round %d: handler ran %d times: %q", round, len(lines), data)
		}
		if n := strings.Count(gitOut(t, s, "log", "--format=%H", "--", "states/"+id+"/variables/Final.json"), "\n"); n != 2 {
			t.Fatalf("round %d: Final changed in %d commits, want init + one", round, n)
		}
		gitOut(t, s, "fsck", "--strict", "--no-dangling")
	}
}

// TestStateInitExecutionConfig: the RLM state's execution settings, "for
// reproducibility", are set at init and exported; out-of-range ones are
// refused before anything is written.
func TestStateInitExecutionConfig(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "state", "init", "--prompt", "p", "--model", "m1", "--temperature", "0", "--seed", "7", "--execution-mode", "seeded", "--context-window", "8000")
	var doc struct {
		Metadata struct {
			ExecutionConfig map[string]any `json:"execution_config"`
		}
	}
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "state", "export")), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "m1", "temperature": 0.0, "seed": 7.0, "execution_mode": "seeded", "context_window_tokens": 8000.0}
	if fmt.Sprint(doc.Metadata.ExecutionConfig) != fmt.Sprint(want) {
		t.Errorf("execution_config %v, want %v", doc.Metadata.ExecutionConfig, want)
	}
	head := gitOut(t, s, "rev-parse", "main")
	for _, bad := range [][]string{{"--temperature", "2.5"}, {"--execution-mode", "fast"}, {"--context-window", "10"}} {
		if _, errOut, code := runCLI(t, s, "", append([]string{"state", "init", "--prompt", "q"}, bad...)...); code != exitUsage || !strings.Contains(errOut, "execution_config.") {
			t.Errorf("state init %v: exit %d %s", bad, code, errOut)
		}
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Error("a refused init wrote")
	}
}

// TestStateEnd: state end records the status, and later writes to the
// state's variables exit 3.
func TestStateEnd(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "state", "init", "--prompt", "p")
	if _, errOut, code := runCLI(t, s, "", "state", "end", "--status", "finished"); code != exitUsage {
		t.Errorf("a bad status: exit %d %q", code, errOut)
	}
	out := mustCLI(t, s, "", "state", "end", "--status", "error", "--reason", "tool timed out", "--json")
	if !strings.Contains(out, `"completion_status":"error"`) {
		t.Errorf("end --json: %s", out)
	}
	if got := mustCLI(t, s, "", "state", "status"); !strings.HasSuffix(got, " error\n") {
		t.Errorf("status: %q", got)
	}
	if _, errOut, code := runCLI(t, s, "", "var", "set", "risk_count", "1"); code != exitDomain || !strings.Contains(errOut, "ended (error") {
		t.Errorf("a write after the end: exit %d %q", code, errOut)
	}
}
