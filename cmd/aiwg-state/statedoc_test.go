package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDocCLI walks the state document's verbs end to end, checking exit codes
// and, after every step, that git finds the store sound.
func TestStateDocCLI(t *testing.T) {
	s := newStore(t)
	step := func(want int, stdin string, args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, s, stdin, args...)
		if code != want {
			t.Fatalf("aiwg-state %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		if code != 0 && (strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aiwg-state: ")) {
			t.Fatalf("aiwg-state %s: error is not one line: %q", strings.Join(args, " "), errOut)
		}
		gitOut(t, s, "fsck", "--strict", "--no-dangling")
		return out
	}
	commits := func() int { return strings.Count(gitOut(t, s, "rev-list", "main"), "\n") }

	step(0, "", "goal", "create", "ship it", "--summary", "release 1.0")
	step(0, "", "goal", "sub", "create", "ship-it", "write docs")
	step(0, "", "goal", "sub", "create", "SHIP-IT", "review")
	before := commits()
	step(3, "", "goal", "create", "Ship It")                      // duplicate
	step(3, "", "goal", "sub", "create", "nope", "x")             // missing goal
	step(2, "", "goal", "create", "goal_2")                       // not a verbiage key
	step(3, "", "event", "add", "SHIP-IT", "NOPE", "--body", "x") // missing sub-goal
	if commits() != before {
		t.Fatal("a refused verb wrote a commit")
	}
	step(0, "", "goal", "status", "ship-it", "active")
	step(0, "", "goal", "note", "ship-it", "waiting", "--sub", "review")

	step(0, "", "event", "add", "ship-it", "write-docs", "--type", "reply", "--body", "draft ready")
	step(0, "", "event", "add", "ship-it", "review", "--type", "reply", "--body", "looks good")
	out := step(0, "", "latest")
	if !strings.Contains(out, "SHIP-IT / REVIEW: event 0 (reply)") || !strings.Contains(out, "looks good") || !strings.Contains(out, "1 more unseen event") {
		t.Fatalf("latest:\n%s", out)
	}
	out = step(0, "", "latest", "--json")
	var lj struct {
		Briefing struct {
			Event struct {
				SubGoal string `json:"sub_goal"`
				Body    string
			}
			Remaining int
		}
		Commit string
	}
	if err := json.Unmarshal([]byte(out), &lj); err != nil || lj.Briefing.Event.SubGoal != "WRITE-DOCS" || lj.Commit == "" {
		t.Fatalf("latest --json: %s (%v)", out, err)
	}
	if got := step(0, "", "state-doc", "get", "GOALS.SHIP-IT.SUB-GOALS.WRITE-DOCS.LAST-SEEN-IDX"); got != "0\n" {
		t.Fatalf("LAST-SEEN-IDX = %q", got)
	}
	before = commits()
	out = step(0, "", "latest")
	if !strings.Contains(out, "no unseen events: 0 thinking, 2 ready") || commits() != before {
		t.Fatalf("roll-up:\n%s (commits %d -> %d)", out, before, commits())
	}

	step(0, "", "request", "ship-it", "review", "check the docs")
	step(4, "", "request", "ship-it", "review", "again")
	out = step(0, "", "latest")
	if !strings.Contains(out, "thinking  SHIP-IT / REVIEW: check the docs") {
		t.Fatalf("roll-up with a request in flight:\n%s", out)
	}
	step(0, "", "request", "ship-it", "review", "--done", "--note", "answered")
	step(0, "", "request", "ship-it", "review", "again")

	// Items at three scopes, slash and dot paths, deep set.
	step(0, "", "item", "set", "alpha/beta", `{"inner": {"leaf": 1}}`)
	step(0, "", "item", "set", "alpha.beta.inner.other", "plain text")
	if got := step(0, "", "item", "get", "ALPHA/BETA/INNER/OTHER", "--raw"); got != "plain text\n" {
		t.Fatalf("item get = %q", got)
	}
	step(3, "", "item", "set", "alpha/beta/inner/leaf/x", "1") // through a scalar
	step(3, "", "item", "get", "nope")
	step(3, "", "item", "del", "nope")
	step(2, "", "item", "set", "bad_key", "1")
	step(2, "", "item", "set", "x", `{"a b": 1, "A-B": 2}`)  // collide after normalization
	step(2, "", "item", "set", "--chat", "c1", "topic", "x") // no project to put the chat in
	step(0, "", "project", "select", "p1", "--title", "Website")
	step(0, "", "item", "set", "--chat", "c1", "topic", `"pricing"`)
	step(0, "", "item", "set", "--project", "p1", "--meta", "owner", `"ops"`)
	if got := step(0, "", "state-doc", "get", "ITEMS.PROJECTS.0.CHATS.0.ITEMS.CONTENT.TOPIC"); got != "\"pricing\"\n" {
		t.Fatalf("chat item = %q", got)
	}
	step(0, "", "item", "del", "--project", "p1", "--meta", "owner")
	step(3, "", "item", "get", "--project", "p1", "--meta", "owner")

	// Shards: inline init, write through, refs as stored, no clobber.
	step(0, "", "state-doc", "set", "GOALS.SHIP-IT.SUB-GOALS.OPS", `ref file://state/OPS/OPS.json {"title": "OPS", "events": []}`)
	step(3, "", "state-doc", "set", "GOALS.SHIP-IT.SUB-GOALS.OTHER", `ref file://state/OPS/OPS.json {}`)
	step(2, "", "state-doc", "set", "GOALS.X", `ref file://../../etc/x.json {}`)
	step(2, "", "state-doc", "set", "GOALS.X", `ref file://my file.json {}`)
	step(0, "", "event", "add", "ship-it", "ops", "--type", "alert", "--body", "disk")
	if got := gitOut(t, s, "show", "--name-only", "--format=", "main"); got != "state/OPS/OPS.json\n" {
		t.Fatalf("event in a shard changed:\n%s", got)
	}
	if got := step(0, "", "state-doc", "get", "GOALS.SHIP-IT.SUB-GOALS.OPS.EVENTS.0.BODY", "--no-resolve"); got != "\"disk\"\n" {
		t.Fatalf("no-resolve inside a shard reads the shard: %q", got)
	}
	if got := step(0, "", "state-doc", "get", "GOALS.SHIP-IT.SUB-GOALS", "--no-resolve"); !strings.Contains(got, `"OPS": "ref file://state/OPS/OPS.json"`) {
		t.Fatalf("no-resolve:\n%s", got)
	}
	if got := step(0, "", "state-doc", "locate", "GOALS.SHIP-IT.SUB-GOALS.OPS.EVENTS.0.BODY"); got != "state/OPS/OPS.json EVENTS.0.BODY\n" {
		t.Fatalf("locate = %q", got)
	}
	step(0, "", "state-doc", "check")

	// doc apply: a patch through the shard, a bad one, a replacement.
	patch := filepath.Join(t.TempDir(), "patch.json")
	os.WriteFile(patch, []byte(`[{"op": "replace", "path": "/GOALS/SHIP-IT/SUB-GOALS/OPS/EVENTS/0/SEEN", "value": true}]`), 0o644)
	step(0, "", "doc", "apply", patch)
	if got := gitOut(t, s, "show", "main:state/OPS/OPS.json"); !strings.Contains(got, `"SEEN": true`) {
		t.Fatalf("patch through a shard:\n%s", got)
	}
	before = commits()
	step(3, `[{"op": "remove", "path": "/ITEMS"}]`, "doc", "apply", "-")
	step(2, `[{"op": "add", "path": "/GOALS/lower", "value": {}}]`, "doc", "apply", "-")
	step(3, `[{"op": "test", "path": "/GOALS/SHIP-IT/STATUS", "value": "nope"}]`, "doc", "apply", "-")
	if commits() != before {
		t.Fatal("a refused apply wrote a commit")
	}
	step(0, "", "doc", "reset", "--yes")
	if got := step(0, "", "state-doc", "get"); got != "{\n  \"ACTIVE-PROJECT\": {\n    \"PROJECT-ID\": null,\n    \"TITLE\": null\n  },\n  \"GOALS\": {},\n  \"ITEMS\": {\n    \"GLOBAL\": {\n      \"CONTENT\": {},\n      \"META\": {}\n    },\n    \"PROJECTS\": []\n  }\n}\n" {
		t.Fatalf("after reset:\n%s", got)
	}
	// The unmounted shard is still there.
	gitOut(t, s, "cat-file", "-e", "main:state/OPS/OPS.json")
}

