package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/internal/gitserver"
)

// What a new user meets in the first commands: who writes, where the store
// goes, what the messages say.

func TestAgentStartMakesTheAgentTheAuthor(t *testing.T) {
	t.Setenv("AIWG_AGENT", "")
	t.Setenv("USER", "")
	s := newStore(t)
	author := func() string { return strings.TrimSpace(gitOut(t, s, "log", "-1", "--format=%an", "HEAD")) }

	// Nothing names an agent: the write says it is anonymous, once.
	anonymousNoted.Store(false)
	if _, errOut, code := runCLI(t, s, "", "set", "a.json", "x", "1"); code != 0 || !strings.Contains(errOut, `authored by "anonymous"`) || !strings.Contains(errOut, "agent start") {
		t.Fatalf("anonymous write: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, _ := runCLI(t, s, "", "set", "a.json", "x", "2"); errOut != "" {
		t.Fatalf("the second anonymous write of a process says it again: %q", errOut)
	}
	if got := author(); got != "anonymous" {
		t.Fatalf("author %q", got)
	}

	out := mustCLI(t, s, "", "agent", "start", "scout")
	if !strings.Contains(out, "agents/scout/main") || !strings.Contains(out, "authored by scout") {
		t.Fatalf("agent start says %q", out)
	}
	if got := strings.TrimSpace(gitOut(t, s, "config", "aiwg.agent")); got != "scout" {
		t.Fatalf("aiwg.agent = %q", got)
	}
	anonymousNoted.Store(false)
	if _, errOut, code := runCLI(t, s, "", "set", "a.json", "x", "3"); code != 0 || errOut != "" {
		t.Fatalf("write after agent start: exit %d, stderr %q", code, errOut)
	}
	if got := author(); got != "scout" {
		t.Fatalf("after agent start, a write is authored by %q", got)
	}
	var st map[string]string
	json.Unmarshal([]byte(mustCLI(t, s, "", "agent", "status", "--json")), &st)
	if st["agent"] != "scout" || st["from"] != "aiwg.agent" || st["branch"] != "agents/scout/main" {
		t.Fatalf("agent status: %v", st)
	}
	if out := mustCLI(t, s, "", "agent", "status"); !strings.Contains(out, "agent scout: the store's agent") {
		t.Fatalf("agent status: %q", out)
	}

	// --agent, then AIWG_AGENT, override the store's agent.
	mustCLI(t, s, "", "set", "a.json", "x", "4", "--agent", "named")
	if got := author(); got != "named" {
		t.Fatalf("--agent: authored by %q", got)
	}
	t.Setenv("AIWG_AGENT", "fromenv")
	mustCLI(t, s, "", "set", "a.json", "x", "5")
	if got := author(); got != "fromenv" {
		t.Fatalf("AIWG_AGENT: authored by %q", got)
	}
	json.Unmarshal([]byte(mustCLI(t, s, "", "agent", "status", "--json")), &st)
	if st["agent"] != "fromenv" || st["from"] != "AIWG_AGENT" || st["store_agent"] != "scout" {
		t.Fatalf("agent status under AIWG_AGENT: %v", st)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

func TestInitInsideAGitProjectKeepsTheStoreOut(t *testing.T) {
	project := t.TempDir()
	gitWork(t, project, nil, "init", "-q")
	os.WriteFile(filepath.Join(project, "main.go"), []byte("package main\n"), 0o644)
	store := filepath.Join(project, ".aiwg", "state.git")
	out, errOut, code := cliIn(t, "init", store, "--no-sync")
	if code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	ignore := filepath.Join(project, ".aiwg", ".gitignore")
	if !strings.Contains(out, ignore) {
		t.Fatalf("init does not say it ignores the store: %q", out)
	}
	if data, err := os.ReadFile(ignore); err != nil || !strings.HasSuffix(string(data), "\n*\n") {
		t.Fatalf("%s: %q, %v", ignore, data, err)
	}
	mustCLI(t, store, "", "set", "plan.json", "goal", `"ship"`, "--agent", "a")
	// The project's git add . takes the project's file, none of the store's.
	added := gitWork(t, project, nil, "add", "-A", "--dry-run")
	if strings.Contains(added, ".aiwg") || !strings.Contains(added, "main.go") {
		t.Fatalf("git add -A in the project would add:\n%s", added)
	}
	if st := gitWork(t, project, nil, "status", "--porcelain"); strings.Contains(st, ".aiwg") {
		t.Fatalf("git status shows the store:\n%s", st)
	}

	// A clone into another project is kept out of it too.
	other := t.TempDir()
	gitWork(t, other, nil, "init", "-q")
	if out, errOut, code := cliIn(t, "clone", store, filepath.Join(other, ".aiwg", "state.git"), "--no-sync"); code != 0 || !strings.Contains(out, ".gitignore") {
		t.Fatalf("clone into a project: exit %d %q %q", code, out, errOut)
	}
	if st := gitWork(t, other, nil, "status", "--porcelain"); st != "" {
		t.Fatalf("git status after a clone into the project:\n%s", st)
	}

	// Outside any work tree, nothing is written.
	alone := filepath.Join(t.TempDir(), ".aiwg", "state.git")
	if out, errOut, code := cliIn(t, "init", alone, "--no-sync"); code != 0 || strings.Contains(out, "gitignore") {
		t.Fatalf("init outside a project: exit %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(alone), ".gitignore")); err == nil {
		t.Fatal("an ignore file outside any git project")
	}
}

func TestMissingRemoteExitsThreeOverEveryTransport(t *testing.T) {
	root := t.TempDir()
	s := newStore(t)
	for name, url := range map[string]string{
		"git":  gitserver.Daemon(t, root) + "nosuch.git",
		"http": gitserver.HTTP(t, root) + "nosuch.git",
		"path": filepath.Join(root, "nosuch.git"),
	} {
		if _, errOut, code := cliIn(t, "clone", url, filepath.Join(t.TempDir(), "c.git"), "--no-sync"); code != exitDomain {
			t.Errorf("clone over %s: exit %d, want %d: %s", name, code, exitDomain, errOut)
		}
		mustCLI(t, s, "", "remote", "add", name, url)
		for _, cmd := range []string{"fetch", "push", "pull"} {
			if _, errOut, code := runCLI(t, s, "", cmd, name); code != exitDomain {
				t.Errorf("%s over %s: exit %d, want %d: %s", cmd, name, code, exitDomain, errOut)
			}
		}
	}
}

func TestAppendRecordsTheIndexWritten(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "notes", `["a", "b"]`, "--agent", "a")
	trailers := func() string {
		return gitOut(t, s, "log", "-1", "--format=%s%n%(trailers:key=Path,valueonly)")
	}
	mustCLI(t, s, "", "set", "plan.json", "notes.-", `"c"`, "--agent", "a")
	if got := trailers(); got != "create plan.json#notes.2\nplan.json#notes.2\n\n" {
		t.Fatalf("append: subject and Path trailer:\n%s", got)
	}
	// In one batch each append sees the one before; a missing array
	// starts at 0.
	mustCLI(t, s, `{"op":"set","file":"plan.json","path":"notes.-","value":"d"}
{"op":"set","file":"plan.json","path":"notes.-","value":"e"}
{"op":"set","file":"plan.json","path":"todo.-.tags.-","value":"x"}
`, "apply", "-", "--agent", "a")
	if got := trailers(); got != "apply 3 operations: create plan.json#notes.3, create plan.json#notes.4, create plan.json#todo.0.tags.0\nplan.json#notes.3\nplan.json#notes.4\nplan.json#todo.0.tags.0\n\n" {
		t.Fatalf("batch of appends: subject and Path trailers:\n%s", got)
	}
	if got := mustCLI(t, s, "", "get", "plan.json", "notes.4"); got != "\"e\"\n" {
		t.Fatalf("notes.4 = %q", got)
	}
	// log of the element finds the write that appended it.
	if out := mustCLI(t, s, "", "log", "plan.json#notes.2"); !strings.Contains(out, `"c"`) {
		t.Fatalf("log plan.json#notes.2:\n%s", out)
	}
}

func TestStrategySetThenPlainGitMerge(t *testing.T) {
	store := newStore(t)
	mustCLI(t, store, `{"op":"put","file":"counters/hits.json","value":{"n":1}}
{"op":"put","file":"plan.json","value":{"notes":["a"]}}
`, "apply", "-", "--agent", "seeder")
	head := func() string { return strings.TrimSpace(gitOut(t, store, "rev-parse", "main")) }

	before := head()
	for _, bad := range [][]string{
		{"strategy", "set", "counters/*.json", "summ"},
		{"strategy", "set", "counters/*.json", "sum", "--fallback", "nope"},
		{"strategy", "set", "counters/*.json", "merge-objects", "--keys", "n:add"},
		{"strategy", "set", "counters/*.json", "merge-objects", "--keys", "n"},
	} {
		if _, errOut, code := runCLI(t, store, "", append(bad, "--agent", "coord")...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", bad, code, exitUsage, errOut)
		}
	}
	if head() != before {
		t.Fatal("a refused strategy set moved the branch")
	}

	out := mustCLI(t, store, "", "strategy", "set", "counters/*.json", "sum", "--agent", "coord")
	if !strings.Contains(out, "strategy set counters/*.json sum") {
		t.Fatalf("strategy set says %q", out)
	}
	if got := gitOut(t, store, "show", "--format=", "--name-only", "main"); got != ".gitattributes\n" {
		t.Fatalf("strategy set committed %q", got)
	}
	// Set again: the line is replaced, not repeated.
	mustCLI(t, store, "", "strategy", "set", "counters/*.json", "sum", "--fallback", "max", "--agent", "coord")
	mustCLI(t, store, "", "strategy", "set", "counters/*.json", "sum", "--agent", "coord")
	if n := strings.Count(gitOut(t, store, "show", "main:.gitattributes"), "\ncounters/*.json "); n != 1 {
		t.Fatalf("%d lines for counters/*.json:\n%s", n, gitOut(t, store, "show", "main:.gitattributes"))
	}
	if ls := mustCLI(t, store, "", "strategy", "ls"); !strings.Contains(ls, "counters/*.json          sum\n") {
		t.Fatalf("strategy ls:\n%s", ls)
	}
	var e struct{ Strategy, FileStrategy string }
	json.Unmarshal([]byte(mustCLI(t, store, "", "strategy", "explain", "counters/hits.json#n", "--json")), &e)
	if e.Strategy != "sum" {
		t.Fatalf("strategy explain: %+v", e)
	}
	if out := mustCLI(t, store, "", "strategy", "explain", "plan.json#notes"); !strings.HasPrefix(out, "plan.json#notes: merge-objects (line ") || !strings.Contains(out, "only appended") {
		t.Fatalf("strategy explain plan.json#notes:\n%s", out)
	}

	// Two branches each increment the counter and append a note.
	mustCLI(t, store, "", "branch", "feat")
	mustCLI(t, store, "", "set", "counters/hits.json", "n", "2", "--agent", "main-agent")
	mustCLI(t, store, "", "set", "plan.json", "notes.-", `"b"`, "--agent", "main-agent")
	mustCLI(t, store, "", "set", "counters/hits.json", "n", "3", "--agent", "feat-agent", "--branch", "feat")
	mustCLI(t, store, "", "set", "plan.json", "notes.-", `"c"`, "--agent", "feat-agent", "--branch", "feat")

	// A plain git merge in a clone, through the drivers, uses the new
	// strategy (sum: 1 + 1 + 2) and the default for appends (both kept).
	work := filepath.Join(t.TempDir(), "work")
	gitWork(t, ".", nil, "clone", "-q", store, work)
	if _, errOut, code := cliIn(t, "install-drivers", "--repo", work, "--bin", bin); code != 0 {
		t.Fatalf("install-drivers: %s", errOut)
	}
	if got := gitWork(t, work, nil, "check-attr", "merge", "counters/hits.json"); got != "counters/hits.json: merge: aiwg-sum\n" {
		t.Fatalf("git check-attr: %q", got)
	}
	gitWork(t, work, nil, "merge", "-q", "--no-edit", "origin/feat")
	if got, _ := os.ReadFile(filepath.Join(work, "counters", "hits.json")); !strings.Contains(string(got), `"n": 4`) {
		t.Fatalf("git merge with the sum driver: %s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(work, "plan.json")); !strings.Contains(strings.Join(strings.Fields(string(got)), ""), `"notes":["a","b","c"]`) {
		t.Fatalf("git merge of two appends: %s", got)
	}
	// aiwg-state merge agrees byte for byte.
	mustCLI(t, store, "", "merge", "feat", "--agent", "coord")
	if g, a := strings.TrimSpace(gitWork(t, work, nil, "rev-parse", "HEAD^{tree}")), strings.TrimSpace(gitOut(t, store, "rev-parse", "main^{tree}")); g != a {
		t.Fatalf("git merge tree %s, aiwg-state merge tree %s", g, a)
	}
	gitWork(t, work, nil, "fsck", "--strict", "--no-dangling")
	gitOut(t, store, "fsck", "--strict", "--no-dangling")
}

func TestStateImportIntoTheSameStore(t *testing.T) {
	s := newStore(t)
	var st struct {
		StateID string `json:"state_id"`
	}
	json.Unmarshal([]byte(mustCLI(t, s, "", "state", "init", "--prompt", "p", "--json", "--agent", "a")), &st)
	mustCLI(t, s, "", "var", "set", "risk_count", "1", "--agent", "a")
	mustCLI(t, s, "", "var", "set", "--scope", "state", "draft_note", `"keep"`, "--agent", "a")
	exported := mustCLI(t, s, "", "state", "export", st.StateID)
	file := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(file, []byte(exported), 0o644)
	mustCLI(t, s, "", "var", "set", "risk_count", "2", "--agent", "a")
	mustCLI(t, s, "", "var", "set", "--scope", "state", "scratch_note", `"drop"`, "--agent", "a")
	commits := func() int { return strings.Count(gitOut(t, s, "rev-list", "main"), "\n") }

	before := commits()
	_, errOut, code := runCLI(t, s, "", "state", "import", file, "--agent", "a")
	if code != exitDomain || !strings.Contains(errOut, "--replace") || !strings.Contains(errOut, "--as state-") {
		t.Fatalf("import of a state the store holds: exit %d, %q", code, errOut)
	}
	if commits() != before {
		t.Fatal("a refused import wrote")
	}

	// --replace: one commit, and the state is what the file says.
	mustCLI(t, s, "", "state", "import", file, "--replace", "--agent", "a")
	if n := commits() - before; n != 1 {
		t.Fatalf("--replace wrote %d commits", n)
	}
	if got := mustCLI(t, s, "", "var", "get", "risk_count"); got != "1\n" {
		t.Fatalf("risk_count after --replace = %q", got)
	}
	if _, _, code := runCLI(t, s, "", "var", "get", "scratch_note"); code != exitDomain {
		t.Fatalf("a state variable the file lacks survived --replace (exit %d)", code)
	}
	if got := mustCLI(t, s, "", "var", "get", "draft_note"); got != "\"keep\"\n" {
		t.Fatalf("draft_note = %q", got)
	}
	if out := mustCLI(t, s, "", "state", "import", file, "--replace", "--agent", "a"); !strings.Contains(out, "no change") {
		t.Fatalf("a second --replace: %q", out)
	}

	// --as: a second state beside the first.
	mustCLI(t, s, "", "state", "import", file, "--as", "state-0000abcd", "--agent", "a")
	if ls := mustCLI(t, s, "", "state", "ls"); !strings.Contains(ls, "state-0000abcd") || !strings.Contains(ls, st.StateID) {
		t.Fatalf("state ls after --as:\n%s", ls)
	}
	for _, bad := range [][]string{{"--as", "nope"}, {"--as", "state-0000abce", "--replace"}} {
		if _, errOut, code := runCLI(t, s, "", append([]string{"state", "import", file, "--agent", "a"}, bad...)...); code != exitUsage {
			t.Errorf("import %v: exit %d %s", bad, code, errOut)
		}
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

func TestFirstHourMessages(t *testing.T) {
	s := newStore(t)
	says := func(wantCode int, want string, args ...string) {
		t.Helper()
		out, errOut, code := runCLI(t, s, "", args...)
		if code != wantCode || !strings.Contains(out+errOut, want) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s%s", args, code, wantCode, want, out, errOut)
		}
	}
	says(exitDomain, "branch nosuch does not exist (aiwg-state branch lists the branches; aiwg-state branch nosuch creates it)", "switch", "nosuch")
	says(exitDomain, "main has no merge in progress, so there is nothing to continue, abort or resolve", "merge", "--abort")
	says(exitDomain, "aiwg-state strategy set PATTERN STRATEGY changes them", "put", ".gitattributes", "{}", "--agent", "a")
	says(exitDomain, "main is the store's only branch", "branch", "-d", "main")
	mustCLI(t, s, "", "branch", "side")
	says(exitDomain, "switch to another first, then delete it: aiwg-state switch side && aiwg-state branch -d main", "branch", "-d", "main")
	missing := filepath.Join(t.TempDir(), "nonexistent")
	if _, errOut, code := cliIn(t, "get", "a.json", "x", "--store", missing); code != exitDomain ||
		!strings.Contains(errOut, "aiwg-state init --store "+missing) || strings.Contains(errOut, "run `aiwg-state init`") {
		t.Errorf("--store of a missing store: exit %d %q", code, errOut)
	}

	// memory put says its mutation id, as every write does.
	out := mustCLI(t, s, "", "memory", "put", "long_term", "fact", "sky", `"blue"`, "--agent", "a")
	if f := strings.Fields(out); len(f) < 2 || !strings.HasPrefix(f[1], "mut-") {
		t.Errorf("memory put says %q", out)
	}

	// log: the arrow diff uses, and names cut to the column.
	mustCLI(t, s, "", "set", "a.json", "x", "1", "--agent", "an-agent-with-a-very-long-name")
	mustCLI(t, s, "", "set", "a.json", "x", "2", "--agent", "b")
	log := mustCLI(t, s, "", "log", "a.json#x")
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "update a.json#x: 1 → 2") || !strings.Contains(lines[1], "an-agent-wi…  mut-") {
		t.Errorf("log:\n%s", log)
	}
	if i, j := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], "mut-")]), utf8.RuneCountInString(lines[1][:strings.Index(lines[1], "mut-")]); i != j {
		t.Errorf("log columns out of line:\n%s", log)
	}

	// doc reset asks for --yes, and writes nothing without it.
	mustCLI(t, s, "", "goal", "create", "ship it", "--agent", "a")
	before := gitOut(t, s, "rev-parse", "main")
	says(exitUsage, "add --yes to confirm", "doc", "reset", "--agent", "a")
	if gitOut(t, s, "rev-parse", "main") != before {
		t.Error("doc reset without --yes wrote")
	}
	mustCLI(t, s, "", "doc", "reset", "--yes", "--agent", "a")
}

