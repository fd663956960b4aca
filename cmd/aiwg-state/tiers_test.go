package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrameCommands: the frame group end to end: a run's values, its
// cap, its owner, its end, and a promotion as one commit.
func TestFrameCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "frame", "set", "sum", "5", "--run", "r1", "--agent", "a")
	mustCLI(t, s, "", "frame", "set", "note", "first try", "--string", "--run", "r1", "--agent", "a")
	if got := mustCLI(t, s, "", "frame", "get", "note", "--run", "r1", "--agent", "a"); got != "\"first try\"\n" {
		t.Errorf("get: %q", got)
	}
	var ls struct {
		Run   string
		Agent string
		Bytes int
		Keys  []struct{ Key string }
	}
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "frame", "ls", "--run", "r1", "--agent", "a", "--json")), &ls); err != nil || ls.Run != "r1" || ls.Agent != "a" || len(ls.Keys) != 2 || ls.Bytes != len("sum")+1+len("note")+len(`"first try"`) {
		t.Errorf("ls: %+v %v", ls, err)
	}
	mustCLI(t, s, "", "config", "limits.max_frame_bytes", "40", "--agent", "admin")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"frame", "get", "sum"}, exitUsage, "name the run"},
		{[]string{"frame", "set", "k", "{bad", "--run", "r1", "--agent", "a"}, exitUsage, ""},
		{[]string{"frame", "set", "big", `"` + strings.Repeat("x", 30) + `"`, "--run", "r1", "--agent", "a"}, exitDomain, "limits.max_frame_bytes"},
		{[]string{"frame", "get", "sum", "--run", "r1", "--agent", "b"}, exitDomain, `is agent "a"'s frame`},
		{[]string{"frame", "clear", "--run", "r1", "--agent", "b"}, exitDomain, "use a run id of your own"},
		{[]string{"frame", "get", "nope", "--run", "r1", "--agent", "a"}, exitDomain, "no frame key"},
		{[]string{"frame", "promote", "sum", "--run", "r1", "--agent", "a"}, exitUsage, "--to"},
	} {
		_, errOut, code := runCLI(t, s, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", tc.args, code, errOut, tc.code, tc.says)
		}
	}
	mustCLI(t, s, "", "frame", "promote", "sum", "--to", "plan.json#total", "--run", "r1", "--agent", "a")
	if got := gitOut(t, s, "log", "-1", "--format=%an%n%(trailers:key=Frame-Run,key=Frame-Key,key=Source)"); got != "a\nSource: frame\nFrame-Run: r1\nFrame-Key: sum\n\n" {
		t.Errorf("promote's commit:\n%q", got)
	}
	if got := gitOut(t, s, "show", "HEAD:plan.json"); !strings.Contains(got, `"total": 5`) {
		t.Errorf("plan.json: %s", got)
	}
	mustCLI(t, s, "", "frame", "clear", "--run", "r1", "--agent", "a")
	if _, _, code := runCLI(t, s, "", "frame", "get", "sum", "--run", "r1", "--agent", "a"); code != exitDomain {
		t.Errorf("after clear: exit %d", code)
	}

	// A trajectory's completion ends its run.
	id := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "bug_fixing", "--prompt", "p", "--agent", "a"))
	mustCLI(t, s, "", "frame", "set", "step", "1", "--run", id, "--agent", "a")
	mustCLI(t, s, "", "traj", "complete", id, "--status", "success", "--agent", "a")
	if _, errOut, code := runCLI(t, s, "", "frame", "get", "step", "--run", id, "--agent", "a"); code != exitDomain || !strings.Contains(errOut, "no frame for run") {
		t.Errorf("after the trajectory completed: exit %d %s", code, errOut)
	}
	// No frame write is history.
	if got := gitOut(t, s, "log", "--format=%s"); strings.Contains(got, "frame") && !strings.Contains(got, "plan.json") {
		t.Errorf("frame writes in the log:\n%s", got)
	}
	fsck(t, s)
}

func fsck(t *testing.T, store string) {
	t.Helper()
	if out := gitOut(t, store, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Fatal(out)
	}
}