func TestStateDocInvalidFromGitExits3(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "goal", "create", "g")
	// A generic set cannot break it...
	if _, _, code := runCLI(t, s, "", "set", "state/state.json", "GOALS.bad_key", "{}"); code != exitUsage {
		t.Fatalf("generic set of a bad key: exit %d", code)
	}
	// ...but plain git can: reads then exit 3.
	blob := strings.TrimSpace(gitStdin(t, s, `{"GOALS": {"g": {}}}`, "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitStdin(t, s, "100644 blob "+blob+"\tstate.json\n", "mktree"))
	root := strings.TrimSpace(gitStdin(t, s, "040000 tree "+tree+"\tstate\n", "mktree"))
	commit := strings.TrimSpace(gitStdin(t, s, "plain\n", "commit-tree", root, "-p", "main"))
	gitOut(t, s, "update-ref", "refs/heads/main", commit)
	for _, args := range [][]string{{"state-doc", "get"}, {"latest"}, {"item", "get", "x"}, {"state-doc", "check"}, {"goal", "create", "h"}} {
		if _, errOut, code := runCLI(t, s, "", args...); code != exitDomain || !strings.Contains(errOut, "invalid state") {
			t.Errorf("%v on an invalid document: exit %d %s", args, code, errOut)
		}
	}
	// doc reset mends it: the one write that needs no valid document.
	mustCLI(t, s, "", "doc", "reset", "--yes")
	mustCLI(t, s, "", "state-doc", "check")
	mustCLI(t, s, "", "goal", "create", "h")
}

func gitStdin(t *testing.T, store, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", store}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@x", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestConcurrentNotesBothSurviveAMerge: two branches that each append a
// note to one goal merge to both notes (NOTES merge as arrays by default,
// as EVENTS do); before, the last writer's list won and the other's note
// was dropped without a conflict.
func TestConcurrentNotesBothSurviveAMerge(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "goal", "create", "ship")
	mustCLI(t, s, "", "branch", "x")
	mustCLI(t, s, "", "goal", "note", "SHIP", "from x", "--branch", "x")
	mustCLI(t, s, "", "goal", "note", "SHIP", "from main")
	mustCLI(t, s, "", "merge", "x")
	got := mustCLI(t, s, "", "state-doc", "get", "GOALS.SHIP.NOTES", "--json")
	for _, note := range []string{"from x", "from main"} {
		if !strings.Contains(got, note) {
			t.Errorf("NOTES after the merge lack %q: %s", note, got)
		}
	}
}

// TestRuledDocumentCannotMoveOutOfItsRules: mv of the state document to a
// path the rules do not cover is refused (exit 3) and changes nothing.
func TestRuledDocumentCannotMoveOutOfItsRules(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "goal", "create", "ship")
	head := gitOut(t, s, "rev-parse", "main")
	if _, errOut, code := runCLI(t, s, "", "mv", "state/state.json", "elsewhere.json"); code != exitDomain || !strings.Contains(errOut, "verbiage-ruled") {
		t.Fatalf("mv of the state document out of the rules: exit %d, %s", code, errOut)
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("the refused move was committed")
	}
}
