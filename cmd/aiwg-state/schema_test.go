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
	blob := strings.TrimSpace(gitIn(s, "{\n  \"status\": \"gone\"\n}\n", "hash-object", "-w", "--stdin"))
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	for _, args := range [][]string{{"read-tree", "main"}, {"update-index", "--add", "--cacheinfo", "100644," + blob + ",agents/pushed.json"}} {
		cmd := exec.Command("git", append([]string{"--git-dir", s}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	cmd := exec.Command("git", "--git-dir", s, "write-tree")
	cmd.Env = env
	tree, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pushed := strings.TrimSpace(gitOut(t, s, "commit-tree", "-p", "main", "-m", "by hand", strings.TrimSpace(string(tree))))
	gitOut(t, s, "update-ref", "refs/heads/pushed", pushed)
	if out, _, code := runCLI(t, s, "", "policy", "check", "main..pushed"); code != exitDomain || !strings.Contains(out, "agents/pushed.json") || !strings.Contains(out, "breaks its schema") {
		t.Errorf("policy check of a commit breaking a schema: exit %d, %q", code, out)
	}
	mustCLI(t, s, "", "schema", "rm", "agent")
	if _, errOut, code := runCLI(t, s, "", "schema", "rm", "agent"); code != exitDomain {
		t.Errorf("rm twice: exit %d %q", code, errOut)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}
