package redteam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/internal/testutil"
)

// signedTeam is teamPolicy with signatures required of the workers,
// each with its own key.
func signedTeam(t *testing.T) (*server, map[string]signtest.Key) {
	t.Helper()
	dir := t.TempDir()
	keys := map[string]signtest.Key{}
	for _, a := range []string{"alice", "bob"} {
		keys[a] = signtest.NewKey(t, dir, a)
	}
	policy := `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob"]},
  "require_signed": ["role:workers"],
  "signers": {"alice": ["` + keys["alice"].Public + `"], "bob": ["` + keys["bob"].Public + `"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own directory", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`
	return newServer(t, policy), keys
}

// commitAs makes a commit in a plain-git clone as agent, signed with key
// when it has a path (git's own SSH signing), and returns its id.
func commitAs(t *testing.T, clone, agent string, key signtest.Key, file, body string) string {
	t.Helper()
	path := filepath.Join(clone, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, clone, "add", file)
	args := []string{"-c", "user.name=" + agent, "-c", "user.email=" + agent + "@agents.invalid"}
	if key.Path != "" {
		args = append(args, "-c", "gpg.format=ssh", "-c", "user.signingKey="+key.Path, "commit", "-S")
	} else {
		args = append(args, "commit", "--no-gpg-sign")
	}
	git(t, clone, append(args, "-qm", "write "+file)...)
	return strings.TrimSpace(git(t, clone, "rev-parse", "HEAD"))
}

// policyCheckRefuses runs `policy check` on a clone's new commits and
// asserts exit 3 naming want.
func policyCheckRefuses(t *testing.T, clone, want string) {
	t.Helper()
	r := try(clone, "", "policy", "check", "origin/main..HEAD")
	if r.Code != 3 || !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "rule signed") {
		t.Fatalf("policy check: exit %d, want 3 naming %q:\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
}

// TestUnsignedCommitIsRefusedWhereSignaturesAreRequired: a worker the
// policy requires to sign pushes an unsigned commit with plain git (it
// writes only its own directory: the signature is all that is missing).
// And aiwg-state refuses to make one: without a key configured, the
// worker's write fails in-process, exit 3, its store unmoved.
func TestUnsignedCommitIsRefusedWhereSignaturesAreRequired(t *testing.T) {
	s, _ := signedTeam(t)
	for name, url := range s.urls("alice") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			commitAs(t, w, "alice", signtest.Key{}, "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
			refused(t, s, w, url, "HEAD:refs/heads/main", `the policy requires agent "alice"'s commits to be signed; this one is not signed`)
			policyCheckRefuses(t, w, "not signed")
		})
	}
	store := agentStore(t, s.as("alice"), "alice")
	before := git(t, store, "rev-parse", "main")
	r := try(store, "", "set", "agents/alice/a.json", "v", "1", "--agent", "alice")
	if r.Code != 3 || !strings.Contains(r.Stderr, `requires agent "alice"'s commits to be signed`) {
		t.Fatalf("unsigned local write: exit %d: %s", r.Code, r.Stderr)
	}
	if after := git(t, store, "rev-parse", "main"); after != before {
		t.Fatal("a refused write moved the agent's store")
	}
	fsck(t, store)

	// The same commit made with git plumbing in the agent's own store and
	// pushed by aiwg-state: the server refuses it, push exits 3 saying
	// why, and the server does not move.
	c := plumbingCommit(t, store, "alice", "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
	git(t, store, "update-ref", "refs/heads/main", c)
	serverBefore := s.refs(t)
	r = try(store, "", "push")
	if r.Code != 3 || !strings.Contains(r.Stderr, "not signed") {
		t.Fatalf("aiwg-state push of an unsigned commit: exit %d: %s%s", r.Code, r.Stderr, r.Stdout)
	}
	if s.refs(t) != serverBefore {
		t.Fatal("a refused push moved the server's refs")
	}
	fsck(t, s.Dir)
}

