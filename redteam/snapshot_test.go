package redteam

import (
	"fmt"
	"strings"
	"testing"
)

// snapshotTag makes an annotated tag snapshots/<name> on rev in a
// plain-git clone, tagged by tagger, with msg (default: a snapshot's
// message covering scope) and returns its ref.
func snapshotTag(t *testing.T, clone, tagger, name, rev, msg string, scope ...string) string {
	t.Helper()
	if msg == "" {
		msg = fmt.Sprintf("snapshot %s\n\nSnapshot: snap-0123abcd\nReason: manual\n", name)
		if len(scope) == 0 {
			scope = []string{"."}
		}
		for _, s := range scope {
			msg += "Scope: " + s + "\n"
		}
	}
	tag := "snapshots/" + name
	git(t, clone, "-c", "user.name="+tagger, "-c", "user.email="+tagger+"@agents.invalid", "tag", "-a", "-m", msg, tag, rev)
	return "refs/tags/" + tag
}

// TestSnapshotTagsAreJudgedAsCheckpoints: a snapshot an agent makes with
// aiwg-state reaches the server with push --tags; a tag under snapshots/
// pushed with plain git is taken only when it is a snapshot as aiwg-state
// writes one, tagged by an agent the pusher may act as, covering paths its
// commit has; none is moved or deleted by a push.
func TestSnapshotTagsAreJudgedAsCheckpoints(t *testing.T) {
	s := newServer(t, identityPolicy)
	runIn(t, s.Coordinator, "", "set", "agents/alice/plan.json", "goal", `"ship"`, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	runIn(t, s.Coordinator, "", "snapshot", "create", "before-deploy", "agents/", "protected/config.json", "-m", "all green", "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push", "--tags")
	if out := git(t, s.Dir, "cat-file", "tag", "snapshots/before-deploy"); !strings.Contains(out, "tagger conductor") || !strings.Contains(out, "Scope: agents\nScope: protected/config.json\n") {
		t.Fatalf("the snapshot on the server:\n%s", out)
	}
	// alice restores it in her own clone, as a commit the server takes.
	alice := agentStore(t, s.as("alice"), "alice")
	runIn(t, alice, "", "set", "agents/alice/plan.json", "goal", `"abandon"`, "--agent", "alice")
	runIn(t, alice, "", "snapshot", "restore", "before-deploy", "agents/alice", "--agent", "alice")
	runIn(t, alice, "", "push")
	if out := git(t, s.Dir, "show", "main:agents/alice/plan.json"); !strings.Contains(out, "ship") {
		t.Fatalf("restored and pushed: %s", out)
	}
	if out := git(t, s.Dir, "log", "-1", "--format=%(trailers:key=Operation,valueonly)%(trailers:key=Snapshot,valueonly)", "main"); strings.TrimSpace(out) != "restore\nbefore-deploy" {
		t.Fatalf("the restore's trailers on the server: %q", out)
	}
	// Restoring what she may not write is refused before it is a commit.
	runIn(t, s.Coordinator, "", "pull")
	runIn(t, s.Coordinator, "", "set", "protected/config.json", "mode", `"fast"`, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "push")
	runIn(t, alice, "", "pull", "--agent", "alice")
	head := git(t, alice, "rev-parse", "main")
	if r := try(alice, "", "snapshot", "restore", "before-deploy", "--agent", "alice"); r.Code != 3 || !strings.Contains(r.Stderr, "protected/config.json") {
		t.Fatalf("a restore of what alice may not write: exit %d %s", r.Code, r.Stderr)
	}
	if git(t, alice, "rev-parse", "main") != head {
		t.Fatal("a refused restore moved the branch")
	}

	url := s.as("mallory")
	w := cloneAs(t, url)
	ref := snapshotTag(t, w, "alice", "forged", "HEAD", "")
	refused(t, s, w, url, ref, `rule identity: pusher "mallory" may not act as agent "alice" (the tag's tagger)`)
	git(t, w, "tag", "snapshots/light")
	refused(t, s, w, url, "refs/tags/snapshots/light", "a snapshot is an annotated tag object")
	ref = snapshotTag(t, w, "mallory", "plain", "HEAD", "just a tag")
	refused(t, s, w, url, ref, "not a snapshot as aiwg-state writes one")
	ref = snapshotTag(t, w, "mallory", "extra", "HEAD", "snapshot extra\n\nSnapshot: snap-0123abcd\nReason: manual\nScope: .\nState: state-0123abcd\n")
	refused(t, s, w, url, ref, "not a snapshot as aiwg-state writes one")
	ref = snapshotTag(t, w, "mallory", "settings", "HEAD", "", ".aiwg/policy.json")
	refused(t, s, w, url, ref, "the store's own settings")
	ref = snapshotTag(t, w, "mallory", "ghost", "HEAD", "", "agents/ghost.json")
	refused(t, s, w, url, ref, "the snapshot covers agents/ghost.json, which its commit")
	ref = snapshotTag(t, w, "mallory", "misnamed", "HEAD", "")
	refused(t, s, w, url, "refs/tags/snapshots/misnamed:refs/tags/snapshots/renamed", `is named "snapshots/misnamed", not "snapshots/renamed"`)
	ref = snapshotTag(t, w, "mallory", "a@b", "HEAD", "")
	refused(t, s, w, url, ref, "tags hold checkpoints and snapshots only")
	// mallory's own snapshot is taken, and then never moved or deleted.
	ref = snapshotTag(t, w, "mallory", "mine", "HEAD", "", "agents")
	accepted(t, s, w, url, ref)
	git(t, w, "tag", "-d", "snapshots/mine")
	snapshotTag(t, w, "mallory", "mine", "HEAD~1", "", "protected")
	refused(t, s, w, url, "+"+ref, "a tag (a checkpoint or a snapshot) is never moved")
	refused(t, s, w, url, ":"+ref, "a push may not delete refs")
	fsck(t, s.Dir)
}

// TestTTLFilesThroughTheServer: a time to live an agent gives its own
// document with aiwg-state reaches the server; a time-to-live file for
// another's document, or one that does not read as one, pushed with plain
// git, is refused.
func TestTTLFilesThroughTheServer(t *testing.T) {
	s := newServer(t, identityPolicy)
	alice := agentStore(t, s.as("alice"), "alice")
	runIn(t, alice, "", "set", "agents/alice/cache.json", "token", `"t"`, "--ttl", "1h", "--agent", "alice")
	runIn(t, alice, "", "push")
	if out := git(t, s.Dir, "show", "main:.aiwg/ttl/agents/alice/cache.json"); !strings.Contains(out, `"token"`) {
		t.Fatalf("the ttl file on the server: %s", out)
	}
	url := s.as("mallory")
	w := cloneAs(t, url)
	good := "{\n  \"expires_at\": \"2030-01-01T00:00:00Z\"\n}\n"
	commitFile(t, w, ".aiwg/ttl/agents/alice/cache.json", good, "-c", "user.name=mallory")
	refused(t, s, w, url, "HEAD:refs/heads/main", "agents/alice/cache.json")
	git(t, w, "reset", "-q", "--hard", "origin/main")
	commitFile(t, w, ".aiwg/ttl/agents/mallory/x.json", "{\n  \"expires_at\": \"soon\"\n}\n", "-c", "user.name=mallory")
	refused(t, s, w, url, "HEAD:refs/heads/main", "rule ttl")
	git(t, w, "reset", "-q", "--hard", "origin/main")
	commitFile(t, w, ".aiwg/ttl/agents/mallory/x.json", good, "-c", "user.name=mallory")
	accepted(t, s, w, url, "HEAD:refs/heads/main")
}
