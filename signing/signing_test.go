package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/aiwg/aiwg-state/internal/cputime"
)

func keygen(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed: this test reads the keys it writes (install openssh-client)")
	}
	path := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", append([]string{"-q", "-f", path, "-C", name}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	return path
}

// TestLoadSigner reads the key files ssh-keygen writes (ed25519, ECDSA,
// RSA), signs as ssh-keygen -Y sign does, and refuses with ErrKey what
// cannot sign, saying why.
func TestLoadSigner(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range []string{"ed25519", "ecdsa", "rsa"} {
		path := keygen(t, dir, typ, "-t", typ, "-N", "")
		for _, p := range []string{path, path + ".pub"} { // the public half names the private one
			s, err := LoadSigner(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			msg := []byte("tree x\n\nm\n")
			sig, err := s.Sign(msg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(msg, sig, []ssh.PublicKey{s.PublicKey()}); err != nil {
				t.Fatalf("%s: own signature: %v", typ, err)
			}
			// ssh-keygen, as git runs it, accepts it too.
			allowed := filepath.Join(dir, "allowed")
			pub, _ := os.ReadFile(path + ".pub")
			os.WriteFile(allowed, []byte("a@x "+string(pub)), 0o644)
			sigFile := filepath.Join(dir, "sig")
			os.WriteFile(sigFile, sig, 0o644)
			cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "a@x", "-n", "git", "-s", sigFile)
			cmd.Stdin = bytes.NewReader(msg)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: ssh-keygen -Y verify: %v\n%s", typ, err, out)
			}
		}
	}
	locked := keygen(t, dir, "locked", "-t", "ed25519", "-N", "secret")
	if _, err := LoadSigner(locked); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("passphrase-protected: %v", err)
	}
	if _, err := LoadSigner(filepath.Join(dir, "missing")); !errors.Is(err, ErrKey) {
		t.Errorf("missing: %v", err)
	}
	lone := filepath.Join(dir, "lone.pub")
	pub, _ := os.ReadFile(filepath.Join(dir, "ed25519.pub"))
	os.WriteFile(lone, pub, 0o644)
	if _, err := LoadSigner(lone); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "is a public key") {
		t.Errorf("a public key alone: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "junk"), []byte("junk\n"), 0o600)
	if _, err := LoadSigner(filepath.Join(dir, "junk")); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "not an SSH private key") {
		t.Errorf("junk: %v", err)
	}
}

// FuzzParse: an armored signature either parses strictly (git's
// namespace, one block) and armors back to a signature that parses the
// same, or fails with ErrSignature; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n-----END SSH SIGNATURE-----\n"))
	f.Add([]byte("-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n"))
	f.Add([]byte("-----BEGIN PGP SIGNATURE-----\n\nx\n-----END PGP SIGNATURE-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sig, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrSignature) {
				t.Fatalf("error %v is not ErrSignature", err)
			}
			return
		}
		if sig.Namespace != Namespace {
			t.Fatalf("namespace %q parsed", sig.Namespace)
		}
		back, err := Parse(sshsig.Armor(sig))
		if err != nil {
			t.Fatalf("re-armored signature does not parse: %v", err)
		}
		if !SameKey(back.PublicKey, sig.PublicKey) || !bytes.Equal(back.Signature.Blob, sig.Signature.Blob) {
			t.Fatal("round trip changed the signature")
		}
		_, _ = Verify([]byte("m"), b, []ssh.PublicKey{sig.PublicKey})
	})
}

// BenchmarkSign and BenchmarkVerify: one ed25519 signature of a commit of
// the size aiwg-state writes (about 400 bytes), and its verification.
func BenchmarkSign(b *testing.B) {
	s, payload := benchKey(b)
	defer cputime.Start(b)()
	for i := 0; i < b.N; i++ {
		if _, err := s.Sign(payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	s, payload := benchKey(b)
	sig, err := s.Sign(payload)
	if err != nil {
		b.Fatal(err)
	}
	keys := []ssh.PublicKey{s.PublicKey()}
	b.ResetTimer()
	defer cputime.Start(b)()
	for i := 0; i < b.N; i++ {
		if _, err := Verify(payload, sig, keys); err != nil {
			b.Fatal(err)
		}
	}
}

func benchKey(b *testing.B) (*Signer, []byte) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	k, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor bench <bench@agents.invalid> 1700000000 +0000\ncommitter bench <bench@agents.invalid> 1700000000 +0000\n\nupdate docs/doc-0001.json#status.value\n\nMutation-Id: mut-00000001\nOperation: update\nPath: docs/doc-0001.json#status.value\nClock: 1700000000000000000.0@bench\n")
	return NewSigner(k), payload
}
