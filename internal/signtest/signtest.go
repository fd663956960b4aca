// Package signtest makes SSH signing keys for tests, and asks git to
// verify what they signed.
package signtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Key is a fresh ed25519 key: its private key file (OpenSSH format, mode
// 0600) and its public key as a policy lists it.
type Key struct {
	Path   string
	Public string
	Signer ssh.Signer
}

// NewKey writes a new key named name under dir.
func NewKey(t testing.TB, dir, name string) Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
	if err := os.WriteFile(path+".pub", []byte(pub+" "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Key{Path: path, Public: pub, Signer: s}
}

// AllowedSigners writes git's gpg.ssh.allowedSignersFile: each principal
// (an agent's email, as its commits carry it) with its key.
func AllowedSigners(t testing.TB, dir string, byPrincipal map[string]Key) string {
	t.Helper()
	var b strings.Builder
	for p, k := range byPrincipal {
		b.WriteString(p + ` namespaces="git" ` + k.Public + "\n")
	}
	path := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// NeedSSHKeygen skips a test that has git sign or verify with an SSH key
// when ssh-keygen, which git runs for it, is not installed.
func NeedSSHKeygen(t testing.TB) {
	t.Helper()
	if !HaveSSHKeygen() {
		t.Skip(NoSSHKeygen)
	}
}

// HaveSSHKeygen reports whether git can sign and verify with SSH keys
// here, for a test that skips only its git part without it.
func HaveSSHKeygen() bool {
	_, err := exec.LookPath("ssh-keygen")
	return err == nil
}

// NoSSHKeygen says why a git part of a test did not run.
const NoSSHKeygen = "ssh-keygen is not installed: git signs and verifies SSH signatures with it (install openssh-client)"

// GitVerify runs git verify-commit on commit in gitDir with the allowed
// signers file, returning its output and whether git accepted it.
func GitVerify(t testing.TB, gitDir, allowed, commit string) (string, bool) {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", gitDir, "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", "-v", commit)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("git verify-commit: %v", err)
		}
	}
	return string(out), err == nil
}
