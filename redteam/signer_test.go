package redteam

import (
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/signtest"
)

// TestGitSignerIsTheAuthor: with require_signed and no signers, git on
// the server verifies signatures with its allowed-signers file; a key git
// knows for mallory signs for mallory only, not for alice.
func TestGitSignerIsTheAuthor(t *testing.T) {
	signtest.NeedSSHKeygen(t)
	dir := t.TempDir()
	keys := map[string]signtest.Key{"alice": signtest.NewKey(t, dir, "alice"), "mallory": signtest.NewKey(t, dir, "mallory"), "any": signtest.NewKey(t, dir, "any")}
	s := newServer(t, strings.Replace(teamPolicy, `"rules"`, `"require_signed": ["role:workers"], "rules"`, 1))
	allowed := signtest.AllowedSigners(t, t.TempDir(), map[string]signtest.Key{
		"alice@agents.invalid": keys["alice"], "mallory@agents.invalid": keys["mallory"], "*": keys["any"]})
	git(t, s.Dir, "config", "gpg.ssh.allowedSignersFile", allowed)
	for name, url := range s.urls("alice") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			commitAs(t, w, "alice", keys["mallory"], "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
			refused(t, s, w, url, "HEAD:refs/heads/main", `signed with a key the server's git knows for "mallory@agents.invalid", not for agent "alice"`)
			git(t, w, "reset", "-q", "--hard", "origin/main")
			commitAs(t, w, "alice", keys["any"], "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
			refused(t, s, w, url, "HEAD:refs/heads/main", `knows for "*", not for agent "alice"`)
		})
	}
	// alice's own key: taken.
	w := cloneAs(t, s.as("alice"))
	commitAs(t, w, "alice", keys["alice"], "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
	accepted(t, s, w, s.as("alice"), "HEAD:refs/heads/main")
}

// TestOpenPGPSignatureUnderSignersIsRefused: when the policy lists the
// agents' keys, a signature of another kind is not checked against the
// server's keyring instead: it is refused as such.
func TestOpenPGPSignatureUnderSignersIsRefused(t *testing.T) {
	s, _ := signedTeam(t)
	w := cloneAs(t, s.as("alice"))
	commitAs(t, w, "alice", signtest.Key{}, "agents/alice/a.json", "{\n  \"v\": 1\n}\n")
	body := git(t, w, "cat-file", "commit", "HEAD")
	head, msg, _ := strings.Cut(body, "\n\n")
	signed := head + "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n" + msg
	h, err := gitTry(w, signed, "hash-object", "-t", "commit", "-w", "--stdin")
	if err != nil {
		t.Fatalf("hash-object: %v %s", err, h)
	}
	refused(t, s, w, s.as("alice"), strings.TrimSpace(h)+":refs/heads/main", "an OpenPGP or X.509 signature: the policy lists its agents' keys (signers)")
}