// TestCacheCommands: the cache group end to end; nothing of it is in git.
func TestCacheCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "cache", "set", "monitors/last_run", `{"at": 1}`, "--ttl", "1h")
	mustCLI(t, s, "", "cache", "set", "greeting", "hi", "--string")
	if got := mustCLI(t, s, "", "cache", "get", "greeting"); got != "\"hi\"\n" {
		t.Errorf("get: %q", got)
	}
	if got := mustCLI(t, s, "", "cache", "ls"); !strings.Contains(got, "monitors/last_run\t") || !strings.Contains(got, "greeting\t") {
		t.Errorf("ls:\n%s", got)
	}
	mustCLI(t, s, "", "cache", "rm", "greeting")
	if _, errOut, code := runCLI(t, s, "", "cache", "get", "greeting"); code != exitDomain || !strings.Contains(errOut, "no cache entry") {
		t.Errorf("get after rm: exit %d %s", code, errOut)
	}
	if _, _, code := runCLI(t, s, "", "cache", "set", "", "1"); code != exitUsage {
		t.Errorf("empty key: exit %d", code)
	}
	mustCLI(t, s, "", "config", "limits.max_cache_bytes", "30", "--agent", "admin")
	if _, errOut, code := runCLI(t, s, "", "cache", "set", "big", `"`+strings.Repeat("x", 40)+`"`); code != exitDomain || !strings.Contains(errOut, "limits.max_cache_bytes") {
		t.Errorf("past the bound: exit %d %s", code, errOut)
	}
	var pr struct{ Entries int }
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "cache", "prune", "--json")), &pr); err != nil || pr.Entries != 1 {
		t.Errorf("prune: %+v %v", pr, err)
	}
	// Not history: no commit, no object, no ref holds it.
	if got := gitOut(t, s, "log", "--all", "--format=%s"); strings.Contains(got, "cache set") || strings.Contains(got, "monitors") {
		t.Errorf("cache writes in the log:\n%s", got)
	}
	if got := gitOut(t, s, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(got, "cache") {
		t.Errorf("the cache is in the tree: %s", got)
	}
	if _, err := os.Stat(filepath.Join(s, "aiwg", "cache")); err != nil {
		t.Errorf("the cache is not in the git directory: %v", err)
	}
	fsck(t, s)
}

const sandboxPolicyCLI = `{"default": "allow", "roles": {"workers": ["worker-*"]},
 "rules": [{"name": "settings", "agents": ["*"], "paths": [".aiwg/policy.json"], "effect": "deny"},
           {"name": "admin", "agents": ["admin"], "paths": ["**"]}],
 "profiles": {"scraper": {"documents": {"read": ["public/**"], "write": ["agents/{agent}/**"]},
                          "memory": ["session"], "cache": {"allowed": true, "max_bytes": 16}}},
 "sandbox": [{"agents": ["scraper-*"], "profile": "scraper"}, {"roles": ["workers"], "profile": "minimal"}]}`

