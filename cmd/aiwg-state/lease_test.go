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

// TestLeaseCommands: the lease group end to end, with its exit codes.
func TestLeaseCommands(t *testing.T) {
	s := newStore(t)
	out := mustCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--ttl", "1m", "--agent", "pulse", "--json")
	var res struct {
		Lease    struct{ ID, Holder, Type string }
		Mutation struct{ Commit string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Lease.Holder != "pulse" || res.Lease.Type != "exclusive" || res.Mutation.Commit == "" {
		t.Fatalf("acquire --json: %s (%v)", out, err)
	}
	_, errOut, code := runCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--agent", "beat")
	if code != exitLock || !strings.Contains(errOut, "pulse holds tasks/t-17 (exclusive) until") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("acquire of a held lease: exit %d, %q", code, errOut)
	}
	// Asking again without naming the lease is refused: two processes of
	// one agent are excluded like two agents.
	if _, errOut, code := runCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--agent", "pulse"); code != exitLock || !strings.Contains(errOut, "you (pulse) hold tasks/t-17 already, as "+res.Lease.ID) {
		t.Errorf("a second acquire by the holder: exit %d, %q", code, errOut)
	}
	if got := mustCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--shared", "--id", res.Lease.ID, "--agent", "pulse"); !strings.HasPrefix(got, "downgraded tasks/t-17 "+res.Lease.ID) {
		t.Errorf("a downgrade: %q", got)
	}
	if got := gitOut(t, s, "log", "-1", "--format=%(trailers:key=Lease,valueonly)"); strings.TrimSpace(got) != "downgrade" {
		t.Errorf("the downgrade's Lease trailer: %q", got)
	}
	// With --json the refusal says who holds it, for an agent to act on.
	_, errOut, _ = runCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--agent", "beat", "--json")
	var refusal struct {
		Code    int
		Details map[string]string
	}
	if err := json.Unmarshal([]byte(errOut), &refusal); err != nil || refusal.Code != exitLock || refusal.Details["holder"] != "pulse" || refusal.Details["lease"] != res.Lease.ID || refusal.Details["until"] == "" {
		t.Errorf("a held lease's --json error: %s (%v)", errOut, err)
	}
	mustCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--shared", "--agent", "beat")
	ls := mustCLI(t, s, "", "lease", "ls", "tasks")
	if strings.Count(ls, "shared") != 2 || !strings.Contains(ls, "pulse") || !strings.Contains(ls, "beat") {
		t.Errorf("lease ls:\n%s", ls)
	}
	if _, errOut, code := runCLI(t, s, "", "lease", "release", "tasks/t-17", "--id", res.Lease.ID, "--agent", "beat"); code != exitDomain || !strings.Contains(errOut, "is not beat's") {
		t.Errorf("release of another's lease: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--priority", "urgent"); code != exitUsage {
		t.Errorf("a bad priority: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, s, "", "lease", "acquire", "../up"); code != exitUsage {
		t.Errorf("a resource outside leases/: exit %d, %q", code, errOut)
	}
	// A waiter that gave up is gone from the queue; a forced release
	// clears holders and waiters.
	if _, errOut, code := runCLI(t, s, "", "lease", "acquire", "tasks/t-17", "--agent", "writer", "--wait", "50ms"); code != exitLock || !strings.Contains(errOut, "holds tasks/t-17") {
		t.Errorf("a wait that runs out: exit %d, %q", code, errOut)
	}
	if ls := mustCLI(t, s, "", "lease", "ls"); strings.Contains(ls, "waiting") {
		t.Errorf("a waiter that gave up is still queued:\n%s", ls)
	}
	mustCLI(t, s, "", "lease", "release", "tasks/t-17", "--force", "--reason", "rebalance", "--agent", "conductor")
	if got := mustCLI(t, s, "", "lease", "ls"); got != "" {
		t.Errorf("after a forced release of all: %q", got)
	}
	if got := gitOut(t, s, "log", "-1", "--format=%an|%s|%(trailers:key=Reason,valueonly)"); strings.TrimSpace(got) != "conductor|lease force-release tasks/t-17|rebalance" {
		t.Errorf("the forced release's commit: %q", got)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

// TestLeaseExcludesProcesses: processes that each take the lease (queued
// with --wait), work, and release it never overlap: every "in" line the
// shell writes is followed by its own "out".
func TestLeaseExcludesProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newStore(t)
	logPath := filepath.Join(t.TempDir(), "log")
	const procs = 4
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			script := fmt.Sprintf(`set -e
"$BIN" lease acquire res --wait 2m --ttl 1m --agent a%[1]d --store "$STORE" --no-sync >/dev/null
echo "in a%[1]d" >> "$LOG"
sleep 0.05
echo "out a%[1]d" >> "$LOG"
"$BIN" lease release res --agent a%[1]d --store "$STORE" --no-sync >/dev/null`, p)
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = append(os.Environ(), "BIN="+bin, "STORE="+s, "LOG="+logPath)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", p, err, out)
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2*procs {
		t.Fatalf("log:\n%s", data)
	}
	for i := 0; i < len(lines); i += 2 {
		in, out := lines[i], lines[i+1]
		if !strings.HasPrefix(in, "in ") || out != "out "+strings.TrimPrefix(in, "in ") {
			t.Fatalf("two processes held the lease at once:\n%s", data)
		}
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}
