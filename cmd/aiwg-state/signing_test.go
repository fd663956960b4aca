package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/signtest"
)

// TestSigningFromTheCommandLine: --signing-key and $AIWG_SIGNING_KEY sign
// a write; log, show and blame --verify judge each mutation by the
// policy's signers (text and JSON); a key that cannot sign exits 3 and
// writes nothing.
func TestSigningFromTheCommandLine(t *testing.T) {
	s := newStore(t)
	keys := t.TempDir()
	alice, bob := signtest.NewKey(t, keys, "alice"), signtest.NewKey(t, keys, "bob")
	policy := `{"default": "allow", "rules": [], "signers": {"alice": ["` + alice.Public + `"], "bob": ["` + bob.Public + `"]}}`
	mustCLI(t, s, policy, "policy", "set", "-", "--agent", "admin")
	mustCLI(t, s, "", "set", "plan.json", "a", "1", "--agent", "alice", "--signing-key", alice.Path)
	t.Setenv("AIWG_SIGNING_KEY", bob.Path)
	mustCLI(t, s, "", "set", "plan.json", "b", "2", "--agent", "alice") // bob's key, alice's name
	t.Setenv("AIWG_SIGNING_KEY", "")
	mustCLI(t, s, "", "set", "plan.json", "c", "3", "--agent", "carol")

	log := mustCLI(t, s, "", "log", "--verify", "-n", "3")
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for i, want := range []string{"none", "unknown-key", "good:alice"} {
		if i >= len(lines) || !strings.Contains(lines[i], want) {
			t.Fatalf("log --verify line %d wants %q:\n%s", i, want, log)
		}
	}
	var ms []struct {
		Signature struct{ Status, Signer, Key, Detail string }
	}
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "log", "--verify", "--json", "-n", "2")), &ms); err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Signature.Status != "none" || ms[1].Signature.Status != "unknown-key" || ms[1].Signature.Signer != "bob" || !strings.Contains(ms[1].Signature.Detail, `the key of "bob"`) {
		t.Fatalf("log --verify --json: %+v", ms)
	}
	if out := mustCLI(t, s, "", "show", "HEAD~2", "--verify"); !strings.Contains(out, "signature good by alice (SHA256:") {
		t.Fatalf("show --verify:\n%s", out)
	}
	blame := mustCLI(t, s, "", "blame", "plan.json", "--verify")
	if !strings.Contains(blame, "good:alice") || !strings.Contains(blame, "unknown-key") {
		t.Fatalf("blame --verify:\n%s", blame)
	}
	if out := mustCLI(t, s, "", "log", "-n", "1"); strings.Contains(out, "none") {
		t.Fatalf("log without --verify shows signatures:\n%s", out)
	}

	before := gitOut(t, s, "rev-parse", "HEAD")
	_, stderr, code := runCLI(t, s, "", "set", "plan.json", "d", "4", "--signing-key", filepath.Join(keys, "missing"))
	if code != exitDomain || !strings.Contains(stderr, "unusable signing key") {
		t.Fatalf("missing key: exit %d: %s", code, stderr)
	}
	if gitOut(t, s, "rev-parse", "HEAD") != before {
		t.Fatal("a failed signing moved the branch")
	}
}
