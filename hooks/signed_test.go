package hooks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/policy"
)

// TestOpenPGPSignerIsTheAuthor: without signers in the policy, git
// verifies an OpenPGP signature with the server's keyring, and the key's
// user id must name the author: a key of mallory's in the keyring signs
// for mallory only. With signers listed, an OpenPGP signature is refused
// whatever the keyring holds.
func TestOpenPGPSignerIsTheAuthor(t *testing.T) {
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("gpg is not installed")
	}
	home, err := os.MkdirTemp("", "aiwg-gpg-") // short: gpg-agent's socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(home, 0o700)
	t.Setenv("GNUPGHOME", home)
	t.Cleanup(func() {
		exec.Command("gpgconf", "--kill", "gpg-agent").Run() // the agent gpg started for this home
		os.RemoveAll(home)
	})
	for _, uid := range []string{"conductor <conductor@agents.invalid>", "mallory <mallory@agents.invalid>"} {
		if out, err := exec.Command("gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never").CombinedOutput(); err != nil {
			t.Skipf("gpg --quick-gen-key: %v %s", err, out)
		}
	}
	ctx := context.Background()
	_, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	signed := strings.Replace(testPolicy, `"roles"`, `"require_signed": true, "roles"`, 1)
	w.commit("conductor", map[string]string{policy.Path: canon(t, signed)})
	base := strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	w.must("x", "config", "gpg.format", "openpgp")
	w.must("x", "config", "commit.gpgsign", "true")
	w.must("x", "config", "user.signingkey", "conductor@agents.invalid")
	own := w.commit("conductor", map[string]string{"global/a.json": canon(t, `{"n": 1}`)})
	w.must("x", "config", "user.signingkey", "mallory@agents.invalid")
	mallorys := w.commit("conductor", map[string]string{"global/b.json": canon(t, `{"n": 2}`)})

	gitDir := filepath.Join(w.dir, ".git")
	if err := CheckRevs(ctx, gitDir, []string{base + ".." + own}, Options{PolicyFrom: base}); err != nil {
		t.Fatalf("a commit signed with the author's own key: %v", err)
	}
	err = CheckRevs(ctx, gitDir, []string{own + ".." + mallorys}, Options{PolicyFrom: base})
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Violations) != 1 || !strings.Contains(re.Violations[0].Detail, `knows for "mallory <mallory@agents.invalid>", not for agent "conductor"`) {
		t.Fatalf("a commit signed with mallory's key: %v", err)
	}

	// With signers listed, the keyring is not asked.
	key := signtest.NewKey(t, t.TempDir(), "conductor")
	w.must("x", "config", "commit.gpgsign", "false")
	withSigners := strings.Replace(signed, `"roles"`, `"signers": {"conductor": ["`+key.Public+`"]}, "roles"`, 1)
	w.commit("conductor", map[string]string{policy.Path: canon(t, withSigners)})
	base = strings.TrimSpace(w.must("x", "rev-parse", "HEAD"))
	w.must("x", "config", "commit.gpgsign", "true")
	w.must("x", "config", "user.signingkey", "conductor@agents.invalid")
	pgp := w.commit("conductor", map[string]string{"global/c.json": canon(t, `{"n": 3}`)})
	err = CheckRevs(ctx, gitDir, []string{base + ".." + pgp}, Options{PolicyFrom: base})
	if !errors.As(err, &re) || len(re.Violations) != 1 || !strings.Contains(re.Violations[0].Detail, "an OpenPGP or X.509 signature: the policy lists its agents' keys (signers)") {
		t.Fatalf("an OpenPGP signature under signers: %v", err)
	}
}
