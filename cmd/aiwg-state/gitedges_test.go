package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A branch that is an alias of another (git symbolic-ref), HEAD on it:
// writes extend the branch it names, reads and --branch see it, the
// branch list shows it.
func TestSymbolicRefBranch(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "d.json", "a", "1")
	mustCLI(t, s, "", "set", "d.json", "b", "2")
	gitOut(t, s, "symbolic-ref", "refs/heads/master", "refs/heads/main")
	gitOut(t, s, "symbolic-ref", "HEAD", "refs/heads/master")
	before := strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	mustCLI(t, s, "", "set", "d.json", "c", "3")
	if p := strings.TrimSpace(gitOut(t, s, "log", "-1", "--format=%P", "main")); p != before {
		t.Fatalf("the write's parent is %q, want %s", p, before)
	}
	if sym := strings.TrimSpace(gitOut(t, s, "symbolic-ref", "refs/heads/master")); sym != "refs/heads/main" {
		t.Fatalf("master is no longer an alias: %q", sym)
	}
	mustCLI(t, s, "", "set", "d.json", "e", "5", "--branch", "master")
	got := mustCLI(t, s, "", "get", "d.json", "--branch", "master")
	want := gitOut(t, s, "show", "main:d.json")
	var g, w any
	json.Unmarshal([]byte(got), &g)
	json.Unmarshal([]byte(want), &w)
	if gj, _ := json.Marshal(g); string(gj) != `{"a":1,"b":2,"c":3,"e":5}` {
		t.Fatalf("get --branch master: %s (git: %s)", got, want)
	}
	var bs []map[string]any
	json.Unmarshal([]byte(mustCLI(t, s, "", "branch", "--json")), &bs)
	found := false
	for _, b := range bs {
		if b["name"] == "master" {
			found = b["alias_of"] == "main" && b["head"] == true
		}
	}
	if !found {
		t.Fatalf("branch list: %v", bs)
	}
	// An alias of a tag is not a branch to write on.
	gitOut(t, s, "tag", "v1", "main")
	gitOut(t, s, "symbolic-ref", "refs/heads/totag", "refs/tags/v1")
	if _, e, code := runCLI(t, s, "", "set", "d.json", "f", "6", "--branch", "totag"); code != exitDomain || !strings.Contains(e, "refs/tags/v1") {
		t.Fatalf("write through an alias of a tag: exit %d: %s", code, e)
	}
	gitOut(t, s, "fsck", "--strict")
}

// HEAD written as "ref:refs/heads/main" (no space), which git reads.
func TestHeadWithoutSpaceReads(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "d.json", "a", "1")
	os.WriteFile(filepath.Join(s, "HEAD"), []byte("ref:refs/heads/main\n"), 0o644)
	if out := mustCLI(t, s, "", "get", "d.json", "a"); strings.TrimSpace(out) != "1" {
		t.Fatalf("get: %q", out)
	}
	mustCLI(t, s, "", "set", "d.json", "a", "2")
}

// Revisions read as git reads them; a tag and a branch of one name are
// refused, naming both; a branch named as a commit id is not made.
func TestRevisionNamesAsGit(t *testing.T) {
	s := newStore(t)
	for _, v := range []string{"1", "2", "3"} {
		mustCLI(t, s, "", "set", "d.json", "k", v)
	}
	id := strings.TrimSpace(gitOut(t, s, "rev-parse", "main~2"))
	if _, e, code := runCLI(t, s, "", "branch", id); code != exitUsage || !strings.Contains(e, "commit id") {
		t.Fatalf("branch %s: exit %d: %s", id, code, e)
	}
	if _, e, code := runCLI(t, s, "", "branch", "ORIG_HEAD"); code != exitUsage || !strings.Contains(e, "ORIG_HEAD") {
		t.Fatalf("branch ORIG_HEAD: exit %d: %s", code, e)
	}
	// One made by git: --at <id> still reads the commit, as git show does.
	gitOut(t, s, "branch", id, "main")
	if out := mustCLI(t, s, "", "get", "d.json", "k", "--at", id); strings.TrimSpace(out) != "1" {
		t.Fatalf("get --at %s: %q, want the commit's 1", id, out)
	}
	gitOut(t, s, "branch", "x", "main~1")
	gitOut(t, s, "tag", "x", "main~2")
	if _, e, code := runCLI(t, s, "", "get", "d.json", "k", "--at", "x"); code != exitDomain || !strings.Contains(e, "refs/tags/x") || !strings.Contains(e, "refs/heads/x") {
		t.Fatalf("get --at x (a tag and a branch): exit %d: %s", code, e)
	}
	if out := mustCLI(t, s, "", "get", "d.json", "k", "--at", "tags/x"); strings.TrimSpace(out) != "1" {
		t.Fatalf("get --at tags/x: %q", out)
	}
}