func TestSyncReportsConflictsNotFiles(t *testing.T) {
	root := t.TempDir()
	server := gitserver.Bare(t, root, "state.git")
	coord := newStore(t)
	mustCLI(t, coord, "", "set", "plan.json", "goal", `"ship"`, "--agent", "coord")
	mustCLI(t, coord, "", "remote", "add", "origin", server)
	mustCLI(t, coord, "", "push")
	agent := filepath.Join(t.TempDir(), "agent.git")
	if _, errOut, code := cliIn(t, "clone", server, agent, "--no-sync"); code != 0 {
		t.Fatalf("clone: %s", errOut)
	}
	mustCLI(t, agent, "", "agent", "start", "scout")
	mustCLI(t, agent, "", "set", "plan.json", "goal", `"wait"`)
	mustCLI(t, coord, "", "set", "plan.json", "goal", `"hurry"`, "--agent", "coord")
	mustCLI(t, coord, "", "push")
	out, errOut, code := runCLI(t, agent, "", "sync")
	if code != exitConflict || !strings.Contains(out, "1 conflict(s) left") || strings.Contains(out, "0 file(s)") {
		t.Fatalf("sync with a conflict: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "merge-objects cannot settle it: both sides changed the string differently") {
		t.Fatalf("sync does not say why:\n%s", out)
	}
}

// TestStateImportReplaceKeepsTheGuards: a file is data anyone may have
// written; --replace changes a state as var set and var rm would, never a
// read-only variable.
func TestStateImportReplaceKeepsTheGuards(t *testing.T) {
	s := newStore(t)
	var st struct {
		StateID string `json:"state_id"`
	}
	json.Unmarshal([]byte(mustCLI(t, s, "", "state", "init", "--prompt", "p", "--json", "--agent", "a")), &st)
	mustCLI(t, s, "", "var", "set", "--scope", "state", "--read-only", "policy_text", `"fixed"`, "--agent", "a")
	mustCLI(t, s, "", "var", "set", "--scope", "state", "risk_count", "1", "--agent", "a")
	exported := mustCLI(t, s, "", "state", "export", st.StateID)
	file := filepath.Join(t.TempDir(), "s.json")

	// Unchanged read-only variables pass.
	os.WriteFile(file, []byte(exported), 0o644)
	mustCLI(t, s, "", "var", "set", "risk_count", "2", "--agent", "a")
	mustCLI(t, s, "", "state", "import", file, "--replace", "--agent", "a")

	// A file that changes one, or drops it, is refused; nothing moves.
	var doc map[string]any
	json.Unmarshal([]byte(exported), &doc)
	vars := doc["variables"].(map[string]any)
	vars["policy_text"].(map[string]any)["value"] = "changed"
	changed, _ := json.Marshal(doc)
	delete(vars, "policy_text")
	dropped, _ := json.Marshal(doc)
	before := gitOut(t, s, "rev-parse", "main")
	for name, data := range map[string][]byte{"changed": changed, "dropped": dropped} {
		os.WriteFile(file, data, 0o644)
		if _, errOut, code := runCLI(t, s, "", "state", "import", file, "--replace", "--agent", "a"); code != exitDomain || !strings.Contains(errOut, "read-only") {
			t.Errorf("--replace with policy_text %s: exit %d %s", name, code, errOut)
		}
	}
	if gitOut(t, s, "rev-parse", "main") != before {
		t.Fatal("a refused --replace wrote")
	}
	if got := mustCLI(t, s, "", "var", "get", "policy_text"); got != "\"fixed\"\n" {
		t.Fatalf("policy_text = %q", got)
	}
}

// TestServedWritesUseTheStoresAgent: through a server (which keeps the
// store open) a write without an agent is authored by the agent that
// agent start named, and an anonymous one is told so, on the client's
// standard error.
func TestServedWritesUseTheStoresAgent(t *testing.T) {
	dir, store := project(t)
	env := []string{"AIWG_AGENT=", "USER="}
	server := startServer(t, bin, store, env...)
	author := func() string { return strings.TrimSpace(gitOut(t, store, "log", "-1", "--format=%an", "HEAD")) }

	r := execIn(t, clientBin, dir, "", env, "set", "a.json", "x", "1")
	if r.code != 0 || !strings.Contains(r.stderr, `authored by "anonymous"`) || author() != "anonymous" {
		t.Fatalf("anonymous served write: %+v, author %s", r, author())
	}
	if r := execIn(t, bin, dir, "", env, "agent", "start", "scout"); r.code != 0 {
		t.Fatalf("agent start: %+v", r)
	}
	r = execIn(t, clientBin, dir, "", env, "set", "a.json", "x", "2")
	if r.code != 0 || r.stderr != "" || author() != "scout" {
		t.Fatalf("served write after agent start: %+v, author %s", r, author())
	}
	if !strings.Contains(server.log.String(), "ran set a.json") {
		t.Fatalf("the server did not run the writes: %s", server.log.String())
	}
}
