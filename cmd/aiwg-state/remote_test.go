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

	"github.com/aiwg/aiwg-state/internal/gitserver"
)

const teamPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat", "dream_weaver"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`

// binRun runs the built binary in its own process.
func binRun(store string, args ...string) (string, int) {
	cmd := exec.Command(bin, append(args, "--store", store, "--no-sync")...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return string(out), code
}

func plainGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=plain", "-c", "user.email=plain@example.invalid"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// team sets up a server with the hook installed and a coordinator store
// whose main (with the team policy) is pushed to it.
func team(t *testing.T, serve func(testing.TB, string) string) (server, url, coordinator string) {
	root := t.TempDir()
	server = gitserver.Bare(t, root, "state.git")
	url = serve(t, root) + "state.git"
	if _, errOut, code := cliIn(t, "hooks", "install", "--server", server, "--binary", bin); code != 0 {
		t.Fatalf("hooks install: %s", errOut)
	}
	coordinator = newStore(t)
	mustCLI(t, coordinator, teamPolicy, "policy", "set", "-", "--agent", "conductor")
	mustCLI(t, coordinator, "", "remote", "add", "origin", url)
	mustCLI(t, coordinator, "", "push")
	gitOut(t, server, "symbolic-ref", "HEAD", "refs/heads/main")
	return server, url, coordinator
}

func TestAgentsPushConcurrentlyAndCoordinatorIntegrates(t *testing.T) {
	server, url, coordinator := team(t, gitserver.Daemon)
	agents := []string{"pulse", "heartbeat", "dream_weaver"}
	stores := map[string]string{}
	for _, a := range agents {
		dir := filepath.Join(t.TempDir(), a+".git")
		if _, errOut, code := cliIn(t, "clone", url, dir); code != 0 {
			t.Fatalf("clone: %s", errOut)
		}
		stores[a] = dir
	}
	// Each agent is its own process: start, write twice, sync; all at once.
	var wg sync.WaitGroup
	errs := make(chan error, len(agents))
	for _, a := range agents {
		wg.Add(1)
		go func(a string) {
			defer wg.Done()
			steps := [][]string{
				{"agent", "start", a},
				{"set", "agents/" + a + "/session.json", "status", `"running"`, "--agent", a},
				{"set", "agents/" + a + "/session.json", "steps", "3", "--agent", a},
				{"sync", "--agent", a},
			}
			for _, step := range steps {
				if out, code := binRun(stores[a], step...); code != 0 {
					errs <- fmt.Errorf("%s: %s: exit %d: %s", a, strings.Join(step, " "), code, out)
					return
				}
			}
		}(a)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out := mustCLI(t, coordinator, "", "integrate", "--agent", "conductor", "--json")
	var res struct {
		Agents []struct{ Agent, Status string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Agents) != len(agents) {
		t.Fatalf("integrate: %v\n%s", err, out)
	}
	for _, a := range res.Agents {
		if a.Status != "merged" && a.Status != "fast-forward" {
			t.Fatalf("agent %s: %s", a.Agent, a.Status)
		}
	}
	// Plain git reads the result.
	clone := filepath.Join(t.TempDir(), "plain")
	if out, err := exec.Command("git", "clone", "-q", url, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	log := plainGit(t, clone, "log", "--format=%an %s", "main")
	for _, a := range agents {
		if !strings.Contains(log, a+" create agents/"+a+"/session.json#steps") {
			t.Errorf("git log misses %s's write:\n%s", a, log)
		}
		data, err := os.ReadFile(filepath.Join(clone, "agents", a, "session.json"))
		if err != nil || !strings.Contains(string(data), `"steps": 3`) {
			t.Errorf("%s's session in the clone: %q, %v", a, data, err)
		}
	}
	gitOut(t, server, "fsck", "--strict", "--no-dangling")
	gitOut(t, coordinator, "fsck", "--strict", "--no-dangling")
}

func TestPolicyBreakingPushRefusedByServer(t *testing.T) {
	for name, serve := range map[string]func(testing.TB, string) string{"daemon": gitserver.Daemon, "http": gitserver.HTTP} {
		t.Run(name, func(t *testing.T) {
			server, url, _ := team(t, serve)
			agent := filepath.Join(t.TempDir(), "pulse.git")
			if _, errOut, code := cliIn(t, "clone", url, agent); code != 0 {
				t.Fatalf("clone: %s", errOut)
			}
			mustCLI(t, agent, "", "agent", "start", "pulse")
			// The in-process check refuses the write first ...
			if _, errOut, code := runCLI(t, agent, "", "set", "global/config.json", "mode", `"fast"`, "--agent", "pulse"); code != exitDomain || !strings.Contains(errOut, "may not write global/config.json") {
				t.Fatalf("in-process policy: exit %d: %s", code, errOut)
			}
			// ... so the agent goes around it with plain git in a clone,
			// and the server's hook refuses.
			work := cloneWithSneakyConfig(t, url)
			commit := strings.TrimSpace(plainGit(t, work, "rev-parse", "HEAD"))
			before := gitOut(t, server, "show-ref")
			// Fetch it into the agent's store and push it from there.
			mustCLI(t, agent, "", "remote", "add", "sneaky", work)
			mustCLI(t, agent, "", "fetch", "sneaky")
			gitOut(t, agent, "update-ref", "refs/heads/agents/pulse/main", commit)
			_, errOut, code := runCLI(t, agent, "", "push")
			if code != exitDomain {
				t.Fatalf("push of a policy-breaking commit: exit %d: %s", code, errOut)
			}
			for _, want := range []string{commit[:12], "global/config.json", "rule policy", `agent "pulse"`, "; the server said: refused: "} {
				if !strings.Contains(errOut, want) {
					t.Errorf("refusal does not name %q: %s", want, errOut)
				}
			}
			if n := strings.Count(errOut, "aiwg-state: "); n != 1 {
				t.Errorf("the refusal repeats its prefix %d times: %s", n, errOut)
			}
			if after := gitOut(t, server, "show-ref"); after != before {
				t.Fatalf("server refs changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

func TestPlainGitPushAndCloneAreUsable(t *testing.T) {
	root := t.TempDir()
	server := gitserver.Bare(t, root, "state.git")
	url := gitserver.HTTP(t, root) + "state.git"
	// A store made by aiwg-state, pushed by plain git.
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk.level", `"low"`, "--agent", "planner")
	mustCLI(t, s, "", "set", "plan.json", "owner", `"ops"`, "--agent", "planner")
	gitOut(t, s, "push", "-q", url, "main")
	gitOut(t, server, "symbolic-ref", "HEAD", "refs/heads/main")
	// Cloned by plain git: the files are there as written.
	work := filepath.Join(t.TempDir(), "w")
	if out, err := exec.Command("git", "clone", "-q", url, work).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(filepath.Join(work, "plan.json")); !strings.Contains(string(data), `"level": "low"`) {
		t.Fatalf("plan.json in the plain clone: %q", data)
	}
	// A bare plain-git clone is a store aiwg-state uses as is.
	bare := filepath.Join(t.TempDir(), "bare.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", url, bare).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	if got := mustCLI(t, bare, "", "get", "plan.json", "risk.level"); got != "\"low\"\n" {
		t.Fatalf("get in a plain clone = %q", got)
	}
	mustCLI(t, bare, "", "set", "plan.json", "risk.level", `"high"`, "--agent", "reviewer")
	gitOut(t, bare, "push", "-q", "origin", "main")
	// aiwg-state clone of what plain git pushed, then its log and a push.
	c := filepath.Join(t.TempDir(), "c.git")
	if _, errOut, code := cliIn(t, "clone", url, c); code != 0 {
		t.Fatalf("clone: %s", errOut)
	}
	if got := mustCLI(t, c, "", "get", "plan.json", "risk.level"); got != "\"high\"\n" {
		t.Fatalf("get after clone = %q", got)
	}
	if log := mustCLI(t, c, "", "log"); !strings.Contains(log, "reviewer") || !strings.Contains(log, "planner") {
		t.Fatalf("log after clone:\n%s", log)
	}
	mustCLI(t, c, "", "set", "plan.json", "owner", `"sre"`, "--agent", "planner")
	mustCLI(t, c, "", "push")
	if got := plainGit(t, work, "pull", "-q"); got != "" {
		t.Logf("%s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(work, "plan.json")); !strings.Contains(string(data), `"owner": "sre"`) {
		t.Fatalf("plan.json after plain pull: %q", data)
	}
	gitOut(t, server, "fsck", "--strict", "--no-dangling")
}

func TestTwoWritersSameBranchOneWinsOtherRecovers(t *testing.T) {
	root := t.TempDir()
	server := gitserver.Bare(t, root, "state.git")
	url := gitserver.Daemon(t, root) + "state.git"
	origin := newStore(t)
	mustCLI(t, origin, "", "remote", "add", "origin", url)
	mustCLI(t, origin, "", "push")
	gitOut(t, server, "symbolic-ref", "HEAD", "refs/heads/main")
	writers := []string{"w1", "w2"}
	stores := map[string]string{}
	for _, w := range writers {
		dir := filepath.Join(t.TempDir(), w+".git")
		if _, errOut, code := cliIn(t, "clone", url, dir); code != 0 {
			t.Fatalf("clone: %s", errOut)
		}
		mustCLI(t, dir, "", "set", "shared.json", "by_"+w, `true`, "--agent", w)
		stores[w] = dir
	}
	// Both push main at once, each from its own process.
	codes := map[string]int{}
	outs := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range writers {
		wg.Add(1)
		go func(w string) {
			defer wg.Done()
			out, code := binRun(stores[w], "push")
			mu.Lock()
			codes[w], outs[w] = code, out
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	winners, loser := 0, ""
	for _, w := range writers {
		switch codes[w] {
		case 0:
			winners++
		case exitStale:
			loser = w
			if !strings.Contains(outs[w], "pull, then push again") {
				t.Errorf("the refusal does not say what to do: %s", outs[w])
			}
		default:
			t.Fatalf("%s: push exit %d: %s", w, codes[w], outs[w])
		}
	}
	if winners != 1 || loser == "" {
		t.Fatalf("winners %d, exit codes %v: %v", winners, codes, outs)
	}
	mustCLI(t, stores[loser], "", "pull", "--agent", loser)
	mustCLI(t, stores[loser], "", "push")
	// Nothing lost: the server's main has both writes.
	got := gitOut(t, server, "show", "main:shared.json")
	for _, w := range writers {
		if !strings.Contains(got, `"by_`+w+`": true`) {
			t.Errorf("server lost %s's write:\n%s", w, got)
		}
	}
	gitOut(t, server, "fsck", "--strict", "--no-dangling")
}

func TestPushRefusesBranchWithConflicts(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	gitserver.Bare(t, root, "state.git")
	mustCLI(t, s, "", "remote", "add", "origin", root+"/state.git")
	mustCLI(t, s, "", "set", "a.json", "x", `"base"`)
	mustCLI(t, s, "", "branch", "other")
	mustCLI(t, s, "", "set", "a.json", "x", `"ours"`)
	mustCLI(t, s, "", "set", "a.json", "x", `"theirs"`, "--branch", "other")
	if _, _, code := runCLI(t, s, "", "merge", "other", "--strategy", "conflict"); code != exitConflict {
		t.Fatalf("merge with a conflict: exit %d", code)
	}
	_, errOut, code := runCLI(t, s, "", "push")
	if code != exitConflict || !strings.Contains(errOut, "merge in progress") {
		t.Fatalf("push with conflicts: exit %d: %s", code, errOut)
	}
	if out := gitOut(t, root+"/state.git", "for-each-ref"); out != "" {
		t.Fatalf("server got refs: %s", out)
	}
}

func TestRemoteCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "remote", "add", "origin", "https://agent:tok3n@git.example.invalid/s.git")
	out := mustCLI(t, s, "", "remote", "ls")
	if strings.Contains(out, "tok3n") || !strings.Contains(out, "origin\thttps://xxxxx@git.example.invalid/s.git") {
		t.Fatalf("remote ls = %q", out)
	}
	if _, _, code := runCLI(t, s, "", "remote", "add", "bad name", "/x"); code != exitUsage {
		t.Fatalf("bad remote name: exit %d", code)
	}
	if _, _, code := runCLI(t, s, "", "fetch", "nowhere"); code != exitDomain {
		t.Fatalf("fetch from an unknown remote: exit %d", code)
	}
	mustCLI(t, s, "", "remote", "rm", "origin")
	if out := mustCLI(t, s, "", "remote", "ls", "--json"); out != "[]\n" {
		t.Fatalf("remote ls after rm = %q", out)
	}
	if out := mustCLI(t, s, "", "agent", "start", "planner", "--json"); !strings.Contains(out, `"agents/planner/main"`) {
		t.Fatalf("agent start = %q", out)
	}
	if _, _, code := runCLI(t, s, "", "agent", "start", "../x"); code != exitUsage {
		t.Fatalf("agent start ../x: exit %d", code)
	}
	mustCLI(t, s, "", "set", "agents/planner/a.json", "x", "1", "--agent", "planner")
	if got := gitOut(t, s, "log", "-1", "--format=%s", "agents/planner/main"); !strings.Contains(got, "agents/planner/a.json#x") {
		t.Fatalf("write after agent start went to: %q", got)
	}
}
