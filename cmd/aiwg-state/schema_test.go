package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaCommands: add, ls, a refused write, check and rm, with exit
// codes.
func TestSchemaCommands(t *testing.T) {
	s := newStore(t)
	file := filepath.Join(t.TempDir(), "agent.schema.json")
	os.WriteFile(file, []byte(`{"type":"object","required":["status"],"properties":{"status":{"enum":["idle","busy"]}}}`), 0o644)
	mustCLI(t, s, "", "set", "agents/pulse.json", "status", `"idle"`)
	// A branch from before the schema, with a document it will break.
	mustCLI(t, s, "", "branch", "side")
	mustCLI(t, s, "", "set", "agents/new.json", "status", `"gone"`, "--branch", "side")
	if _, errOut, code := runCLI(t, s, "", "schema", "add", "agent", file); code != exitUsage || !strings.Contains(errOut, "--path") {
		t.Errorf("add without --path: exit %d %q", code, errOut)
	}
	mustCLI(t, s, "", "schema", "add", "agent", file, "--path", "agents/*.json")
	if got := mustCLI(t, s, "", "schema", "ls"); !strings.Contains(got, ".aiwg/schemas/agent.schema.json") || !strings.Contains(got, "agents/*.json") {
		t.Errorf("ls: %q", got)
	}
	if _, errOut, code := runCLI(t, s, "", "set", "agents/pulse.json", "status", `"gone"`); code != exitDomain || !strings.Contains(errOut, "breaks its schema") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("a write that breaks the schema: exit %d %q", code, errOut)
	}
	_, errOut, _ := runCLI(t, s, "", "set", "agents/pulse.json", "status", `"gone"`, "--json")
	if !strings.Contains(errOut, `"field":"status"`) || !strings.Contains(errOut, `"file":"agents/pulse.json"`) {
		t.Errorf("a schema refusal's --json details: %s", errOut)
	}
	if _, errOut, code := runCLI(t, s, `{"type": 7}`, "schema", "add", "bad", "-", "--path", "x/*"); code != exitUsage {
		t.Errorf("a schema that is not one: exit %d %q", code, errOut)
	}
	// A clean merge a schema refuses prints no outcome, only the refusal.
	mustCLI(t, s, "", "set", "other.json", "k", "1")
	if out, errOut, code := runCLI(t, s, "", "merge", "side"); code != exitDomain || out != "" || !strings.Contains(errOut, "agents/new.json breaks its schema") {
		t.Errorf("a merge the schema refuses: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out := mustCLI(t, s, "", "schema", "check", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("check: %q", out)
	}
	// The checks a server runs on a push (policy check runs them here)
	// hold pushed documents to the schemas in force.
	pushed := plainCommit(t, s, "agents/pushed.json", "{\n  \"status\": \"gone\"\n}\n")
	if out, _, code := runCLI(t, s, "", "policy", "check", "main.."+pushed); code != exitDomain || !strings.Contains(out, "agents/pushed.json") || !strings.Contains(out, "breaks its schema") {
		t.Errorf("policy check of a commit breaking a schema: exit %d, %q", code, out)
	}
	// A pushed file of any name a schema rules is checked, and pushed
	// rules that do not parse are refused (they would refuse every later
	// push, the one mending them too).
	mustCLI(t, s, "", "schema", "add", "plain", file, "--path", "plain/*")
	for _, tc := range []struct{ path, body, says string }{
		{"plain/x", "{\n  \"status\": \"gone\"\n}\n", "breaks its schema .aiwg/schemas/plain.schema.json"},
		{".aiwg/schemas.json", "{\n  \"rules\": [\n    {\n      \"paths\": [\n        \"x/*\"\n      ],\n      \"schema\": \"elsewhere.json\"\n    }\n  ]\n}\n", "schemas live in .aiwg/schemas/"},
	} {
		rev := plainCommit(t, s, tc.path, tc.body)
		if out, _, code := runCLI(t, s, "", "policy", "check", "main.."+rev); code != exitDomain || !strings.Contains(out, tc.says) {
			t.Errorf("policy check of a commit writing %s: exit %d, %q", tc.path, code, out)
		}
	}
	mustCLI(t, s, "", "schema", "rm", "agent")
	if _, errOut, code := runCLI(t, s, "", "schema", "rm", "agent"); code != exitDomain {
		t.Errorf("rm twice: exit %d %q", code, errOut)
	}
	// Rules in force that plain git broke check nothing rather than
	// refuse every push, and schema rm --all clears them.
	broken := plainCommit(t, s, ".aiwg/schemas.json", "{\n  \"rules\": \"no\"\n}\n")
	gitOut(t, s, "update-ref", "refs/heads/main", broken)
	next := plainCommit(t, s, "notes/n.json", "{}\n")
	if out, errOut, code := runCLI(t, s, "", "policy", "check", "main.."+next); code != exitOK {
		t.Errorf("a push on top of broken rules: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, s, "", "set", "notes/m.json", "k", "1"); code != exitDomain || !strings.Contains(errOut, "schema rm --all") {
		t.Errorf("a write under broken rules: exit %d %q", code, errOut)
	}
	mustCLI(t, s, "", "schema", "rm", "--all")
	mustCLI(t, s, "", "set", "notes/m.json", "k", "1")
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

// plainCommit makes, with git plumbing alone, a commit on top of main
// that writes body at path, as a plain git user would push it.
func plainCommit(t *testing.T, store, path, body string) string {
	t.Helper()
	blob := strings.TrimSpace(gitIn(store, body, "hash-object", "-w", "--stdin"))
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	var tree []byte
	for _, args := range [][]string{{"read-tree", "main"}, {"update-index", "--add", "--cacheinfo", "100644," + blob + "," + path}, {"write-tree"}} {
		cmd := exec.Command("git", append([]string{"--git-dir", store}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		tree = out
	}
	return strings.TrimSpace(gitOut(t, store, "commit-tree", "-p", "main", "-m", "by hand", strings.TrimSpace(string(tree))))
}
