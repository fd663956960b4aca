package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSnapshotCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "put", "tasks/t1.json", `{"done": false}`, "--agent", "a")
	mustCLI(t, s, "", "put", "plan.json", `{"goal": "ship"}`, "--agent", "a")
	out := mustCLI(t, s, "", "snapshot", "create", "s1", "tasks/", "plan.json", "-m", "all green", "--reason", "recovery", "--agent", "a", "--json")
	var created struct {
		ID, Name, Agent, Reason, Commit string
		Scope                           []string
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Name != "s1" || created.Reason != "recovery" || strings.Join(created.Scope, ",") != "plan.json,tasks" {
		t.Fatalf("create --json: %s %v", out, err)
	}
	if out := mustCLI(t, s, "", "snapshot", "ls"); !strings.Contains(out, created.ID+"  s1 ") || !strings.Contains(out, "recovery") {
		t.Fatalf("ls: %s", out)
	}
	if out := mustCLI(t, s, "", "snapshot", "show", "s1"); !strings.Contains(out, "all green") || !strings.Contains(out, "2 files:\n  plan.json\n  tasks/t1.json\n") {
		t.Fatalf("show: %s", out)
	}
	mustCLI(t, s, "", "set", "tasks/t1.json", "done", "true", "--agent", "a")
	mustCLI(t, s, "", "put", "tasks/t2.json", `{}`, "--agent", "a")
	if out := mustCLI(t, s, "", "snapshot", "diff", "s1", "--format", "json"); !strings.Contains(out, `"file":"tasks/t1.json","status":"modified"`) || !strings.Contains(out, `"file":"tasks/t2.json","status":"added"`) {
		t.Fatalf("diff: %s", out)
	}
	if out := mustCLI(t, s, "", "snapshot", "diff", "s1", "HEAD~1", "--format", "json"); strings.Contains(out, "t2.json") {
		t.Fatalf("diff to HEAD~1: %s", out)
	}
	out = mustCLI(t, s, "", "snapshot", "restore", "s1", "--agent", "b")
	if !strings.Contains(out, "restore snapshot s1 ("+created.ID+") (2 files)") {
		t.Fatalf("restore: %s", out)
	}
	if got := gitOut(t, s, "log", "-1", "--format=%an %(trailers:key=Operation,valueonly,separator=%x2C) %(trailers:key=Snapshot,valueonly)"); strings.TrimSpace(got) != "b restore s1" {
		t.Fatalf("restore commit: %q", got)
	}
	if out := mustCLI(t, s, "", "log", "--op", "restore"); strings.Count(out, "\n") != 1 {
		t.Fatalf("log --op restore: %q", out)
	}
	if out := mustCLI(t, s, "", "snapshot", "restore", "s1", "--agent", "b"); !strings.Contains(out, "no change") {
		t.Fatalf("restore again: %s", out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"snapshot", "create", "s1", "--agent", "a"}, 3, "snapshot s1 exists"},
		{[]string{"snapshot", "create", "s2", "nope.json", "--agent", "a"}, 3, "nope.json: not in the store"},
		{[]string{"snapshot", "create", "s2", ".aiwg/store.json", "--agent", "a"}, 2, "the store's own settings"},
		{[]string{"snapshot", "create", "a/b", "--agent", "a"}, 2, "snapshot name"},
		{[]string{"snapshot", "create", "s2", "--reason", "whim", "--agent", "a"}, 2, "manual, scheduled or recovery"},
		{[]string{"snapshot", "show", "nope"}, 3, "no snapshot nope (aiwg-state snapshot ls lists them"},
		{[]string{"snapshot", "restore", "s1", "other.json", "--agent", "a"}, 2, "does not cover other.json"},
		{[]string{"snapshot", "restore", "s1", "", "--agent", "a"}, 2, "an empty PATH"},
		{[]string{"snapshot", "prune"}, 2, "--keep N, --older-than D"},
		{[]string{"snapshot", "prune", "--keep", "-1"}, 2, "keep -1"},
	} {
		_, errOut, code := runCLI(t, s, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, errOut, c.code, c.want)
		}
	}
	mustCLI(t, s, "", "snapshot", "create", "s2", "--agent", "a")
	if out := mustCLI(t, s, "", "snapshot", "create", "s0", "tasks", "--at", "HEAD~3", "--agent", "a", "--json"); !strings.Contains(out, strings.TrimSpace(gitOut(t, s, "rev-parse", "HEAD~3"))) {
		t.Fatalf("create --at HEAD~3: %s", out)
	}
	gitOut(t, s, "tag", "-d", "snapshots/s0")
	if out := mustCLI(t, s, "", "snapshot", "prune", "--keep", "1", "--json"); !strings.Contains(out, `"name":"s1"`) || strings.Contains(out, `"name":"s2"`) {
		t.Fatalf("prune: %s", out)
	}
	if out := gitOut(t, s, "tag", "-l"); out != "snapshots/s2\n" {
		t.Fatalf("tags: %q", out)
	}
	gitOut(t, s, "fsck", "--strict")
}
