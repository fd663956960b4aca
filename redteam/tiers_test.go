package redteam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxPolicy: the rules let every worker write its own directory; the
// sandbox narrows alice to the minimal profile (the frame alone) and bob
// to memory in his own namespace.
const sandboxPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own directory", "roles": ["workers"], "paths": ["agents/{agent}/**", "memory/**"]}
  ],
  "profiles": {"memo": {"memory": ["bob_*"], "documents": {"read": ["**"]}}},
  "sandbox": [{"agents": ["alice"], "profile": "minimal"}, {"agents": ["bob"], "profile": "memo"}]
}`

// memoryRecord is a valid memory record in alice's namespace.
const memoryRecord = `{
  "created_at": "2026-03-01T12:00:00Z",
  "namespace": "alice_ns",
  "payload": {
    "a": 1
  },
  "record_id": "f",
  "record_kind": "fact",
  "updated_at": "2026-03-01T12:00:00Z"
}
`

// commitFilesAs writes files in a plain-git clone as agent (the author, as
// aiwg-state reads it) and commits them.
func commitFilesAs(t *testing.T, clone, agent string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(clone, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, clone, "add", p)
	}
	git(t, clone, "-c", "user.name="+agent, "commit", "-q", "-m", "by hand")
}

// TestPlainGitPushBreakingAProfile: a write the rules allow but the
// agent's sandbox profile does not is refused by the server's hook, when
// pushed with plain git; the refusal names the profile and its rule.
func TestPlainGitPushBreakingAProfile(t *testing.T) {
	s := newServer(t, sandboxPolicy)
	for _, c := range []struct {
		agent string
		files map[string]string
		want  string
	}{
		{"alice", map[string]string{"agents/alice/notes.json": "{\n  \"n\": 1\n}\n"}, `sandbox profile \"minimal\", rule documents.write`},
		{"bob", map[string]string{"memory/alice_ns/fact/f.json": memoryRecord}, `sandbox profile \"memo\", rule memory`},
	} {
		for transport, url := range s.urls(c.agent) {
			t.Run(c.agent+"/"+transport, func(t *testing.T) {
				clone := cloneAs(t, url)
				commitFilesAs(t, clone, c.agent, c.files)
				refused(t, s, clone, url, "HEAD:refs/heads/agents/"+c.agent+"/main", strings.ReplaceAll(c.want, `\"`, `"`))
			})
		}
	}
	// The same write through aiwg-state is refused before any commit.
	alice := agentStore(t, s.as("alice"), "alice")
	head := git(t, alice, "rev-parse", "HEAD")
	r := try(alice, "", "set", "agents/alice/notes.json", "n", "1", "--agent", "alice")
	if r.Code != 3 || !strings.Contains(r.Stderr, `sandbox profile "minimal", rule documents.write`) {
		t.Fatalf("in-process: %+v", r)
	}
	if git(t, alice, "rev-parse", "HEAD") != head {
		t.Fatal("a refused write moved the agent's branch")
	}
}

// TestDisposableTiersAreNeverPushed: the cache and frame stay in the
// store's git directory: a push carries none of them, a clone has none,
// and a commit that carries them by hand is refused by the server.
func TestDisposableTiersAreNeverPushed(t *testing.T) {
	s := newServer(t, "")
	c := s.Coordinator
	runIn(t, c, "", "cache", "set", "secret/warm", `"cached answer"`, "--agent", "conductor")
	runIn(t, c, "", "frame", "set", "scratch", `"frame value"`, "--run", "r1", "--agent", "conductor")
	runIn(t, c, "", "set", "protected/config.json", "mode", `"tight"`, "--agent", "conductor")
	runIn(t, c, "", "push")
	for _, dir := range []string{s.Dir, agentStore(t, s.as("conductor"), "conductor2")} {
		if _, err := os.Stat(filepath.Join(dir, "aiwg", "cache")); !os.IsNotExist(err) {
			t.Errorf("%s has a cache: %v", dir, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "aiwg", "frames")); !os.IsNotExist(err) {
			t.Errorf("%s has frames: %v", dir, err)
		}
		// Not in any object either.
		objs := git(t, dir, "cat-file", "--batch-all-objects", "--batch")
		if strings.Contains(objs, "cached answer") || strings.Contains(objs, "frame value") {
			t.Errorf("%s holds the cache or frame in its objects", dir)
		}
	}
	clone := agentStore(t, s.Daemon, "reader")
	if r := try(clone, "", "cache", "get", "secret/warm"); r.Code != 3 {
		t.Errorf("a clone reads the origin's cache: %+v", r)
	}

	// By hand, with plain git, as an agent the rules let write anything.
	for transport, url := range s.urls("conductor") {
		for _, p := range []string{".aiwg/cache/0123abcd", ".aiwg/frame/r1.json"} {
			t.Run(transport+"/"+p, func(t *testing.T) {
				work := cloneAs(t, url)
				commitFilesAs(t, work, "conductor", map[string]string{p: "{}\n"})
				refused(t, s, work, url, "HEAD:refs/heads/main", "rule tier")
			})
		}
	}
}

// TestReservedTierPathsUnderAnySpelling: the hook refuses the disposable
// tiers' paths as a checkout could see them: another case, a fullwidth
// letter, and a plain file standing where the tier's directory is; the
// in-process guard, the same check, refuses them too.
func TestReservedTierPathsUnderAnySpelling(t *testing.T) {
	s := newServer(t, "")
	variants := map[string]string{
		".aiwg/Frame/x.json":   "{}\n",
		".aiwg/FRAME/y.json":   "{}\n",
		".aiwg/ｆrame/x.json":   "{}\n",
		".AIWG/cache/deadbeef": "{}\n",
		".aiwg/frame":          "not json\n",
	}
	for transport, url := range s.urls("conductor") {
		for p, body := range variants {
			t.Run(transport+"/"+p, func(t *testing.T) {
				work := cloneAs(t, url)
				commitFilesAs(t, work, "conductor", map[string]string{p: body})
				refused(t, s, work, url, "HEAD:refs/heads/main", "rule tier")
			})
		}
	}
	if out := git(t, s.Dir, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Fatal(out)
	}
}