// A repository extension git would refuse, or one that forbids deleting
// packs, is refused with exit 3 naming it, nothing written.
func TestRepositoryExtensionsRefused(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "d.json", "a", "1")
	head := gitOut(t, s, "rev-parse", "main")
	gitOut(t, s, "config", "core.repositoryformatversion", "1")
	gitOut(t, s, "config", "extensions.frobnicate", "true")
	if _, e, code := runCLI(t, s, "", "get", "d.json"); code != exitDomain || !strings.Contains(e, "extensions.frobnicate") {
		t.Fatalf("unknown extension: exit %d: %s", code, e)
	}
	os.WriteFile(filepath.Join(s, "config"), []byte("[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tpreciousObjects = true\n"), 0o644)
	mustCLI(t, s, "", "get", "d.json")
	for _, args := range [][]string{{"set", "d.json", "b", "2"}, {"gc"}} {
		if _, e, code := runCLI(t, s, "", args...); code != exitDomain || !strings.Contains(e, "preciousObjects") {
			t.Fatalf("%v with preciousObjects: exit %d: %s", args, code, e)
		}
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("the branch moved")
	}
}

// fsck warns (and passes) when git would show another history than the
// store's: replace refs, grafts.
func TestFsckWarnsOfReplacements(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "d.json", "a", "1")
	mustCLI(t, s, "", "set", "d.json", "a", "2")
	if out := mustCLI(t, s, "", "fsck"); strings.Contains(out, "warning") {
		t.Fatalf("fsck of a plain store: %q", out)
	}
	gitOut(t, s, "replace", "main", "main~1")
	os.MkdirAll(filepath.Join(s, "info"), 0o755)
	os.WriteFile(filepath.Join(s, "info", "grafts"), []byte(strings.TrimSpace(gitOut(t, s, "rev-parse", "main~1"))+"\n"), 0o644)
	out := mustCLI(t, s, "", "fsck")
	if !strings.Contains(out, "warning: replacements: refs/replace/") || !strings.Contains(out, "info/grafts") || !strings.Contains(out, "ok: ") {
		t.Fatalf("fsck: %q", out)
	}
	var rep struct {
		OK       bool             `json:"ok"`
		Warnings []map[string]any `json:"warnings"`
	}
	json.Unmarshal([]byte(mustCLI(t, s, "", "fsck", "--json")), &rep)
	if !rep.OK || len(rep.Warnings) != 2 {
		t.Fatalf("fsck --json: %+v", rep)
	}
}

// A pack directory this user may not write: exit 3, one line naming it
// with a hint, nothing moved.
func TestReadOnlyPackDirectoryExitThree(t *testing.T) {
	var prefix []string
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("runs as root, without setpriv to drop to another user")
		}
		prefix = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	s := newStore(t)
	mustCLI(t, s, "", "set", "d.json", "a", "1")
	head := gitOut(t, s, "rev-parse", "main")
	if os.Geteuid() == 0 {
		filepath.Walk(filepath.Dir(s), func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, 65534, 65534) })
		os.Chmod(filepath.Dir(filepath.Dir(s)), 0o755)
		os.Chmod(filepath.Dir(bin), 0o755)
	}
	pack := filepath.Join(s, "objects", "pack")
	os.Chmod(pack, 0o555)
	defer os.Chmod(pack, 0o755)
	args := append(prefix, bin, "set", "d.json", "b", "2", "--store", s)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "HOME=/tmp", "AIWG_AGENT=t")
	out, err := cmd.CombinedOutput()
	ee, _ := err.(*exec.ExitError)
	if ee == nil || ee.ExitCode() != exitDomain || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 ||
		!strings.Contains(string(out), "objects/pack") || !strings.Contains(string(out), "chmod") {
		t.Fatalf("set with a read-only pack directory: %v: %s", err, out)
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("the branch moved")
	}
	cmd = exec.Command(args[0], append(args[1:], "--json")...)
	cmd.Env = append(os.Environ(), "HOME=/tmp", "AIWG_AGENT=t")
	out, _ = cmd.CombinedOutput()
	var e struct {
		Code    int               `json:"code"`
		Details map[string]string `json:"details"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &e)
	if e.Code != exitDomain || e.Details["directory"] != "objects/pack" {
		t.Fatalf("--json: %s", out)
	}
}

// Through an alias, a merge in progress on the branch it names still
// stops writes, and the branch HEAD reaches through the alias is not
// deleted.
func TestAliasKeepsTheNamedBranchsGuards(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "d.json", "a", "1")
	gitOut(t, s, "symbolic-ref", "refs/heads/master", "refs/heads/main")
	gitOut(t, s, "symbolic-ref", "HEAD", "refs/heads/master")
	mustCLI(t, s, "", "branch", "other")
	mustCLI(t, s, "", "set", "d.json", "a", "2", "--branch", "other")
	mustCLI(t, s, "", "set", "d.json", "a", "3", "--branch", "main")
	if _, _, code := runCLI(t, s, "", "merge", "other", "--into", "main"); code != exitConflict {
		t.Fatalf("merge with a conflict: exit %d", code)
	}
	head := gitOut(t, s, "rev-parse", "main")
	if _, e, code := runCLI(t, s, "", "set", "d.json", "b", "1", "--branch", "master"); code == 0 {
		t.Fatalf("a write through the alias during a merge in progress on main was accepted: %s", e)
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("main moved during its merge")
	}
	mustCLI(t, s, "", "merge", "--abort", "--into", "main")
	if _, e, code := runCLI(t, s, "", "branch", "-d", "main", "--force"); code != exitDomain || !strings.Contains(e, "HEAD") {
		t.Fatalf("deleting the branch HEAD reaches through an alias: exit %d: %s", code, e)
	}
}