// TestProfilesAtTheCommandLine: a profile's refusal is exit 3 naming the
// profile and the rule, with the hint; explain says what an agent may do.
func TestProfilesAtTheCommandLine(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, sandboxPolicyCLI, "policy", "set", "-", "--agent", "admin")
	mustCLI(t, s, "", "set", "agents/scraper-1/notes.json", "n", "1", "--agent", "scraper-1")
	mustCLI(t, s, "", "memory", "put", "session", "ctx", "c1", "1", "--agent", "scraper-1")
	mustCLI(t, s, "", "cache", "set", "k", "1", "--agent", "scraper-1")
	mustCLI(t, s, "", "frame", "set", "k", "1", "--run", "w", "--agent", "worker-1")
	head := gitOut(t, s, "rev-parse", "HEAD")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"set", "public/index.json", "n", "1", "--agent", "scraper-1"}, `sandbox profile "scraper", rule documents.write`},
		{[]string{"set", "agents/scraper-2/notes.json", "n", "1", "--agent", "scraper-1"}, "documents.write"},
		{[]string{"memory", "put", "long_term", "fact", "f", "1", "--agent", "scraper-1"}, "rule memory"},
		{[]string{"cache", "set", "k", `"` + strings.Repeat("x", 20) + `"`, "--agent", "scraper-1"}, "cache.max_bytes"},
		{[]string{"cache", "get", "k", "--agent", "worker-1"}, `sandbox profile "minimal", rule cache.allowed`},
		{[]string{"set", "agents/worker-1/x.json", "n", "1", "--agent", "worker-1"}, `"minimal", rule documents.write`},
		{[]string{"queue", "put", "jobs", "1", "--agent", "worker-1"}, "rule queues"},
	} {
		_, errOut, code := runCLI(t, s, "", tc.args...)
		if code != exitDomain || !strings.Contains(errOut, tc.says) || !strings.Contains(errOut, "policy explain") {
			t.Errorf("%v: exit %d, %q; want exit 3 saying %q and the hint", tc.args, code, errOut, tc.says)
		}
	}
	if now := gitOut(t, s, "rev-parse", "HEAD"); now != head {
		t.Error("a refused write moved the branch")
	}
	_, errOut, _ := runCLI(t, s, "", "set", "public/x.json", "n", "1", "--agent", "scraper-1", "--json")
	var je struct {
		Code    int
		Details map[string]string
	}
	if err := json.Unmarshal([]byte(errOut), &je); err != nil || je.Code != 3 || je.Details["profile"] != "scraper" || je.Details["rule"] != "documents.write" {
		t.Errorf("--json refusal: %s", errOut)
	}
	// Reads attributed to a sandboxed agent (AIWG_AGENT) meet its profile.
	mustCLI(t, s, "", "set", "public/a.json", "n", "1", "--agent", "admin")
	mustCLI(t, s, "", "set", "private/b.json", "n", "1", "--agent", "admin")
	mustCLI(t, s, "", "memory", "put", "long_term", "fact", "f", "1", "--agent", "admin")
	t.Run("reads", func(t *testing.T) {
		t.Setenv("AIWG_AGENT", "scraper-1")
		mustCLI(t, s, "", "get", "public/a.json")
		for _, args := range [][]string{
			{"get", "private/b.json"},
			{"cat", "private/b.json"},
			{"blame", "private/b.json"},
			{"memory", "get", "long_term", "fact", "f"},
			{"queue", "peek", "jobs"},
			{"log", "private/b.json"},
			{"diff", "HEAD~1", "HEAD", "private/b.json"},
			{"traj", "show", "traj-00000000"},
			{"event", "ls"},
			{"lease", "ls"},
		} {
			if _, errOut, code := runCLI(t, s, "", args...); code != exitDomain || !strings.Contains(errOut, `sandbox profile "scraper"`) {
				t.Errorf("%v: exit %d %s", args, code, errOut)
			}
		}
		if got := mustCLI(t, s, "", "show", "HEAD~1", "--json"); !strings.Contains(got, `"diff":[]`) {
			t.Errorf("show reveals a file the agent may not read: %s", got)
		}
		if got := mustCLI(t, s, "", "diff", "HEAD~2", "HEAD~1", "--json"); strings.Contains(got, "private") {
			t.Errorf("diff reveals a file the agent may not read: %s", got)
		}
		if got := mustCLI(t, s, "", "ls", "private"); got != "" {
			t.Errorf("ls private shows %q", got)
		}
		if got := mustCLI(t, s, "", "memory", "export"); strings.Contains(got, "long_term") || !strings.Contains(got, `"session"`) {
			t.Errorf("export shows what the agent may not read:\n%s", got)
		}
	})
	// Unattributed, a read is a person's with the store at hand.
	t.Setenv("AIWG_AGENT", "")
	mustCLI(t, s, "", "get", "private/b.json")

	got := mustCLI(t, s, "", "policy", "explain", "scraper-7")
	for _, want := range []string{"sandbox profile: scraper (declared, by sandbox entry 1)", "documents write: agents/{agent}/**", "memory:          session", "queues:          none", "cache:           yes, up to 16 bytes", "frame:           yes (within the store's limits.max_frame_bytes)"} {
		if !strings.Contains(got, want) {
			t.Errorf("explain lacks %q:\n%s", want, got)
		}
	}
	var ex struct {
		Roles   []string
		Profile struct {
			Name   string
			Preset bool
			Cache  struct{ Allowed bool }
		}
	}
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "policy", "explain", "worker-3", "--json")), &ex); err != nil || ex.Profile.Name != "minimal" || !ex.Profile.Preset || ex.Profile.Cache.Allowed || len(ex.Roles) != 1 {
		t.Errorf("explain --json: %+v %v", ex, err)
	}
	if got := mustCLI(t, s, "", "policy", "explain", "someone"); !strings.Contains(got, "sandbox profile: none") {
		t.Errorf("explain without a profile:\n%s", got)
	}
}

