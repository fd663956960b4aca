package redteam

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/signtest"
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
			refused(t, s, w, url, "HEAD~1:refs/tags/main", "the server has a branch named main (refs/heads/main)")
		})
	}
}

// checkpointTag writes, in a plain-git clone, an annotated tag as a
// checkpoint of state named name on rev, with tagger as its tagger; the
// message is a checkpoint's unless msg is given.
func checkpointTag(t *testing.T, clone, tagger, state, name, rev, msg string) string {
	t.Helper()
	if msg == "" {
		msg = fmt.Sprintf("checkpoint %s of %s\n\nCheckpoint: ckpt-0123abcd\nState: %s\n", name, state, state)
	}
	tag := "checkpoints/" + state + "/" + name
	git(t, clone, "-c", "user.name="+tagger, "-c", "user.email="+tagger+"@agents.invalid", "tag", "-a", "-m", msg, tag, rev)
	return "refs/tags/" + tag
}

// TestTagsAreCheckpoints: tags hold checkpoints, as aiwg-state writes
// them, made by an agent the pusher may act as; a state keeps at most
// 100 on the server; no ref is named HEAD, and no branch and tag share a
// name.
func TestTagsAreCheckpoints(t *testing.T) {
	s := newServer(t, identityPolicy)
	state := newStateIn(t, s.Coordinator, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	runIn(t, s.Coordinator, "", "checkpoint", "create", "approved", "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push", "--tags")
	if out := git(t, s.Dir, "tag", "-l"); !strings.Contains(out, "checkpoints/"+state+"/approved") {
		t.Fatalf("the checkpoint did not reach the server: %q", out)
	}

	url := s.as("mallory")
	w := cloneAs(t, url)
	// Another agent as the tagger.
	ref := checkpointTag(t, w, "alice", state, "approved2", "HEAD", "")
	refused(t, s, w, url, ref, `rule identity: pusher "mallory" may not act as agent "alice" (the tag's tagger)`)
	// Tags that are no checkpoints.
	git(t, w, "tag", "v1")
	refused(t, s, w, url, "refs/tags/v1", "tags hold checkpoints and snapshots only")
	git(t, w, "tag", "checkpoints/"+state+"/light")
	refused(t, s, w, url, "refs/tags/checkpoints/"+state+"/light", "a checkpoint is an annotated tag object")
	ref = checkpointTag(t, w, "mallory", state, "plain", "HEAD", "just a tag")
	refused(t, s, w, url, ref, "not a checkpoint of "+state)
	ref = checkpointTag(t, w, "mallory", state, "elsewhere", "HEAD", "checkpoint x\n\nCheckpoint: ckpt-0123abcd\nState: state-99999999\n")
	refused(t, s, w, url, ref, "not a checkpoint of "+state)
	// A tag object whose name is not its ref's.
	ref = checkpointTag(t, w, "mallory", state, "named", "HEAD", "")
	refused(t, s, w, url, "refs/tags/checkpoints/"+state+"/named:refs/tags/checkpoints/"+state+"/renamed", `is named "checkpoints/`+state+`/named", not "checkpoints/`+state+`/renamed"`)
	// A branch of a checkpoint's name, a checkpoint of a branch's, and
	// both in one push.
	refused(t, s, w, url, "HEAD:refs/heads/checkpoints/"+state+"/approved", "the server has a tag named checkpoints/"+state+"/approved")
	accepted(t, s, w, url, "HEAD:refs/heads/checkpoints/"+state+"/named")
	refused(t, s, w, url, ref, "the server has a branch named checkpoints/"+state+"/named")
	ref = checkpointTag(t, w, "mallory", state, "twice", "HEAD", "")
	before := s.refs(t)
	if out, err := gitTry(w, "", "push", url, ref, "HEAD:refs/heads/checkpoints/"+state+"/twice"); err == nil || !strings.Contains(out, "the push also creates a branch named checkpoints/"+state+"/twice") {
		t.Fatalf("a branch and a tag of one name in one push: %v\n%s", err, out)
	}
	if s.refs(t) != before {
		t.Fatal("a refused push moved the server's refs")
	}
	git(t, w, "tag", "-d", "checkpoints/"+state+"/twice")

	// mallory's own checkpoints are taken up to the state's limit with
	// those the server has.
	var refs []string
	for i := 0; i < 100; i++ {
		refs = append(refs, checkpointTag(t, w, "mallory", state, fmt.Sprintf("c%03d", i), "HEAD", ""))
	}
	before = s.refs(t)
	out, err := gitTry(w, "", append([]string{"push", url}, refs...)...)
	if err == nil || !strings.Contains(out, "rule limit: "+state+" has 100 checkpoints on the server and earlier in this push, the limit is 100") {
		t.Fatalf("101 checkpoints of one state: %v\n%s", err, out)
	}
	if s.refs(t) != before {
		t.Fatal("a refused push moved the server's refs")
	}
	accepted(t, s, w, url, refs[0])
	// state init made one, and the conductor another.
	n := 1 + 100 - len(strings.Fields(git(t, s.Dir, "tag", "-l", "checkpoints/"+state+"/*")))
	out, err = gitTry(w, "", append([]string{"push", url}, refs[1:n]...)...)
	if err != nil {
		t.Fatalf("checkpoints up to the limit: %v\n%s", err, out)
	}
	refused(t, s, w, url, refs[n], "rule limit: "+state+" has 100 checkpoints on the server, the limit is 100")
}

// TestSignedCheckpointsWhereSignaturesAreRequired: a worker that must sign
// signs its checkpoints too; aiwg-state does, and the server takes them;
// an unsigned tag, or one signed with another agent's key, is refused.
func TestSignedCheckpointsWhereSignaturesAreRequired(t *testing.T) {
	s, keys := signedTeam(t)
	state := newStateIn(t, s.Coordinator, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	st := agentStore(t, s.as("alice"), "alice")
	git(t, st, "config", "aiwg.alice.signingKey", keys["alice"].Path)
	runIn(t, st, "", "checkpoint", "create", "mine", "--state", state, "--agent", "alice")
	runIn(t, st, "", "push", "--tags")
	if out := git(t, s.Dir, "cat-file", "tag", "refs/tags/checkpoints/"+state+"/mine"); !strings.Contains(out, "-----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("the server's checkpoint is not signed:\n%s", out)
	}
	url := s.as("alice")
	w := cloneAs(t, url)
	ref := checkpointTag(t, w, "alice", state, "unsigned", "HEAD", "")
	refused(t, s, w, url, ref, `rule signed: the policy requires agent "alice"'s tags to be signed`)
	signtest.NeedSSHKeygen(t)
	tag := "checkpoints/" + state + "/bobs"
	msg := fmt.Sprintf("checkpoint bobs of %s\n\nCheckpoint: ckpt-0123abcd\nState: %s\n", state, state)
	git(t, w, "-c", "user.name=alice", "-c", "gpg.format=ssh", "-c", "user.signingKey="+keys["bob"].Path, "tag", "-s", "-m", msg, tag, "HEAD")
	refused(t, s, w, url, "refs/tags/"+tag, `the key of "bob", not of "alice"`)
	os.Remove(filepath.Join(w, ".git", "refs", "tags", tag)) // keep the clone's tags its own
}
