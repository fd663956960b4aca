package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/gitserver"
)

// sharedPolicy lets workers write their own sessions and shared/, where
// they can clash, and the coordinator everything (the conflict records
// under swarm/ included).
const sharedPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]},
    {"name": "shared", "roles": ["workers"], "paths": ["shared/**"]}
  ]
}`

func doctor(t *testing.T, server string) (map[string]any, int) {
	t.Helper()
	out, errOut, code := cliIn(t, "doctor", "--server", server, "--json")
	var h map[string]any
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("doctor: %v\n%s%s", err, out, errOut)
	}
	return h, code
}

// The swarm's loop through a server with the hook installed: narrow
// syncs, an incremental integrate, a conflict recorded, shown and settled,
// pushes kept as packs, and doctor's account of the server.
func TestSwarmLoopOverHookedServer(t *testing.T) {
	for name, serve := range map[string]func(testing.TB, string) string{"daemon": gitserver.Daemon, "http": gitserver.HTTP} {
		t.Run(name, func(t *testing.T) { swarmLoop(t, serve) })
	}
}

func swarmLoop(t *testing.T, serve func(testing.TB, string) string) {
	server, url, coordinator := team(t, serve)
	mustCLI(t, coordinator, sharedPolicy, "policy", "set", "-", "--agent", "conductor")
	mustCLI(t, coordinator, "", "push")
	if got := strings.TrimSpace(gitOut(t, server, "config", "receive.unpackLimit")); got != "1" {
		t.Fatalf("receive.unpackLimit = %q", got)
	}
	stores := map[string]string{}
	for _, a := range []string{"pulse", "heartbeat"} {
		dir := filepath.Join(t.TempDir(), a+".git")
		if _, errOut, code := cliIn(t, "clone", url, dir); code != 0 {
			t.Fatalf("clone: %s", errOut)
		}
		stores[a] = dir
		mustCLI(t, dir, "", "agent", "start", a)
		mustCLI(t, dir, "", "set", "agents/"+a+"/s.json", "n", "1", "--agent", a)
		mustCLI(t, dir, "", "set", "shared/plan.json", "owner", `"`+a+`"`, "--agent", a)
		mustCLI(t, dir, "", "sync", "--agent", a)
	}
	// Each agent fetched main and its own branch, nobody else's.
	if refs := gitOut(t, stores["pulse"], "for-each-ref", "--format=%(refname)", "refs/remotes/"); strings.Contains(refs, "heartbeat") {
		t.Fatalf("pulse fetched heartbeat's branch:\n%s", refs)
	}
	out, _, code := runCLI(t, coordinator, "", "integrate", "--agent", "conductor")
	if code != 4 || !strings.Contains(out, "left out (recorded in swarm/conflicts/") {
		t.Fatalf("integrate: exit %d\n%s", code, out)
	}
	loser := "heartbeat"
	if strings.Contains(out, "pulse\tagents/pulse/main: 1 conflict") {
		loser = "pulse"
	}
	out, _, code = runCLI(t, stores[loser], "", "sync", "--agent", loser)
	if code != 4 || !strings.Contains(out, "not integrated into main: agents/"+loser+"/main") || !strings.Contains(out, "shared/plan.json owner") {
		t.Fatalf("sync over the record: exit %d\n%s", code, out)
	}
	out = mustCLI(t, stores[loser], "", "sync", "--agent", loser, "--resolve", "theirs")
	if !strings.Contains(out, "resolved 1 conflict(s) with theirs") {
		t.Fatalf("sync --resolve theirs:\n%s", out)
	}
	out = mustCLI(t, coordinator, "", "integrate", "--agent", "conductor")
	if !strings.Contains(out, loser+"\tagents/"+loser+"/main: merged") {
		t.Fatalf("integrate after the resolution:\n%s", out)
	}
	if out := mustCLI(t, coordinator, "", "integrate", "--agent", "conductor"); !strings.Contains(out, "nothing moved (2 branch(es)") {
		t.Fatalf("a quiet pass:\n%s", out)
	}
	if _, _, code := runCLI(t, coordinator, "", "get", "swarm/conflicts/"+loser+"/main.json", "--branch", "origin/main"); code == 0 {
		t.Fatal("the record outlived the resolution")
	}
	h, code := doctor(t, server)
	hook := h["hook"].(map[string]any)
	pol := h["policy"].(map[string]any)
	if code != 0 || hook["installed"] != true || pol["valid"] != true || h["loose_objects"].(float64) != 0 || h["agent_branches"].(float64) != 2 {
		t.Fatalf("doctor: exit %d: %v", code, h)
	}
	gitOut(t, server, "fsck", "--strict", "--no-dangling")
	for _, s := range stores {
		gitOut(t, s, "fsck", "--strict", "--no-dangling")
	}
}

// doctor names what a bare repository without the hook lacks.
func TestDoctorOnAnUnhookedServer(t *testing.T) {
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	h, code := doctor(t, server)
	if code != 3 || len(h["problems"].([]any)) == 0 || !strings.Contains(h["problems"].([]any)[0].(string), "no aiwg-state pre-receive hook") {
		t.Fatalf("doctor: exit %d: %v", code, h)
	}
	if _, _, code := cliIn(t, "doctor", "--server", t.TempDir()); code != 3 {
		t.Fatalf("doctor on no repository: exit %d", code)
	}
}

// integrate --watch merges a branch as soon as it moves, until
// interrupted.
func TestIntegrateWatch(t *testing.T) {
	_, url, coordinator := team(t, gitserver.Daemon)
	cmd := exec.Command(bin, "integrate", "--watch", "--interval", "100ms", "--agent", "conductor", "--store", coordinator, "--no-sync")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pulse.git")
	if _, errOut, code := cliIn(t, "clone", url, dir); code != 0 {
		t.Fatalf("clone: %s", errOut)
	}
	mustCLI(t, dir, "", "agent", "start", "pulse")
	mustCLI(t, dir, "", "set", "agents/pulse/s.json", "n", "1", "--agent", "pulse")
	mustCLI(t, dir, "", "sync", "--agent", "pulse")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, _, code := runCLI(t, dir, "", "fetch", "origin", "main"); code != 0 {
			t.Fatal("fetch")
		}
		if _, _, code := runCLI(t, dir, "", "get", "agents/pulse/s.json", "--branch", "origin/main"); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the watch never integrated pulse:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the watch ended with %v:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "pulse\tagents/pulse/main: merged") && !strings.Contains(out.String(), "pulse\tagents/pulse/main: fast-forward") {
		t.Fatalf("watch output:\n%s", out.String())
	}
}
