package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// bin is the aiwg-state binary built once for the tests that need real
// processes (concurrency, SIGKILL); clientBin is aiwg-state-client, built
// beside it as go install puts them.
var bin, clientBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aiwg-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "aiwg-state")
	clientBin = filepath.Join(dir, "aiwg-state-client")
	if out, err := exec.Command("go", "build", "-o", dir, ".", "../aiwg-state-client").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs the CLI in-process against a store.
func runCLI(t testing.TB, store, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	full := append([]string{"aiwg-state"}, args...)
	full = append(full, "--store", store, "--no-sync")
	code = run(full, strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

func mustCLI(t testing.TB, store, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, store, stdin, args...)
	if code != 0 {
		t.Fatalf("aiwg-state %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func gitOut(t testing.TB, store string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", store}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func newStore(t testing.TB) string {
	t.Helper()
	store := filepath.Join(t.TempDir(), "state.git")
	mustCLI(t, store, "", "init")
	return store
}

func TestDocumentCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk.level", `"low"`, "--agent", "planner")
	mustCLI(t, s, "", "set", "plan.json", "risk/owner", "ops", "--string")
	mustCLI(t, s, `{"b": 2, "a": 1}`, "set", "plan.json", `odd\.key`, "-")
	mustCLI(t, s, "", "set", "plan.json", "items", `[]`)
	mustCLI(t, s, "", "set", "plan.json", "items.-", `{"id": 1}`)
	mustCLI(t, s, "", "set", "plan.json", "n", `-1`)
	want := "{\n  \"items\": [\n    {\n      \"id\": 1\n    }\n  ],\n  \"n\": -1,\n  \"odd.key\": {\n    \"a\": 1,\n    \"b\": 2\n  },\n  \"risk\": {\n    \"level\": \"low\",\n    \"owner\": \"ops\"\n  }\n}\n"
	if got := mustCLI(t, s, "", "cat", "plan.json"); got != want {
		t.Fatalf("cat:\n%s\nwant:\n%s", got, want)
	}
	if got := gitOut(t, s, "show", "main:plan.json"); got != want {
		t.Fatalf("git show differs from cat:\n%s", got)
	}
	if got := mustCLI(t, s, "", "get", "plan.json", "risk.owner", "--raw"); got != "ops\n" {
		t.Fatalf("get --raw = %q", got)
	}
	if got := mustCLI(t, s, "", "get", "plan.json", "items.0.id"); got != "1\n" {
		t.Fatalf("get items.0.id = %q", got)
	}
	mustCLI(t, s, "", "mv", "plan.json", "docs/plan.json")
	if got := mustCLI(t, s, "", "ls"); !strings.Contains(got, "docs/\n") || strings.Contains(got, "plan.json") {
		t.Fatalf("ls = %q", got)
	}
	mustCLI(t, s, "", "del", "docs/plan.json", "risk.owner")
	mustCLI(t, s, "", "put", "b.json", `{"x": true}`)
	mustCLI(t, s, "", "del", "b.json")
	if _, _, code := runCLI(t, s, "", "get", "b.json"); code != exitDomain {
		t.Fatalf("get deleted file: exit %d", code)
	}
	if got := mustCLI(t, s, "", "get", "b.json", "x", "--at", "HEAD~1"); got != "true\n" {
		t.Fatalf("get --at HEAD~1 = %q", got)
	}
	// 1 init + 6 sets + mv + del + put + del
	if n := strings.Count(gitOut(t, s, "rev-list", "main"), "\n"); n != 11 {
		t.Fatalf("%d commits", n)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

func TestApplyIsAllOrNothing(t *testing.T) {
	s := newStore(t)
	ops := `{"op":"set","file":"a.json","path":"x","value":1}
# a comment
{"op":"put","file":"b.json","value":{"y":[1,2]}}
{"op":"mv","file":"b.json","to":"c.json"}
`
	out := mustCLI(t, s, ops, "apply", "-", "--json")
	var m struct {
		Changes []struct{ Operation, File string }
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || len(m.Changes) != 3 {
		t.Fatalf("apply --json = %s (%v)", out, err)
	}
	head := gitOut(t, s, "rev-parse", "main")
	bad := `{"op":"set","file":"a.json","path":"x","value":2}
{"op":"set","file":"a.json","path":"x.y","value":3}
`
	if _, _, code := runCLI(t, s, bad, "apply", "-"); code != exitDomain {
		t.Fatalf("bad batch: exit %d", code)
	}
	for _, line := range []struct{ in, says string }{
		{`{"op":"set"`, "column 12"},
		{`{"op":"put","file":"d.json","value":1} {"op":"put","file":"e.json","value":1}`, "trailing data"},
		{`{"op":"put","file":"d.json","value":1,"op":"del"}`, `duplicate object key "op"`},
		{`[{"op":"put"}]`, "an operation is a JSON object, not an array"},
		{`{"op":"put","file":"d.json","value":1,"extra":2}`, `unknown field "extra"`},
		{`{"op":"put","file":5,"value":1}`, `"file" must be a string`},
		{`{"op":"del","file":"a.json","path":""}`, `"path" is empty`},
		{`{"op":"set","file":"a.json","path":null,"value":{}}`, `"path" is empty`},
	} {
		_, errOut, code := runCLI(t, s, "# first\n"+line.in+"\n", "apply", "-")
		if code != exitUsage || !strings.Contains(errOut, "line 2: ") || !strings.Contains(errOut, line.says) || strings.Contains(errOut, "Go ") {
			t.Errorf("apply of %s: exit %d, %q; want exit %d saying line 2: …%s", line.in, code, errOut, exitUsage, line.says)
		}
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("a failed apply wrote a commit")
	}
	mustCLI(t, s, "{\"op\":\"set\",\"file\":\"a.json\",\"path\":\"x\",\"value\":5}\n{\"op\":\"set\",\"file\":\"a.json\",\"path\":\"z\",\"value\":6}\n", "apply", "-", "--commit-each")
	if n := strings.Count(gitOut(t, s, "rev-list", "main"), "\n"); n != 4 {
		t.Fatalf("%d commits after --commit-each", n)
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "a.json", "s", `"text"`)
	head := gitOut(t, s, "rev-parse", "main")
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"set", "a.json", "x", "{bad"}, exitUsage},
		{[]string{"set", "a.json", "a..b", "1"}, exitUsage},
		{[]string{"set", "../a.json", "x", "1"}, exitUsage},
		{[]string{"set", "a.json", "s.x", "1"}, exitDomain},
		{[]string{"set", "a.json", "x"}, exitUsage},
		{[]string{"set", "a.json", "x", "1", "--no-such-flag"}, exitUsage},
		{[]string{"get", "a.json", "missing"}, exitDomain},
		{[]string{"get", "nope.json"}, exitDomain},
		{[]string{"get", "a.json", "--at", "HEAD~9"}, exitDomain},
		{[]string{"set", "a.json", "x", "1", "--expect", "HEAD~1"}, exitStale},
		{[]string{"put", ".aiwg/store.json", "{}"}, exitDomain},
		{[]string{"nosuchcommand"}, exitUsage},
		{[]string{"set", "a.json", "", "1"}, exitUsage}, // an empty KEYPATH is not the whole document
		{[]string{"del", "a.json", ""}, exitUsage},
		{[]string{"get", "a.json", " "}, exitUsage},
		{[]string{"set", "a.json", "--bogus", "1"}, exitUsage},
		{[]string{"set", "a.json", "x", "1", "--branch", "nosuch"}, exitDomain},
		{[]string{"bisect"}, exitUsage}, // a required flag missing
		{[]string{"checkpoint", "prune"}, exitUsage},
		{[]string{"checkpoint", "prune", "--keep", "-1"}, exitUsage},
		{[]string{"log", "--op", "bogus"}, exitUsage},
		{[]string{"log", "-n", "-1"}, exitUsage},
		{[]string{"log", "-n-1"}, exitUsage},
		{[]string{"log", "-n1", "-n", "2"}, exitUsage},                        // one count, given twice
		{[]string{"config", "limits.max_document_bytes", `"abc"`}, exitUsage}, // settings the store could not use
		{[]string{"config", "limits.max_document_bytes", "-5"}, exitUsage},
		{[]string{"config", "format", "99"}, exitUsage},
		{[]string{"config", "nosuch", "5"}, exitUsage},
		{[]string{"apply", "nosuch.jsonl"}, exitUsage}, // an input file that is not there
		{[]string{"state", "import", "nosuch.json"}, exitUsage},
		{[]string{"traj", "import", "nosuch.json"}, exitUsage},
		{[]string{"set", "a.json", "x", "1", "--agent", "bad agent<x>"}, exitUsage}, // not silently renamed
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, s, "", c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (%s%s)", c.args, code, c.code, out, errOut)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aiwg-state: ") || strings.Contains(errOut, "goroutine") || out != "" ||
			strings.Contains(errOut, "Go struct") || strings.Contains(errOut, "json: cannot") || strings.Contains(errOut, "jsonschema") {
			t.Errorf("%v: error is not one clear line: %q (and %q on stdout)", c.args, errOut, out)
		}
		_, jsonErr, _ := runCLI(t, s, "", append(c.args, "--json")...)
		var e struct {
			Error   string         `json:"error"`
			Code    int            `json:"code"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal([]byte(jsonErr), &e); err != nil || e.Code != c.code || e.Error == "" {
			t.Errorf("%v --json: %q", c.args, jsonErr)
		}
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("a failed command wrote a commit")
	}
	_, errOut, _ := runCLI(t, s, "", "set", "a.json", "x", "1", "--expect", "HEAD~1", "--json")
	if !strings.Contains(errOut, strings.TrimSpace(head)) {
		t.Errorf("stale error does not name the current head: %s", errOut)
	}
}

func TestDiscoverFromSubdirectory(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	cmd := exec.Command(bin, "init")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "AIWG_STATE_STORE=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	cmd = exec.Command(bin, "set", "x.json", "k", "1", "--agent", "sub")
	cmd.Dir = sub
	cmd.Env = append(os.Environ(), "AIWG_STATE_STORE=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("set from a subdirectory: %v %s", err, out)
	}
	if got := gitOut(t, filepath.Join(root, ".aiwg", "state.git"), "log", "-1", "--format=%an"); got != "sub\n" {
		t.Fatalf("author = %q", got)
	}
}

func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	var o, e bytes.Buffer
	t.Setenv("AIWG_STATE_STORE", "")
	if code := run([]string{"aiwg-state", "quickstart", dir}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("quickstart: exit %d: %s\n%s", code, e.String(), o.String())
	}
	for _, want := range []string{"$ aiwg-state init", "update plan.json#risk.level", "no change", "Mutation-Id: mut-"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("quickstart output lacks %q", want)
		}
	}
	gitOut(t, filepath.Join(dir, ".aiwg", "state.git"), "fsck", "--strict", "--no-dangling")

	// --json: one object, each step's output as the step's own JSON.
	o.Reset()
	dir = t.TempDir()
	if code := run([]string{"aiwg-state", "quickstart", dir, "--json"}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("quickstart --json: exit %d: %s", code, e.String())
	}
	var session struct {
		Store string
		Steps []struct {
			Command string
			Exit    int
			Output  json.RawMessage
		}
	}
	if err := json.Unmarshal(o.Bytes(), &session); err != nil || session.Store != filepath.Join(dir, ".aiwg", "state.git") || len(session.Steps) < 10 {
		t.Fatalf("quickstart --json: %v: %s", err, o.String())
	}
	var log []map[string]any
	for _, st := range session.Steps {
		if st.Command == "aiwg-state log --json" {
			if err := json.Unmarshal(st.Output, &log); err != nil {
				t.Errorf("log's output: %v: %s", err, st.Output)
			}
		}
	}
	if len(log) != 5 { // init, three sets, the batch
		t.Errorf("log --json in quickstart --json: %d commits", len(log))
	}
	// A second run in the same place is refused, as JSON.
	o.Reset()
	e.Reset()
	if code := run([]string{"aiwg-state", "quickstart", dir, "--json"}, strings.NewReader(""), &o, &e); code != exitDomain || !json.Valid(e.Bytes()) {
		t.Errorf("quickstart --json on a store: exit %d, stderr %q", code, e.String())
	}
}

// TestQuickstartScratchStore: without DIR, the scratch store goes with the
// session unless --keep is given, and the closing hint says which.
func TestQuickstartScratchStore(t *testing.T) {
	t.Setenv("AIWG_STATE_STORE", "")
	t.Setenv("TMPDIR", t.TempDir())
	for _, keep := range []bool{false, true} {
		args := []string{"aiwg-state", "quickstart", "--json"}
		if keep {
			args = append(args, "--keep")
		}
		var o, e bytes.Buffer
		if code := run(args, strings.NewReader(""), &o, &e); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.String())
		}
		var session struct {
			Dir, Store string
			Kept       bool
		}
		if err := json.Unmarshal(o.Bytes(), &session); err != nil || session.Kept != keep {
			t.Fatalf("%v: %v: %s", args, err, o.String())
		}
		_, err := os.Stat(session.Dir)
		if keep && err != nil {
			t.Errorf("--keep: the store is gone: %v", err)
		}
		if !keep && !os.IsNotExist(err) {
			t.Errorf("without --keep the scratch directory %s is left: %v", session.Dir, err)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"aiwg-state", "quickstart"}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("quickstart: exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), "quickstart --keep") || strings.Contains(o.String(), "Go on with this store") {
		t.Errorf("the closing hint of a removed store:\n%s", o.String())
	}
}

func TestReorderArgs(t *testing.T) {
	app := newApp(nil, nil, nil)
	cases := []struct{ in, want string }{
		{"x set a.json k 1 --json", "x set --json -- a.json k 1"},
		{"x set a.json k -1 --agent bob", "x set --agent bob -- a.json k -1"},
		{"x set --json a.json k 1", "x set --json -- a.json k 1"},
		{"x get a.json -- --json", "x get -- a.json --json"},
		{"x log", "x log"},
		{"x set a.json --help", "x set --help"},
		{"x --store s set a.json k 1", "x set --store s -- a.json k 1"},
		{"x remote --store s add origin u", "x remote add --store s -- origin u"},
		{"x set a.json k 1 --source=--json", "x set --source=--json -- a.json k 1"},
		{"x log -n -1", "x log -n -1"},
		{"x var", "x var"},
		{"x var --help", "x var --help"},
		{"x remote help add", "x remote help add"},
		{"x log --json --json", "x log --json --json"},
		{"x goal sub h", "x goal sub h"},
	}
	for _, c := range cases {
		got, err := reorderArgs(app, strings.Fields(c.in))
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q -> %q (%v), want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"x set a.json --bogus 1", "set has no flag --bogus"},
		{"x get a.json k -x", "get has no flag -x"},
		{"x get a.json --at", "flag --at needs a value"},
		{"x remote add origin u --nope", "remote add has no flag --nope"},
		{"x set a.json k 1 --source --json", "flag --source needs a value, and --json is a flag (for that very value, write --source=--json)"},
		{"x log --agent --", "flag --agent needs a value, and -- is a flag"},
		{"x var sett x 1", "var has no command sett (its commands: set, get, rm, mv, ls;"},
		{"x remote --json", "remote needs one of its commands before --json: add, ls, rm"},
		{"x goal sub nope", "goal sub has no command nope"},
		{"x log --agent a --agent b", "flag --agent is given twice; log takes one"},
		{"x set a.json k 1 -m x --message y", "flag --message is given twice"},
		{"x --agent a set a.json k 2 --agent b", "flag --agent is given twice"},
		{"x --store s get a.json --store t", "flag --store is given twice"},
	} {
		if got, err := reorderArgs(app, strings.Fields(c.in)); err == nil || !strings.Contains(err.Error(), c.says) || exitCode(err) != exitUsage {
			t.Errorf("%q -> %q, %v; want exit %d saying %q", c.in, got, err, exitUsage, c.says)
		}
	}
}

func TestBranchAndHardRollbackGuards(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "state", "init", "--prompt", "p")
	mustCLI(t, s, "", "branch", "f")
	mustCLI(t, s, "", "set", "only-f.json", "a", "1", "--branch", "f")
	if _, _, code := runCLI(t, s, "", "branch", "-d", "f"); code != exitDomain {
		t.Fatalf("deleting an unmerged branch: exit %d", code)
	}
	if _, _, code := runCLI(t, s, "", "branch", "f/x"); code != exitDomain {
		t.Fatalf("a branch clashing with another: exit %d", code)
	}
	mustCLI(t, s, "", "checkpoint", "create", "onf", "--branch", "f")
	mustCLI(t, s, "", "set", "only-main.json", "a", "1")
	head := gitOut(t, s, "rev-parse", "main")
	if _, _, code := runCLI(t, s, "", "rollback", "onf", "--hard", "--yes"); code != exitDomain {
		t.Fatalf("rollback --hard to another branch's checkpoint: exit %d", code)
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("the refused rollback moved main")
	}
	mustCLI(t, s, "", "branch", "-d", "f", "--force")
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

// TestCommandsBuildAlone: a command line builds only its command's group,
// and the command it gets is the one the full CLI has; help, flags and
// unknown names get every command.
func TestCommandsBuildAlone(t *testing.T) {
	full := newApp(nil, nil, nil)
	flags := func(c *cli.Command) string {
		var names []string
		for _, f := range c.Flags {
			names = append(names, f.Names()...)
		}
		return strings.Join(names, ",")
	}
	for _, c := range full.Commands {
		for _, name := range c.Names() {
			app := newAppFor(name, nil, nil, nil)
			got := findCommand(app.Commands, name)
			if got == nil {
				t.Errorf("%s: not built", name)
				continue
			}
			if got.Name != c.Name || flags(got) != flags(c) || len(got.Subcommands) != len(c.Subcommands) {
				t.Errorf("%s: built alone it differs from the full CLI's", name)
			}
			if len(app.Commands) >= len(full.Commands) {
				t.Errorf("%s: built all %d commands", name, len(app.Commands))
			}
		}
		var out, errOut bytes.Buffer
		if code := run([]string{"aiwg-state", c.Name, "--help"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), c.Name) {
			t.Errorf("%s --help: exit %d\n%s%s", c.Name, code, out.String(), errOut.String())
		}
	}
	for _, name := range []string{"", "help", "--json", "sett"} {
		if n := len(newAppFor(name, nil, nil, nil).Commands); n != len(full.Commands) {
			t.Errorf("%q: %d commands, want all %d", name, n, len(full.Commands))
		}
	}
	// Flags every command shares may come first; any other flag there
	// leaves the command unknown (whether it takes a value is not).
	for line, want := range map[string]string{
		"x set a.json k 1":                    "set",
		"x --store s --json set a.json k 1":   "set",
		"x --store=s -b main --agent bob log": "log",
		"x -m msg --no-sync put a.json {}":    "put",
		"x --strategy ours merge b":           "",
		"x --json":                            "",
		"x -- set":                            "",
		"x --message set get a.json":          "get",
	} {
		if got := commandName(strings.Fields(line)); got != want {
			t.Errorf("%q names %q, want %q", line, got, want)
		}
	}
}

// TestBranchFlagNamesRemoteTracking: --branch origin/main reads the
// remote-tracking branch a fetch leaves (fetch --help says so); a write
// there, or to a branch that does not exist, is refused.
func TestBranchFlagNamesRemoteTracking(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "a.json", "v", "1")
	gitOut(t, s, "update-ref", "refs/remotes/origin/main", strings.TrimSpace(gitOut(t, s, "rev-parse", "main")))
	mustCLI(t, s, "", "set", "a.json", "v", "2")
	if got := mustCLI(t, s, "", "get", "a.json", "v", "--branch", "origin/main"); got != "1\n" {
		t.Fatalf("get --branch origin/main = %q", got)
	}
	if got := mustCLI(t, s, "", "log", "--branch", "origin/main", "-n", "1"); !strings.Contains(got, "create a.json#v") {
		t.Fatalf("log --branch origin/main = %q", got)
	}
	for b, want := range map[string]string{
		"origin/main": "aiwg-state: origin/main is a remote-tracking branch (fetch moves it), not a branch to write: make one of your own (aiwg-state branch NAME --from origin/main)\n",
		"nosuch":      "aiwg-state: branch nosuch does not exist (aiwg-state branch lists the branches; aiwg-state branch nosuch creates it)\n",
	} {
		_, errOut, code := runCLI(t, s, "", "set", "a.json", "v", "3", "--branch", b)
		if code != exitDomain || errOut != want {
			t.Errorf("set --branch %s: exit %d, %q, want %q", b, code, errOut, want)
		}
	}
	// A branch named as the remote-tracking one would hide it from
	// --branch and --at.
	if _, errOut, code := runCLI(t, s, "", "branch", "origin/main"); code != exitDomain || !strings.Contains(errOut, "origin/main is already a remote-tracking branch") {
		t.Errorf("branch origin/main: exit %d, %q", code, errOut)
	}
	if refs := gitOut(t, s, "for-each-ref", "--format=%(refname)", "refs/heads/"); refs != "refs/heads/main\n" {
		t.Fatalf("branches after refused writes: %q", refs)
	}
	// Full names of refs that are not branches: read, never written.
	gitOut(t, s, "tag", "t1", "main")
	tags := gitOut(t, s, "show-ref")
	for _, ref := range []string{"refs/remotes/origin/main", "refs/tags/t1", "refs/aiwg/merge/main"} {
		_, errOut, code := runCLI(t, s, "", "set", "a.json", "v", "3", "--branch", ref)
		if code != exitDomain || !strings.Contains(errOut, "not a branch") {
			t.Errorf("set --branch %s: exit %d, %q", ref, code, errOut)
		}
	}
	if got := mustCLI(t, s, "", "get", "a.json", "v", "--branch", "refs/tags/t1"); got != "2\n" {
		t.Errorf("get --branch refs/tags/t1 = %q", got)
	}
	if gitOut(t, s, "show-ref") != tags {
		t.Fatal("a refused write moved a ref")
	}
	if _, errOut, _ := runCLI(t, s, "", "var", "set"); !strings.Contains(errOut, "usage: aiwg-state var set NAME") {
		t.Errorf("usage of a nested command: %q", errOut)
	}
}

// TestJSONModeStderrIsJSON: with --json a warning is a JSON object on a
// line of its own, a failure's stderr is its one error object (no warning
// before it), and progress is left out.
func TestJSONModeStderrIsJSON(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "state", "init", "--prompt", "p")
	for _, tc := range []struct {
		args  []string
		code  int
		lines []string // the keys of each stderr line's object
	}{
		{[]string{"var", "set", "x", "1", "--json"}, 0, []string{"warning"}},
		{[]string{"var", "mv", "nosuch", "y", "--json"}, exitDomain, []string{"code"}},
		{[]string{"reindex", "--json"}, 0, nil},
	} {
		_, stderr, code := runCLI(t, s, "", tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if stderr == "" {
			lines = nil
		}
		if code != tc.code || len(lines) != len(tc.lines) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr)
			continue
		}
		for i, line := range lines {
			var obj map[string]any
			if err := json.Unmarshal([]byte(line), &obj); err != nil || obj[tc.lines[i]] == nil {
				t.Errorf("%v: stderr line %q is not a JSON object with %q", tc.args, line, tc.lines[i])
			}
		}
	}
}

// TestRefusedCommandLines: command lines that were once accepted, each
// now refused with exit 2 (or, for a remote that does not exist, 3) and
// nothing on stdout, leaving the store as it was.
func TestRefusedCommandLines(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "k", "1")
	mustCLI(t, s, "", "set", "plan.json", "k", "2")
	mustCLI(t, s, "", "state", "init", "--prompt", "p")
	mustCLI(t, s, "", "goal", "create", "SHIP-IT")
	before := gitOut(t, s, "show-ref")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"gc", "extra"}, exitUsage, `gc takes no arguments, got "extra"`},
		{[]string{"get", "nope.json"}, exitDomain, "aiwg-state: nope.json: no such document at HEAD\n"},
		{[]string{"set", "plan.json", "k", "3", "--unchanged-since", "HEAD~3"}, exitStale, "plan.json changed since HEAD~3"},
		{[]string{"log", "-n", "abc"}, exitUsage, `-n "abc": want a whole number (see aiwg-state log --help)`},
		{[]string{"var", "set", "x", "1", "--ttl", "abc"}, exitUsage, `--ttl "abc": want a whole number (see aiwg-state var set --help)`},
		{[]string{"set", "plan.json", "k", "high"}, exitUsage, `(text is a JSON string: '"high"' in the shell, or --string)`},
		{[]string{"put", "plan.json", "it's"}, exitUsage, "(text is a JSON string: for this one, use --string)"},
		{[]string{"conflicts", "plan.json"}, exitUsage, "conflicts takes no arguments"},
		{[]string{"checkpoint", "ls", "extra"}, exitUsage, "checkpoint ls takes no arguments"},
		{[]string{"diff", "--format", "bogus", "--json"}, exitUsage, `unknown --format \"bogus\"`},
		{[]string{"diff", "HEAD~1", "HEAD", "plan.json", ""}, exitUsage, "an empty argument"},
		{[]string{"event", "add", "SHIP-IT", "SUB"}, exitUsage, "needs --type or --body"},
		{[]string{"request", "SHIP-IT", "SUB"}, exitUsage, "the request's text is missing"},
		{[]string{"state", "export", "--page", "0"}, exitUsage, "pages count from 1"},
		{[]string{"push", "nosuch", "--json"}, exitDomain, `remote \"nosuch\"`},
		{[]string{"sync", "nosuch", "--json"}, exitDomain, `remote \"nosuch\"`},
		{[]string{"integrate", "nosuch", "--json"}, exitDomain, `remote \"nosuch\"`},
		{[]string{"policy", "check", "nosuch"}, exitDomain, `unknown revision "nosuch"`},
		{[]string{"policy", "check", "main..nosuch"}, exitDomain, `unknown revision "nosuch"`},
		{[]string{"policy", "check", "--store", s, "--", "--all"}, exitUsage, "--all is not a revision"},
		{[]string{"policy", "show", "--at", "nosuch"}, exitDomain, `aiwg-state: revision nosuch: unknown revision "nosuch"`},
	} {
		out, stderr, code := runCLI(t, s, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d saying %q", tc.args, code, out, stderr, tc.code, tc.says)
		}
	}
	if gitOut(t, s, "show-ref") != before {
		t.Error("a refused command line moved a ref")
	}
}

// TestWhereCommandsCannotRunExitThree: a place that is not what the
// command needs (no repository, a file in the way, a remote that is not
// there) is exit 3 with one line, not an unexpected failure; a missing
// input file is a bad argument (exit 2), as for apply.
func TestWhereCommandsCannotRunExitThree(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"hooks", "install", "--server", filepath.Join(dir, "nonexistent.git")}, exitDomain, "is not a git repository"},
		{[]string{"install-drivers", "--repo", dir}, exitDomain, "is not in a git repository"},
		{[]string{"init", "--store", filepath.Join(file, "x")}, exitDomain, file + " is a file, where the store needs a directory"},
		{[]string{"clone", filepath.Join(dir, "nonexistent.git"), filepath.Join(dir, "c")}, exitDomain, "does not exist"},
		{[]string{"merge-file", "--strategy", "merge-objects", filepath.Join(dir, "O"), file, file}, exitUsage, "merge-file: open "},
	} {
		_, stderr, code := cliIn(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.says) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit %d saying %q", tc.args, code, stderr, tc.code, tc.says)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("failed commands left files: %v", es)
	}
}

// TestEveryHelpHasAnExample: --help teaches with examples on every
// command a user can see, groups included.
func TestEveryHelpHasAnExample(t *testing.T) {
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			if c.Hidden {
				continue
			}
			_, examples, ok := strings.Cut(c.Description, "Examples:\n")
			if !ok || !strings.Contains(examples, "aiwg-state ") {
				t.Errorf("aiwg-state %s%s --help has no example", prefix, c.Name)
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	for _, group := range commandGroups() {
		walk("", group())
	}
}
