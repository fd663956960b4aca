package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileIgnoresTheBranchOpened: an agent's profile is that of the
// policy on the store's default branch, whatever branch it opens (-b), the
// revision it reads (--at), or a branch it made from a commit older than
// the policy; it may not move HEAD to such a branch, and with no readable
// policy in force it is refused, not left unbounded.
func TestProfileIgnoresTheBranchOpened(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "public/a.json", "n", "1", "--agent", "admin")
	mustCLI(t, s, "", "set", "secret/k.json", "k", `"TOPSECRET"`, "--agent", "admin")
	prePolicy := strings.TrimSpace(gitOut(t, s, "rev-parse", "HEAD"))
	mustCLI(t, s, sandboxPolicyCLI, "policy", "set", "-", "--agent", "admin")
	mustCLI(t, s, "", "branch", "agents/scraper-1/old", "--from", prePolicy)
	mainHead, oldHead := gitOut(t, s, "rev-parse", "main"), gitOut(t, s, "rev-parse", "agents/scraper-1/old")
	t.Setenv("AIWG_AGENT", "scraper-1")
	refused := func(says string, args ...string) {
		t.Helper()
		if out, errOut, code := runCLI(t, s, "", args...); code != exitDomain || !strings.Contains(errOut, says) {
			t.Errorf("%v: exit %d %q %q; want exit 3 saying %q", args, code, out, errOut, says)
		}
	}
	big := `"` + strings.Repeat("x", 100) + `"`
	for _, b := range []string{"nosuch", "agents/scraper-1/old"} {
		refused("documents.read", "get", "secret/k.json", "-b", b, "--at", "main")
		refused("documents.read", "get", "secret/k.json", "-b", b)
		refused("documents.read", "log", "secret/k.json", "-b", b, "--at", "main")
		refused("cache.max_bytes", "cache", "set", "big", big, "-b", b)
		if got := mustCLI(t, s, "", "ls", "-b", b, "--at", "main", "secret"); strings.Contains(got, "secret") {
			t.Errorf("ls -b %s lists the secret: %s", b, got)
		}
	}
	// A write on the pre-policy branch meets the profile in force.
	refused("documents.write", "set", "secret/k.json", "k", `"mine"`, "-b", "agents/scraper-1/old")
	refused("documents.write", "set", "public/a.json", "n", "99", "-b", "agents/scraper-1/old")
	mustCLI(t, s, "", "set", "agents/scraper-1/x.json", "n", "1", "-b", "agents/scraper-1/old")
	// Moving HEAD there would move the policy in force for everyone.
	refused("would change the access policy in force", "switch", "agents/scraper-1/old")
	if got := gitOut(t, s, "symbolic-ref", "HEAD"); got != "refs/heads/main\n" {
		t.Fatalf("HEAD moved: %s", got)
	}
	if gitOut(t, s, "rev-parse", "main") != mainHead || gitOut(t, s, "rev-parse", "agents/scraper-1/old^") != oldHead {
		t.Error("a refused write moved a branch")
	}
	// No readable policy in force: a named agent is refused.
	gitOut(t, s, "symbolic-ref", "HEAD", "refs/heads/unborn")
	gitOut(t, s, "branch", "-m", "main", "trunk")
	refused("access policy in force cannot be read", "get", "public/a.json", "-b", "trunk")
	refused("access policy in force cannot be read", "cache", "set", "k", "1")
	t.Setenv("AIWG_AGENT", "")
	mustCLI(t, s, "", "get", "secret/k.json", "-b", "trunk")
	gitOut(t, s, "branch", "-m", "trunk", "main")
	gitOut(t, s, "symbolic-ref", "HEAD", "refs/heads/main")
	// Even an agent the rules let write elsewhere needs the right to change
	// the policy; a person with the store at hand (no agent named) may.
	t.Setenv("AIWG_AGENT", "admin")
	refused("would change the access policy in force", "switch", "agents/scraper-1/old")
	t.Setenv("AIWG_AGENT", "")
	mustCLI(t, s, "", "switch", "agents/scraper-1/old")
	mustCLI(t, s, "", "switch", "main")
	fsck(t, s)
}

// TestServedProfileIgnoresTheBranchOpened: the same through serve.
func TestServedProfileIgnoresTheBranchOpened(t *testing.T) {
	dir, store := project(t)
	work := filepath.Join(dir, "work", "sub")
	mustCLI(t, store, "", "set", "secret/k.json", "k", `"TOPSECRET"`, "--agent", "admin")
	prePolicy := strings.TrimSpace(gitOut(t, store, "rev-parse", "HEAD"))
	mustCLI(t, store, sandboxPolicyCLI, "policy", "set", "-", "--agent", "admin")
	mustCLI(t, store, "", "branch", "old", "--from", prePolicy)
	startServer(t, bin, store)
	env := []string{"AIWG_AGENT=scraper-1", "AIWG_STATE_STORE="}
	for _, b := range []string{"nosuch", "old"} {
		if r := execIn(t, clientBin, work, "", env, "get", "secret/k.json", "-b", b, "--at", "main"); r.code != exitDomain || strings.Contains(r.stdout, "TOPSECRET") {
			t.Errorf("served get -b %s: %+v", b, r)
		}
	}
	if r := execIn(t, clientBin, work, "", env, "set", "secret/k.json", "k", "1", "-b", "old"); r.code != exitDomain || !strings.Contains(r.stderr, "documents.write") {
		t.Errorf("served write on a pre-policy branch: %+v", r)
	}
	fsck(t, store)
}