// TestMemoryExportMarkdown: --format markdown is a document for people.
func TestMemoryExportMarkdown(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "memory", "put", "long_term", "fact", "f1", `{"topic": "auth"}`, "--agent", "a")
	mustCLI(t, s, "", "memory", "put", "session", "note", "n1", "remember", "--string", "--agent", "a")
	got := mustCLI(t, s, "", "memory", "export", "--format", "markdown")
	for _, want := range []string{"# Memory\n", "## long\\_term\n", "### fact/f1\n", "\"topic\": \"auth\"", "## session\n", "```text\nremember\n```"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	if got := mustCLI(t, s, "", "memory", "export", "--format", "jsonl"); strings.Count(got, "\n") != 2 {
		t.Errorf("jsonl:\n%s", got)
	}
	if _, _, code := runCLI(t, s, "", "memory", "export", "--format", "xml"); code != exitUsage {
		t.Errorf("--format xml: exit %d", code)
	}
}

// TestServedFramesLiveInTheServer: through `serve`, a run's frame is held
// in the server's memory: never on disk, gone when the server stops.
func TestServedFramesLiveInTheServer(t *testing.T) {
	dir, store := project(t)
	work := filepath.Join(dir, "work", "sub")
	srv := startServer(t, bin, store)
	env := []string{"AIWG_AGENT=a", "AIWG_RUN=run-9", "AIWG_STATE_STORE="}
	if r := execIn(t, clientBin, work, "", env, "frame", "set", "k", `{"v": 1}`); r.code != 0 {
		t.Fatalf("served frame set: %+v", r)
	}
	if r := execIn(t, clientBin, work, "", env, "frame", "get", "k", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"value":{"v":1}`) {
		t.Fatalf("served frame get: %+v", r)
	}
	if !srv.said(t, "ran frame set k") {
		t.Errorf("the server did not run frame set: %s", srv.log.String())
	}
	if _, err := os.Stat(filepath.Join(store, "aiwg", "frames")); !os.IsNotExist(err) {
		t.Errorf("a served frame was written to disk: %v", err)
	}
	// Another agent cannot reach it through the server either.
	if r := execIn(t, clientBin, work, "", []string{"AIWG_AGENT=b", "AIWG_RUN=run-9", "AIWG_STATE_STORE="}, "frame", "get", "k"); r.code != exitDomain {
		t.Errorf("another agent read the run: %+v", r)
	}
	// The server's end is the end of the runs it held.
	if r := execIn(t, bin, work, "", nil, "serve", "--stop", "--store", store); r.code != 0 {
		t.Fatalf("serve --stop: %+v", r)
	}
	<-srv.done
	if r := execIn(t, clientBin, work, "", env, "frame", "get", "k"); r.code != exitDomain || !strings.Contains(r.stderr, "no frame for run") {
		t.Errorf("a frame outlived its server: %+v", r)
	}
	srv = startServer(t, bin, store)
	// The same profile rules through the server as without it.
	mustCLI(t, store, sandboxPolicyCLI, "policy", "set", "-", "--agent", "admin")
	if r := execIn(t, clientBin, work, "", []string{"AIWG_AGENT=worker-1", "AIWG_STATE_STORE="}, "cache", "set", "k", "1"); r.code != exitDomain || !strings.Contains(r.stderr, "cache.allowed") {
		t.Errorf("served cache set by a minimal agent: %+v", r)
	}
	if r := execIn(t, clientBin, work, "", []string{"AIWG_AGENT=scraper-1", "AIWG_STATE_STORE="}, "set", "public/a.json", "x", "1"); r.code != exitDomain || !strings.Contains(r.stderr, "documents.write") {
		t.Errorf("served write outside the profile: %+v", r)
	}
}
