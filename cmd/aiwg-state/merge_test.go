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
)

// gitWork runs the git CLI in a work tree.
func gitWork(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_AUTHOR_NAME=tester", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=tester", "GIT_COMMITTER_EMAIL=t@example.invalid"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cliIn runs the CLI in-process without the --store flags runCLI adds
// (merge-file and install-drivers need no store).
func cliIn(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	code := run(append([]string{"aiwg-state"}, args...), strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

// strategyAttributes gives each strategy a directory of its own, so one
// pair of branches exercises them all.
func strategyAttributes() string {
	var b strings.Builder
	b.WriteString("*.json merge=aiwg-merge-objects\n**/variables/*.json merge=aiwg-last-write-wins\n")
	for _, s := range []string{"last-write-wins", "first-write-wins", "merge-objects", "merge-arrays", "higher-priority-wins", "max", "sum", "conflict"} {
		fmt.Fprintf(&b, "%s/*.json merge=aiwg-%s\n", s, s)
	}
	b.WriteString("keys/*.json merge=aiwg-merge-objects aiwg-keys=EVENTS:merge-arrays,SEEN:max aiwg-fallback=last-write-wins\n")
	return b.String()
}

// divergentStore builds a store whose branches main and feat diverged
// with changes that every strategy settles cleanly, the .gitattributes
// having been committed with plain git in a clone and pushed back.
func divergentStore(t *testing.T) (store, work string) {
	t.Helper()
	store = newStore(t)
	work = filepath.Join(t.TempDir(), "work")
	gitWork(t, ".", nil, "clone", "-q", store, work)
	if err := os.WriteFile(filepath.Join(work, ".gitattributes"), []byte(strategyAttributes()), 0o644); err != nil {
		t.Fatal(err)
	}
	gitWork(t, work, nil, "commit", "-qam", "strategies per directory")
	gitWork(t, work, nil, "push", "-q", "origin", "main")

	seed := `{"op":"put","file":"last-write-wins/status.json","value":{"status":{"value":"new","updated_at":"2026-01-01T00:00:00Z"},"note":"x"}}
{"op":"put","file":"first-write-wins/claim.json","value":{"claim":{"owner":"nobody","updated_at":"2026-01-01T00:00:00Z"}}}
{"op":"put","file":"global/variables/clocked.json","value":{"value":0}}
{"op":"put","file":"merge-objects/plan.json","value":{"goal":"ship","risk":{"level":"low"},"tags":["a"]}}
{"op":"put","file":"merge-arrays/log.json","value":{"items":[{"id":1,"v":"one"},{"id":2,"v":"two"}],"plain":[1,2,3]}}
{"op":"put","file":"higher-priority-wins/task.json","value":{"task":{"priority":"low","title":"t0"}}}
{"op":"put","file":"max/counter.json","value":{"n":1,"seen":false}}
{"op":"put","file":"sum/metrics.json","value":{"totalTasksCompleted":5,"totalTasksFailed":1,"costUsd":0.5}}
{"op":"put","file":"conflict/doc.json","value":{"a":1,"b":1}}
{"op":"put","file":"keys/state.json","value":{"EVENTS":[{"id":"e1","ts":1}],"SEEN":1,"NAME":"x"}}
{"op":"put","file":"global/variables/doomed.json","value":{"value":1}}
{"op":"put","file":"global/variables/stable.json","value":{"value":1}}
`
	mustCLI(t, store, seed, "apply", "-", "--agent", "seeder")
	mustCLI(t, store, "", "branch", "feat")

	ours := `{"op":"set","file":"last-write-wins/status.json","path":"status","value":{"value":"ours","updated_at":"2026-01-01T00:00:05Z"}}
{"op":"set","file":"first-write-wins/claim.json","path":"claim","value":{"owner":"main-agent","updated_at":"2026-01-01T00:00:03Z"}}
{"op":"set","file":"global/variables/clocked.json","path":"value","value":1}
{"op":"set","file":"merge-objects/plan.json","path":"risk.level","value":"high"}
{"op":"set","file":"merge-arrays/log.json","path":"items.-","value":{"id":3,"v":"three"}}
{"op":"del","file":"merge-arrays/log.json","path":"plain.0"}
{"op":"set","file":"higher-priority-wins/task.json","path":"task","value":{"priority":"low","title":"ours"}}
{"op":"set","file":"max/counter.json","path":"n","value":5}
{"op":"set","file":"sum/metrics.json","path":"totalTasksCompleted","value":6}
{"op":"set","file":"sum/metrics.json","path":"totalTasksFailed","value":2}
{"op":"set","file":"sum/metrics.json","path":"costUsd","value":0.75}
{"op":"set","file":"conflict/doc.json","path":"a","value":2}
{"op":"set","file":"keys/state.json","path":"EVENTS.-","value":{"id":"e2","ts":2}}
{"op":"set","file":"keys/state.json","path":"SEEN","value":3}
{"op":"put","file":"docs/only-ours.json","value":{"side":"ours"}}
{"op":"del","file":"global/variables/doomed.json"}
`
	theirs := `{"op":"set","file":"last-write-wins/status.json","path":"status","value":{"value":"theirs","updated_at":"2026-01-01T00:00:09Z"}}
{"op":"set","file":"last-write-wins/status.json","path":"note","value":"y"}
{"op":"set","file":"first-write-wins/claim.json","path":"claim","value":{"owner":"feat-agent","updated_at":"2026-01-01T00:00:07Z"}}
{"op":"set","file":"global/variables/clocked.json","path":"value","value":2}
{"op":"set","file":"merge-objects/plan.json","path":"goal","value":"ship it"}
{"op":"set","file":"merge-objects/plan.json","path":"extra","value":true}
{"op":"set","file":"merge-arrays/log.json","path":"items.-","value":{"id":4,"v":"four"}}
{"op":"set","file":"merge-arrays/log.json","path":"items.0.v","value":"uno"}
{"op":"set","file":"merge-arrays/log.json","path":"plain.-","value":4}
{"op":"set","file":"higher-priority-wins/task.json","path":"task","value":{"priority":"urgent","title":"theirs"}}
{"op":"set","file":"max/counter.json","path":"n","value":3}
{"op":"set","file":"sum/metrics.json","path":"totalTasksCompleted","value":6}
{"op":"set","file":"sum/metrics.json","path":"totalTasksFailed","value":3}
{"op":"set","file":"sum/metrics.json","path":"costUsd","value":0.6}
{"op":"set","file":"max/counter.json","path":"seen","value":true}
{"op":"set","file":"conflict/doc.json","path":"b","value":2}
{"op":"set","file":"keys/state.json","path":"EVENTS.-","value":{"id":"e3","ts":3}}
{"op":"set","file":"keys/state.json","path":"SEEN","value":2}
{"op":"set","file":"keys/state.json","path":"NAME","value":"y"}
{"op":"put","file":"docs/only-theirs.json","value":{"side":"theirs"}}
{"op":"set","file":"global/variables/stable.json","path":"value","value":2}
`
	mustCLI(t, store, ours, "apply", "-", "--agent", "main-agent")
	mustCLI(t, store, theirs, "apply", "-", "--agent", "feat-agent", "--branch", "feat")
	// A later commit on main that does not touch the clashing files: the
	// clocks are those of the last commit that changed each file, not the
	// heads', in the store and in the driver alike (the tree comparison
	// checks they agree; the clocks' own order is tested in the store).
	mustCLI(t, store, "", "set", "docs/only-ours.json", "later", "1", "--agent", "main-agent")
	return store, work
}

// TestGitMergeWithDriversMatchesAiwgMerge is the driver contract: a plain
// git merge in a clone, with the drivers installed, gives byte for byte
// the tree aiwg-state merge gives for the same branches, for every
// strategy.
func TestGitMergeWithDriversMatchesAiwgMerge(t *testing.T) {
	store, work := divergentStore(t)
	gitWork(t, work, nil, "fetch", "-q", "origin")
	gitWork(t, work, nil, "reset", "-q", "--hard", "origin/main")
	if _, errOut, code := cliIn(t, "install-drivers", "--repo", work, "--bin", bin); code != 0 {
		t.Fatalf("install-drivers: exit %d: %s", code, errOut)
	}
	if got := gitWork(t, work, nil, "config", "merge.aiwg-max.driver"); !strings.Contains(got, "merge-file --strategy max %O %A %B --path %P") {
		t.Fatalf("driver registered as %q", got)
	}
	gitWork(t, work, nil, "merge", "-q", "--no-edit", "origin/feat")

	out := mustCLI(t, store, "", "merge", "feat", "--json")
	var res struct {
		Status string
		Commit struct{ Commit string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != "merged" {
		t.Fatalf("aiwg-state merge: %s (%v)", out, err)
	}
	gitTree := strings.TrimSpace(gitWork(t, work, nil, "rev-parse", "HEAD^{tree}"))
	ourTree := strings.TrimSpace(gitOut(t, store, "rev-parse", "main^{tree}"))
	if gitTree != ourTree {
		t.Errorf("git merge tree %s != aiwg-state merge tree %s", gitTree, ourTree)
		for _, line := range strings.Split(strings.TrimSpace(gitWork(t, work, nil, "diff", "--stat", "HEAD", ourTree)), "\n") {
			t.Log(line)
		}
		gitWork(t, work, nil, "fetch", "-q", "origin")
		t.Log(gitWork(t, work, nil, "diff", "HEAD", "origin/main"))
	}
	// What each strategy made of it, checked against the rules.
	want := map[string]string{
		"last-write-wins/status.json":     `"value": "theirs"`, // the data's own updated_at orders the writes
		"first-write-wins/claim.json":     `"owner": "main-agent"`,
		"merge-objects/plan.json":         `"goal": "ship it"`,
		"higher-priority-wins/task.json":  `"title": "theirs"`,
		"max/counter.json":                `"n": 5`,
		"sum/metrics.json":                `"totalTasksCompleted": 7`, // both sides' increments
		"sum/metrics.json#failed":         `"totalTasksFailed": 4`,
		"sum/metrics.json#cost":           `"costUsd": 0.85`,
		"conflict/doc.json":               `"b": 2`,
		"keys/state.json":                 `"SEEN": 3`,
		"merge-arrays/log.json":           `"v": "uno"`,
		"docs/only-ours.json":             `"later": 1`,
		"global/variables/stable.json":    `"value": 2`,
		"keys/state.json#events":          `"id": "e3"`,
		"merge-arrays/log.json#appended":  `"id": 4`,
		"merge-objects/plan.json#ours":    `"level": "high"`,
		"max/counter.json#flag":           `"seen": true`,
		"last-write-wins/status.json#key": `"note": "y"`,
	}
	for file, frag := range want {
		file, _, _ = strings.Cut(file, "#")
		if got := gitOut(t, store, "show", "main:"+file); !strings.Contains(got, frag) {
			t.Errorf("%s lacks %s:\n%s", file, frag, got)
		}
	}
	if _, _, code := runCLI(t, store, "", "get", "global/variables/doomed.json"); code != exitDomain {
		t.Error("a file deleted on one side survived the merge")
	}
	if parents := strings.Fields(gitOut(t, store, "log", "-1", "--format=%P", "main")); len(parents) != 2 {
		t.Errorf("merge commit parents: %v", parents)
	}
	if got := gitOut(t, store, "log", "-1", "--format=%B", "main"); !strings.Contains(got, "Operation: merge") ||
		!strings.Contains(got, "Mutation-Id: mut-") || !strings.Contains(got, "\nClock: ") {
		t.Errorf("merge commit:\n%s", got)
	}
	if got := mustCLI(t, store, "", "merge", "--verify", "main"); !strings.HasSuffix(got, " is the merge of its parents\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("verify of the drivers' merge: %q", got)
	}
	gitOut(t, store, "fsck", "--strict", "--no-dangling")
	gitWork(t, work, nil, "fsck", "--strict", "--no-dangling")
}

// TestCommandsInAGitCloneUseIt: in a git clone of a store (the README's
// plain-git-merge recipe, and CI's checkout), commands find the clone's
// own repository, not a store in a parent directory; the branch checked
// out there is not written under its files.
func TestCommandsInAGitCloneUseIt(t *testing.T) {
	_, work := divergentStore(t)
	// A project store above the clone, which must not be the one used.
	parent := filepath.Dir(work)
	mustCLI(t, filepath.Join(parent, ".aiwg", "state.git"), "", "init")
	gitWork(t, work, nil, "fetch", "-q", "origin")
	gitWork(t, work, nil, "reset", "-q", "--hard", "origin/main")
	if _, errOut, code := cliIn(t, "install-drivers", "--repo", work, "--bin", bin); code != 0 {
		t.Fatalf("install-drivers: exit %d: %s", code, errOut)
	}
	gitWork(t, work, nil, "merge", "-q", "--no-edit", "origin/feat")
	sub := filepath.Join(work, "merge-objects")
	for _, dir := range []string{work, sub} {
		if r := execIn(t, bin, dir, "", nil, "merge", "--verify", "HEAD"); r.code != 0 || !strings.HasSuffix(r.stdout, " is the merge of its parents\n") {
			t.Errorf("merge --verify HEAD in %s: exit %d: %s%s", dir, r.code, r.stdout, r.stderr)
		}
	}
	for _, store := range []string{".", ".git"} {
		if r := execIn(t, bin, work, "", nil, "get", "merge-objects/plan.json", "goal", "--store", store); r.code != 0 || r.stdout != "\"ship it\"\n" {
			t.Errorf("get --store %s in the clone: exit %d: %q %s", store, r.code, r.stdout, r.stderr)
		}
	}
	head := gitWork(t, work, nil, "rev-parse", "HEAD")
	r := execIn(t, bin, work, "", nil, "set", "plan.json", "k", "1", "--agent", "a")
	if r.code != exitDomain || !strings.Contains(r.stderr, "main is checked out in the git clone "+work) {
		t.Errorf("a write to the checked-out branch: exit %d: %s", r.code, r.stderr)
	}
	if gitWork(t, work, nil, "rev-parse", "HEAD") != head || gitWork(t, work, nil, "status", "--porcelain") != "" {
		t.Error("the refused write moved the clone's branch")
	}
	gitWork(t, work, nil, "branch", "feat", "origin/feat")
	if r := execIn(t, bin, work, "", nil, "set", "plan.json", "k", "1", "--agent", "a", "--branch", "feat"); r.code != 0 {
		t.Errorf("a write to a branch not checked out: exit %d: %s", r.code, r.stderr)
	}
	if n := gitOut(t, filepath.Join(parent, ".aiwg", "state.git"), "rev-list", "--count", "main"); n != "1\n" {
		t.Errorf("the parent's store got writes: %s commits", n)
	}
	// HEAD is git checkout's to move, with the files.
	branches := gitWork(t, work, nil, "branch", "--list")
	for _, args := range [][]string{{"switch", "feat"}, {"agent", "start", "bob"}} {
		if r := execIn(t, bin, work, "", nil, args...); r.code != exitDomain || !strings.Contains(r.stderr, "is a git clone: its HEAD is git checkout's to move") {
			t.Errorf("%v in the clone: exit %d: %s", args, r.code, r.stderr)
		}
	}
	if gitWork(t, work, nil, "branch", "--list") != branches || gitWork(t, work, nil, "status", "--porcelain") != "" {
		t.Error("a refused switch changed the clone")
	}
	// What needs no write of the checked-out branch still runs.
	for _, args := range [][]string{{"gc"}, {"policy", "check", "feat", "^origin/main"}, {"serve", "--status", "--store", "."}} {
		if r := execIn(t, bin, work, "", nil, args...); r.code != 0 && !(args[0] == "serve" && strings.Contains(r.stderr, "no server runs for "+filepath.Join(work, ".git"))) {
			t.Errorf("%v in the clone: exit %d: %s", args, r.code, r.stderr)
		}
	}
	// CI checks pull requests out detached: reads take that commit.
	gitWork(t, work, nil, "checkout", "-q", "--detach", "HEAD")
	if r := execIn(t, bin, work, "", nil, "merge", "--verify", "HEAD"); r.code != 0 {
		t.Errorf("merge --verify HEAD on a detached clone: exit %d: %s", r.code, r.stderr)
	}
	if r := execIn(t, bin, work, "", nil, "set", "plan.json", "k", "2", "--agent", "a"); r.code != exitDomain || !strings.Contains(r.stderr, "HEAD is not a branch") {
		t.Errorf("a write on a detached clone: exit %d: %s", r.code, r.stderr)
	}
}

// divergedDocument is a store whose main and feat branches changed file
// from base to ours and to theirs.
func divergedDocument(t *testing.T, file, base, ours, theirs string) string {
	t.Helper()
	s := newStore(t)
	mustCLI(t, s, "", "put", file, base)
	mustCLI(t, s, "", "branch", "feat")
	mustCLI(t, s, "", "put", file, ours)
	mustCLI(t, s, "", "put", file, theirs, "--branch", "feat")
	return s
}

// TestVerifyAcceptsHandResolutions: merges settled with resolve pass
// merge --verify even when the settling moves values between conflicted
// keys or shifts an array's elements.
func TestVerifyAcceptsHandResolutions(t *testing.T) {
	for _, tc := range []struct {
		name, base, ours, theirs string
		strategy                 string
		resolve                  func(key string) string // --ours, --theirs or --base per conflicted key
	}{
		{
			// The diff pairs the result as y moved from x.
			name: "a move between conflicted keys", base: `{"y":"t"}`, ours: `{"x":"p"}`, theirs: `{"y":"p","x":"q"}`, strategy: "merge-objects",
			resolve: func(key string) string { return map[string]string{"x": "--base", "y": "--theirs"}[key] },
		},
		{
			// Deleting an element shifts the later ones' indices.
			name: "an array whose elements shift", strategy: "merge-arrays",
			base:   `{"items":[{"id":1,"v":0},{"id":2,"v":0},{"id":3,"v":0},{"id":4,"v":0}]}`,
			ours:   `{"items":[{"id":1,"v":0},{"id":3,"v":0},{"id":4,"v":1}]}`,
			theirs: `{"items":[{"id":1,"v":0},{"id":2,"v":2},{"id":3,"v":0},{"id":4,"v":2}]}`,
			resolve: func(key string) string {
				if strings.HasSuffix(key, ".v") {
					return "--theirs" // id 4's v
				}
				return "--ours" // id 2: deleted
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := divergedDocument(t, "p.json", tc.base, tc.ours, tc.theirs)
			if _, _, code := runCLI(t, s, "", "merge", "feat", "--strategy", tc.strategy); code != exitConflict {
				t.Fatalf("merge: exit %d, want conflicts", code)
			}
			// One at a time: settling one may renumber the others.
			for i := 0; ; i++ {
				var cs []struct{ File, Key string }
				if err := json.Unmarshal([]byte(mustCLI(t, s, "", "conflicts", "--json")), &cs); err != nil || (i == 0 && len(cs) < 2) {
					t.Fatalf("conflicts: %v %v", cs, err)
				}
				if len(cs) == 0 {
					break
				}
				mustCLI(t, s, "", "resolve", cs[0].File, cs[0].Key, tc.resolve(cs[0].Key))
			}
			mustCLI(t, s, "", "merge", "--continue")
			if out, errOut, code := runCLI(t, s, "", "merge", "--verify", "main", "--strategy", tc.strategy); code != 0 {
				t.Errorf("verify: exit %d: %s%s\nthe merge: %s", code, out, errOut, gitOut(t, s, "show", "main:p.json"))
			}
		})
	}
}

// TestVerifyReportsAHostMerge: a merge made without the drivers (what a
// git host's merge button does) is caught by merge --verify.
func TestVerifyReportsAHostMerge(t *testing.T) {
	store, work := divergentStore(t)
	gitWork(t, work, nil, "fetch", "-q", "origin")
	gitWork(t, work, nil, "reset", "-q", "--hard", "origin/main")
	// No drivers: git's text merge; keep ours where it conflicts.
	gitWork(t, work, nil, "merge", "-q", "--no-edit", "-X", "ours", "origin/feat")
	gitWork(t, work, nil, "push", "-q", "origin", "HEAD:refs/heads/hosted")
	out, _, code := runCLI(t, store, "", "merge", "--verify", "hosted", "--json")
	if code != exitConflict {
		t.Fatalf("verify of a driverless merge: exit %d: %s", code, out)
	}
	var res struct {
		Differences []struct {
			File    string
			Changes []any
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Differences) == 0 {
		t.Fatalf("verify --json: %s (%v)", out, err)
	}
	files := map[string]bool{}
	for _, d := range res.Differences {
		files[d.File] = true
	}
	if !files["last-write-wins/status.json"] {
		t.Errorf("verify missed last-write-wins/status.json: %s", out)
	}
}

// TestDriverConflictWritesARecordNotMarkers: a clash the strategy leaves
// open makes git stop, with ours' value in the file and the conflict as a
// JSON record in the git dir.
func TestDriverConflictWritesARecordNotMarkers(t *testing.T) {
	store := newStore(t)
	mustCLI(t, store, "", "put", "doc.json", `{"a":1}`)
	mustCLI(t, store, "", "branch", "feat")
	mustCLI(t, store, "", "set", "doc.json", "a", "2")
	mustCLI(t, store, "", "set", "doc.json", "a", "3", "--branch", "feat")
	work := filepath.Join(t.TempDir(), "work")
	gitWork(t, ".", nil, "clone", "-q", store, work)
	if _, errOut, code := cliIn(t, "install-drivers", "--repo", work, "--bin", bin); code != 0 {
		t.Fatal(errOut)
	}
	cmd := exec.Command("git", "merge", "--no-edit", "origin/feat")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("git merge with a conflict succeeded: %s", out)
	}
	data, err := os.ReadFile(filepath.Join(work, "doc.json"))
	if err != nil || string(data) != "{\n  \"a\": 2\n}\n" {
		t.Fatalf("doc.json after the driver: %q %v", data, err)
	}
	rec, err := os.ReadFile(filepath.Join(work, ".git", "aiwg-conflicts", "doc.json.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		File string
		Keys []struct {
			Path               string
			Base, Ours, Theirs json.Number
		}
	}
	if err := json.Unmarshal(rec, &r); err != nil || r.File != "doc.json" || len(r.Keys) != 1 || r.Keys[0].Path != "a" ||
		r.Keys[0].Base != "1" || r.Keys[0].Ours != "2" || r.Keys[0].Theirs != "3" {
		t.Fatalf("conflict record: %s (%v)", rec, err)
	}
	// The store's own merge finds the same conflict.
	_, _, code := runCLI(t, store, "", "merge", "feat")
	if code != exitConflict {
		t.Fatalf("aiwg-state merge: exit %d", code)
	}
}

func TestMergeFileStandalone(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base", `{"a":1,"b":1}`)
	ours := write("ours", `{"a":2,"b":1}`)
	theirs := write("theirs", `{"a":1,"b":2}`)
	if _, errOut, code := cliIn(t, "merge-file", "--strategy", "conflict", base, ours, theirs); code != 0 {
		t.Fatalf("clean merge-file: exit %d: %s", code, errOut)
	}
	if got, _ := os.ReadFile(ours); string(got) != "{\n  \"a\": 2,\n  \"b\": 2\n}\n" {
		t.Fatalf("merged: %q", got)
	}
	ours2 := write("ours2", `{"a":5}`)
	theirs2 := write("theirs2", `{"a":6}`)
	if _, _, code := cliIn(t, "merge-file", "--strategy", "conflict", base, ours2, theirs2); code != exitConflict {
		t.Fatalf("conflicting merge-file: exit %d", code)
	}
	if _, err := os.Stat(ours2 + ".aiwg-conflicts.json"); err != nil {
		t.Fatal("no conflict record beside OURS outside a repository")
	}
	if _, _, code := cliIn(t, "merge-file", "--strategy", "bogus", base, ours, theirs); code != exitUsage {
		t.Fatalf("unknown strategy: exit %d", code)
	}
}

// TestConflictLifecycle: merge stops with exit 4, the branch is blocked,
// conflicts lists base/ours/theirs, resolve settles, --continue commits;
// --abort restores.
func TestConflictLifecycle(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "put", "plan.json", `{"owner":"a","level":1,"items":[{"id":1,"v":0}]}`)
	mustCLI(t, s, "", "branch", "feat")
	mustCLI(t, s, `{"op":"set","file":"plan.json","path":"owner","value":"b"}
{"op":"set","file":"plan.json","path":"level","value":2}
{"op":"set","file":"plan.json","path":"items.0.v","value":1}
`, "apply", "-")
	mustCLI(t, s, `{"op":"set","file":"plan.json","path":"owner","value":"c"}
{"op":"set","file":"plan.json","path":"level","value":3}
{"op":"set","file":"plan.json","path":"items.0.v","value":2}
`, "apply", "-", "--branch", "feat")
	head := gitOut(t, s, "rev-parse", "main")

	out, _, code := runCLI(t, s, "", "merge", "feat", "--json")
	if code != exitConflict {
		t.Fatalf("merge with conflicts: exit %d: %s", code, out)
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("a merge with conflicts moved the branch")
	}
	var cs []struct {
		File, Key          string
		Base, Ours, Theirs json.RawMessage
	}
	out = mustCLI(t, s, "", "conflicts", "--json")
	if err := json.Unmarshal([]byte(out), &cs); err != nil || len(cs) != 3 {
		t.Fatalf("conflicts: %s (%v)", out, err)
	}
	if cs[0].Key != "items" || cs[1].Key != "level" || cs[2].Key != "owner" || string(cs[2].Base) != `"a"` || string(cs[2].Ours) != `"b"` || string(cs[2].Theirs) != `"c"` {
		t.Fatalf("conflicts: %s", out)
	}
	for _, blocked := range [][]string{{"set", "plan.json", "x", "1"}, {"merge", "feat"}, {"merge", "--continue"}} {
		if _, _, code := runCLI(t, s, "", blocked...); code != exitConflict {
			t.Errorf("%v during a merge: exit %d, want 4", blocked, code)
		}
	}
	// Other branches are not blocked.
	mustCLI(t, s, "", "set", "other.json", "x", "1", "--branch", "feat")
	if got := mustCLI(t, s, "", "branch"); !strings.Contains(got, "main") || !strings.Contains(got, "(merging)") {
		t.Errorf("branch list: %q", got)
	}

	mustCLI(t, s, "", "resolve", "plan.json", "owner", "--theirs")
	mustCLI(t, s, "", "resolve", "plan.json", "level", "--value", "10")
	if _, _, code := runCLI(t, s, "", "resolve", "plan.json", "nope", "--ours"); code != exitDomain {
		t.Errorf("resolving a key without a conflict: exit %d", code)
	}
	if _, _, code := runCLI(t, s, "", "resolve", "plan.json", "owner"); code != exitUsage {
		t.Errorf("resolve without a side: exit %d", code)
	}
	mustCLI(t, s, "", "resolve", "plan.json", "--base")
	if got := mustCLI(t, s, "", "conflicts", "--json"); strings.TrimSpace(got) != "[]" {
		t.Fatalf("conflicts after resolving all: %s", got)
	}
	mustCLI(t, s, "", "merge", "--continue")
	if got := mustCLI(t, s, "", "cat", "plan.json"); !strings.Contains(got, `"owner": "c"`) || !strings.Contains(got, `"level": 10`) || !strings.Contains(got, `"v": 0`) {
		t.Fatalf("after --continue:\n%s", got)
	}
	if got := gitOut(t, s, "log", "-1", "--format=%P", "main"); len(strings.Fields(got)) != 2 {
		t.Fatalf("--continue made no two-parent commit: %q", got)
	}
	// The hand resolution is listed, marked, and passes the check.
	verify, _, code := runCLI(t, s, "", "merge", "--verify", "main")
	if code != 0 || !strings.HasPrefix(verify, "plan.json: resolved by hand (the recomputed merge conflicts here), not failing the check: merged ") ||
		!strings.HasSuffix(verify, " is the merge of its parents, with 1 file(s) resolved by hand, as listed\n") {
		t.Errorf("verify of a merge resolved by hand: exit %d: %s", code, verify)
	}
	// The same merge with one more change in plan.json, at a key that was
	// never in conflict (as a hand edit made with plain git would be):
	// the hand resolution does not excuse it.
	doc := strings.Replace(gitOut(t, s, "show", "main:plan.json"), "{\n", "{\n  \"forged\": true,\n", 1)
	blob := strings.TrimSpace(gitIn(s, doc, "hash-object", "-w", "--stdin"))
	var tree strings.Builder
	for _, line := range strings.SplitAfter(gitOut(t, s, "ls-tree", "main"), "\n") {
		if strings.HasSuffix(line, "\tplan.json\n") {
			line = "100644 blob " + blob + "\tplan.json\n"
		}
		tree.WriteString(line)
	}
	forgedTree := strings.TrimSpace(gitIn(s, tree.String(), "mktree"))
	forged := strings.TrimSpace(gitOut(t, s, "commit-tree", forgedTree, "-p", "main^1", "-p", "main^2", "-m", "forged"))
	gitOut(t, s, "update-ref", "refs/heads/forged", forged)
	if out, _, code := runCLI(t, s, "", "merge", "--verify", "forged"); code != exitConflict || !strings.Contains(out, "plan.json: expected ") || !strings.Contains(out, `"forged"`) {
		t.Errorf("verify of a merge with a change beside the resolved conflicts: exit %d: %s", code, out)
	}
	gitOut(t, s, "update-ref", "-d", "refs/heads/forged")
	mustCLI(t, s, "", "set", "plan.json", "x", "1") // unblocked
	if out := gitOut(t, s, "for-each-ref", "refs/aiwg/merge/"); out != "" {
		t.Fatalf("merge ref left after --continue: %s", out)
	}

	// --abort: back to where we were.
	mustCLI(t, s, "", "set", "plan.json", "owner", `"d"`)
	mustCLI(t, s, "", "set", "plan.json", "owner", `"e"`, "--branch", "feat")
	head = gitOut(t, s, "rev-parse", "main")
	if _, _, code := runCLI(t, s, "", "merge", "feat"); code != exitConflict {
		t.Fatal("expected a conflict")
	}
	mustCLI(t, s, "", "merge", "--abort")
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("--abort changed the branch")
	}
	mustCLI(t, s, "", "set", "plan.json", "y", "1")
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

// TestConflictScenariosPerStrategy: what each strategy leaves open.
func TestConflictScenariosPerStrategy(t *testing.T) {
	cases := []struct {
		strategy string
		base     string
		ours     string
		theirs   string
		conflict bool
	}{
		{"conflict", `{"a":1}`, `{"a":2}`, `{"a":3}`, true},
		{"merge-objects", `{"a":1}`, `{"a":2}`, `{"a":3}`, true},
		{"merge-objects", `{"a":1}`, `{"a":2,"b":1}`, `{"a":1,"c":1}`, false},
		{"merge-arrays", `{"a":[1]}`, `{"a":[1,2]}`, `{"a":[1,3]}`, false},
		{"merge-arrays", `{"a":1}`, `{"a":2}`, `{"a":3}`, true},
		{"max", `{"a":1}`, `{"a":"x"}`, `{"a":3}`, true},
		{"max", `{"a":1}`, `{"a":2}`, `{"a":3}`, false},
		{"last-write-wins", `{"a":1}`, `{"a":2}`, `{"a":3}`, false},
		{"first-write-wins", `{"a":1}`, `{"a":2}`, `{"a":3}`, false},
		{"higher-priority-wins", `{"a":1,"priority":"low"}`, `{"a":2,"priority":"low"}`, `{"a":3,"priority":"low"}`, false},
	}
	for _, c := range cases {
		t.Run(c.strategy, func(t *testing.T) {
			s := divergedDocument(t, "d.json", c.base, c.ours, c.theirs)
			_, _, code := runCLI(t, s, "", "merge", "feat", "--strategy", c.strategy)
			if (code == exitConflict) != c.conflict || (code != 0 && code != exitConflict) {
				t.Fatalf("exit %d, conflict expected: %v", code, c.conflict)
			}
			if c.conflict {
				out := mustCLI(t, s, "", "conflicts", "--json")
				if !strings.Contains(out, `"key":"a"`) {
					t.Fatalf("conflicts: %s", out)
				}
				mustCLI(t, s, "", "merge", "--abort")
			}
			gitOut(t, s, "fsck", "--strict", "--no-dangling")
		})
	}
}

func TestBranchCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "a.json", "x", "1")
	mustCLI(t, s, "", "branch", "agents/planner/try-1")
	mustCLI(t, s, "", "branch", "old", "--from", "HEAD~1")
	if _, _, code := runCLI(t, s, "", "branch", "old"); code != exitDomain {
		t.Errorf("creating an existing branch: exit %d", code)
	}
	for _, bad := range []string{"a..b", "a b", "x.lock", "refs/heads/x", "a/.b", "x~1"} {
		if _, _, code := runCLI(t, s, "", "branch", bad); code != exitUsage {
			t.Errorf("branch %q: exit %d, want 2", bad, code)
		}
	}
	out := mustCLI(t, s, "", "branch", "ls", "--json")
	var bs []struct {
		Name string
		Head bool
	}
	if err := json.Unmarshal([]byte(out), &bs); err != nil || len(bs) != 3 || bs[0].Name != "agents/planner/try-1" || !bs[1].Head {
		t.Fatalf("branch ls: %s (%v)", out, err)
	}
	if got := gitOut(t, s, "rev-parse", "old"); got != gitOut(t, s, "rev-parse", "main~1") {
		t.Error("--from ignored")
	}
	mustCLI(t, s, "", "switch", "old")
	if got := gitOut(t, s, "symbolic-ref", "HEAD"); got != "refs/heads/old\n" {
		t.Fatalf("HEAD = %q", got)
	}
	if _, _, code := runCLI(t, s, "", "get", "a.json"); code != exitDomain {
		t.Error("reads do not follow the switched HEAD")
	}
	if _, _, code := runCLI(t, s, "", "branch", "-d", "old"); code != exitDomain {
		t.Error("deleted the HEAD branch")
	}
	mustCLI(t, s, "", "switch", "main")
	mustCLI(t, s, "", "branch", "-d", "old")
	if _, _, code := runCLI(t, s, "", "switch", "old"); code != exitDomain {
		t.Error("switched to a deleted branch")
	}
	// Fast-forward, and --no-ff.
	mustCLI(t, s, "", "set", "a.json", "y", "2", "--branch", "agents/planner/try-1")
	mustCLI(t, s, "", "branch", "copy")
	out = mustCLI(t, s, "", "merge", "agents/planner/try-1", "--json")
	if !strings.Contains(out, `"status":"fast-forward"`) || gitOut(t, s, "rev-parse", "main") != gitOut(t, s, "rev-parse", "agents/planner/try-1") {
		t.Fatalf("fast-forward: %s", out)
	}
	if out := mustCLI(t, s, "", "merge", "agents/planner/try-1", "--json"); !strings.Contains(out, `"status":"up-to-date"`) {
		t.Fatalf("self merge: %s", out)
	}
	out = mustCLI(t, s, "", "merge", "main", "--into", "copy", "--no-ff", "--json")
	if !strings.Contains(out, `"status":"merged"`) || len(strings.Fields(gitOut(t, s, "log", "-1", "--format=%P", "copy"))) != 2 {
		t.Fatalf("--no-ff: %s", out)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}
