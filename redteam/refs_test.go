package redteam

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
)

// emptyTree is git's empty tree (SHA-1).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// TestUnbornHeadBranchIsNotMadeDefault: a server whose HEAD names an
// unborn master (plain git init --bare) reads main's policy; a push that
// gives master a first commit with no policy in it would make master the
// default branch, and the server open. It is refused, and main stays the
// branch the first-parent rule protects.
func TestUnbornHeadBranchIsNotMadeDefault(t *testing.T) {
	s := newServer(t, "")
	git(t, s.Dir, "symbolic-ref", "HEAD", "refs/heads/master")
	for name, url := range s.urls("mallory") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			root := strings.TrimSpace(git(t, w, "commit-tree", emptyTree, "-m", "root"))
			refused(t, s, w, url, root+":refs/heads/master", "the server's HEAD names master, which has no commit yet, and the default branch is main")
			// With a commit main has, too.
			refused(t, s, w, url, "origin/main:refs/heads/master", "which has no commit yet")
			// main is still the default branch: it moves only along its
			// first-parent chain.
			side := strings.TrimSpace(git(t, w, "commit-tree", "origin/main~1^{tree}", "-p", "origin/main~1", "-m", "side"))
			m := strings.TrimSpace(git(t, w, "commit-tree", "origin/main^{tree}", "-p", side, "-p", "origin/main", "-m", "merge"))
			refused(t, s, w, url, m+":refs/heads/main", "main moves only by commits whose first parent chain holds its head")
		})
	}
	if head := strings.TrimSpace(git(t, s.Dir, "symbolic-ref", "HEAD")); head != "refs/heads/master" {
		t.Fatalf("HEAD = %s", head)
	}
}

// TestInstallPointsHeadAtMain: hooks install on a plain git init --bare
// server points HEAD at main, where a store pushes; git clone then checks
// out main.
func TestInstallPointsHeadAtMain(t *testing.T) {
	root := t.TempDir()
	dir := gitserver.Bare(t, root, "plain.git")
	git(t, dir, "symbolic-ref", "HEAD", "refs/heads/master")
	run(t, "", "hooks", "install", "--server", dir, "--binary", bin)
	if head := strings.TrimSpace(git(t, dir, "symbolic-ref", "HEAD")); head != "refs/heads/main" {
		t.Fatalf("HEAD after hooks install = %s, want refs/heads/main", head)
	}
	st := filepath.Join(t.TempDir(), "st.git")
	run(t, "", "init", "--store", st)
	runIn(t, st, teamPolicy, "policy", "set", "-", "--agent", "conductor")
	runIn(t, st, "", "remote", "add", "origin", dir)
	runIn(t, st, "", "push")
	w := cloneAs(t, dir)
	if b := strings.TrimSpace(git(t, w, "symbolic-ref", "--short", "HEAD")); b != "main" {
		t.Fatalf("a clone checks out %s", b)
	}
	fsck(t, dir)
}

// TestRefNamesMeanOneRef: no branch or tag is named HEAD or refs/…, which
// git reads as other refs, and no branch and tag share a name, which git
// log would read as one of them.
func TestRefNamesMeanOneRef(t *testing.T) {
	s := newServer(t, "")
	for name, url := range s.urls("mallory") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			refused(t, s, w, url, "HEAD:refs/tags/HEAD", "no branch or tag is named HEAD")
			refused(t, s, w, url, "HEAD:refs/heads/HEAD", "no branch or tag is named HEAD")
			refused(t, s, w, url, "HEAD:refs/heads/refs/heads/main", "no branch or tag is named refs/heads/main")
			refused(t, s, w, url, "HEAD~1:refs/tags/main", "the server has a branch named main (refs/heads/main)")
		})
	}
}