// TestCommitSignedWithAnotherAgentsKeyIsRefused: mallory has bob's key
// (or bob signs as alice): a commit authored as alice, validly signed
// with bob's key, is refused as bob's signature, not alice's. aiwg-state
// refuses to sign alice's write with a key not hers.
func TestCommitSignedWithAnotherAgentsKeyIsRefused(t *testing.T) {
	signtest.NeedSSHKeygen(t) // the attacker's git signs with it
	s, keys := signedTeam(t)
	for name, url := range s.urls("alice") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			commitAs(t, w, "alice", keys["bob"], "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
			refused(t, s, w, url, "HEAD:refs/heads/main", `the key of "bob", not of "alice"`)
			policyCheckRefuses(t, w, `the key of "bob"`)
		})
	}
	// A key the policy lists for no one.
	w := cloneAs(t, s.as("alice"))
	stranger := signtest.NewKey(t, t.TempDir(), "stranger")
	commitAs(t, w, "alice", stranger, "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
	refused(t, s, w, s.as("alice"), "HEAD:refs/heads/main", `which the policy does not list for "alice"`)

	store := agentStore(t, s.as("alice"), "alice")
	before := git(t, store, "rev-parse", "main")
	r := try(store, "", "set", "agents/alice/a.json", "v", "1", "--agent", "alice", "--signing-key", keys["bob"].Path)
	if r.Code != 3 || !strings.Contains(r.Stderr, `is not one the policy lists for agent "alice"`) {
		t.Fatalf("write signed with bob's key: exit %d: %s", r.Code, r.Stderr)
	}
	if after := git(t, store, "rev-parse", "main"); after != before {
		t.Fatal("a refused write moved the agent's store")
	}
}

// TestTamperedSignedCommitIsRefused: alice signs a write properly; the
// commit is then changed (its message here; the tree alike) keeping the
// signature, and pushed. The signature no longer covers it.
func TestTamperedSignedCommitIsRefused(t *testing.T) {
	s, keys := signedTeam(t)
	store := agentStore(t, s.as("alice"), "alice")
	git(t, store, "config", "aiwg.alice.signingKey", keys["alice"].Path)
	runIn(t, store, "", "set", "agents/alice/a.json", "v", "1", "--agent", "alice")
	body := git(t, store, "cat-file", "commit", "HEAD")
	if !strings.Contains(body, "gpgsig -----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("not signed:\n%s", body)
	}
	forged := strings.Replace(body, "create agents/alice/a.json#v", "create agents/alice/a.json#w", 1)
	if forged == body {
		t.Fatalf("nothing to tamper with:\n%s", body)
	}
	h, err := gitTry(store, forged, "hash-object", "-t", "commit", "-w", "--stdin")
	if err != nil {
		t.Fatalf("hash-object: %v %s", err, h)
	}
	for name, url := range s.urls("alice") {
		t.Run(name, func(t *testing.T) {
			refused(t, s, store, url, strings.TrimSpace(h)+":refs/heads/main", "the signature does not match the commit")
		})
	}
	r := try(store, "", "policy", "check", "origin/main.."+strings.TrimSpace(h))
	if r.Code != 3 || !strings.Contains(r.Stdout, "the signature does not match the commit") {
		t.Fatalf("policy check of the tampered commit: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	fsck(t, store)
}

// TestProperlySignedPushIsAccepted: alice's writes, signed by aiwg-state
// with her configured key, are pushed and taken; git on the server
// verifies them with an allowed-signers file as well, and log --verify
// shows them good, an unsigned coordinator commit none.
func TestProperlySignedPushIsAccepted(t *testing.T) {
	s, keys := signedTeam(t)
	store := agentStore(t, s.as("alice"), "alice")
	git(t, store, "config", "aiwg.alice.signingKey", keys["alice"].Path)
	runIn(t, store, "", "set", "agents/alice/a.json", "v", "1", "--agent", "alice")
	runIn(t, store, "", "set", "agents/alice/a.json", "v", "2", "--agent", "alice")
	head := strings.TrimSpace(git(t, store, "rev-parse", "main"))
	runIn(t, store, "", "push")
	if got := strings.TrimSpace(git(t, s.Dir, "rev-parse", "main")); got != head {
		t.Fatalf("server main %s, want %s", got, head)
	}
	fsck(t, s.Dir)
	signtest.NeedSSHKeygen(t)
	allowed := signtest.AllowedSigners(t, t.TempDir(), map[string]signtest.Key{"alice@agents.invalid": keys["alice"]})
	if out, ok := signtest.GitVerify(t, s.Dir, allowed, head); !ok {
		t.Fatalf("git verify-commit on the server:\n%s", out)
	}
	out := runIn(t, store, "", "log", "--verify", "-n", "3")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "good:alice") || !strings.Contains(lines[1], "good:alice") || !strings.Contains(lines[2], "none") {
		t.Fatalf("log --verify:\n%s", out)
	}
}

// plumbingCommit writes file on main in a bare store with git plumbing
// alone, authored by agent, unsigned; it returns the commit.
func plumbingCommit(t *testing.T, store, agent, file, body string) string {
	t.Helper()
	return testutil.CommitFile(t, testutil.Git{GitDir: store, Env: testutil.AgentEnv(agent)}, "main", file, body, "by hand\n")
}
