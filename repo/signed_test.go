package repo

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/signing"
)

// TestSplitSignedTakesGitsSignatureApart: a commit git itself signed
// (commit-tree -S, gpg.format=ssh) splits into the payload and the
// signature git signed, which verify in-process; and a commit signed here
// verifies with git. The two agree on the bytes signed.
func TestSplitSignedTakesGitsSignatureApart(t *testing.T) {
	signtest.NeedSSHKeygen(t)
	dir := t.TempDir()
	k := signtest.NewKey(t, dir, "k")
	gitDir := dir + "/r.git"
	run := func(stdin string, args ...string) string {
		t.Helper()
		return testutil.Git{GitDir: gitDir, Env: testutil.AgentEnv("a"), Stdin: stdin}.Run(t, args...)
	}
	testutil.Git{}.Run(t, "init", "-q", "--bare", gitDir)
	run("", "config", "gpg.format", "ssh")
	run("", "config", "user.signingKey", k.Path)
	c := strings.TrimSpace(run("subject\n\nbody\n", "commit-tree", "-S", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
	body := []byte(run("", "cat-file", "commit", c))
	payload, sig := SplitSigned(body)
	if !signing.IsSSH(sig) || bytes.Contains(payload, []byte("gpgsig")) {
		t.Fatalf("split:\n%s\n--\n%s", payload, sig)
	}
	if _, err := signing.Verify(payload, sig, []ssh.PublicKey{k.Signer.PublicKey()}); err != nil {
		t.Fatalf("git's signature does not verify here: %v", err)
	}
	if got := AddSignature(payload, sig); !bytes.Equal(got, body) {
		t.Fatalf("AddSignature does not rebuild git's commit:\n%s\n--\n%s", got, body)
	}
	// And the other way: signed here, verified by git.
	ours, err := signing.NewSigner(k.Signer).Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	h := strings.TrimSpace(run(string(AddSignature(payload, ours)), "hash-object", "-t", "commit", "-w", "--stdin"))
	allowed := signtest.AllowedSigners(t, dir, map[string]signtest.Key{"a@agents.invalid": k})
	if out, ok := signtest.GitVerify(t, gitDir, allowed, h); !ok {
		t.Fatalf("git rejects our signature:\n%s", out)
	}
	// A changed message no longer verifies, here or in git.
	tampered := bytes.Replace(AddSignature(payload, ours), []byte("body"), []byte("bodY"), 1)
	h2 := strings.TrimSpace(run(string(tampered), "hash-object", "-t", "commit", "-w", "--stdin"))
	if out, ok := signtest.GitVerify(t, gitDir, allowed, h2); ok {
		t.Fatalf("git accepts a tampered commit:\n%s", out)
	}
	p2, s2 := SplitSigned(tampered)
	if _, err := signing.Verify(p2, s2, []ssh.PublicKey{k.Signer.PublicKey()}); err == nil {
		t.Fatal("a tampered commit verifies in-process")
	}
}

// TestSplitSignedAsGit: the cases of git's parse_buffer_signed_by_header.
func TestSplitSignedAsGit(t *testing.T) {
	for _, tc := range []struct{ name, body, payload, sig string }{
		{"unsigned", "tree t\n\nmsg\n", "tree t\n\nmsg\n", ""},
		{"signed", "tree t\ngpgsig A\n B\n C\nx y\n\nmsg\n", "tree t\nx y\n\nmsg\n", "A\nB\nC\n"},
		{"sha256 signature left out", "tree t\ngpgsig-sha256 A\n B\nx y\n\nm", "tree t\nx y\n\nm", ""},
		{"two signatures joined", "tree t\ngpgsig A\ngpgsig B\n\nm", "tree t\n\nm", "A\nB\n"},
		{"a gpgsig line in the message is message", "tree t\n\ngpgsig X\n", "tree t\n\ngpgsig X\n", ""},
		{"no message", "tree t\ngpgsig A", "tree t\n", "A"},
		{"continuation of another header stays", "tree t\nmergetag a\n b\n\nm", "tree t\nmergetag a\n b\n\nm", ""},
	} {
		p, s := SplitSigned([]byte(tc.body))
		if string(p) != tc.payload || string(s) != tc.sig {
			t.Errorf("%s: got %q, %q; want %q, %q", tc.name, p, s, tc.payload, tc.sig)
		}
	}
}

// FuzzSplitSigned: any body splits without panicking into a payload no
// longer than it; a signature added to a body without one splits off
// again, leaving the body as it was.
func FuzzSplitSigned(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@agents.invalid> 1 +0000\ncommitter a <a@agents.invalid> 1 +0000\n\nm\n"), []byte("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n"))
	f.Add([]byte("tree t\ngpgsig A\n B\ngpgsig-sha256 C\n D\n\nm"), []byte("x\n"))
	f.Add([]byte("tree t"), []byte("a\n\nb\n"))
	f.Fuzz(func(t *testing.T, body, sig []byte) {
		p, s := SplitSigned(body)
		if len(p)+len(s) > len(body) {
			t.Fatalf("split grew the body: %d+%d > %d", len(p), len(s), len(body))
		}
		clean := len(sig) > 0 && sig[len(sig)-1] == '\n' && !bytes.Contains(sig, []byte("\n\n")) && sig[0] != '\n'
		end := bytes.Index(body, []byte("\n\n"))
		if !clean || end <= 0 || body[0] == '\n' || bytes.HasPrefix(body, []byte("gpgsig")) || bytes.Contains(body[:end+1], []byte("\ngpgsig")) {
			return
		}
		gp, gs := SplitSigned(AddSignature(body, sig))
		if !bytes.Equal(gp, body) || !bytes.Equal(gs, sig) {
			t.Fatalf("round trip:\n%q %q\nbecame\n%q %q", body, sig, gp, gs)
		}
	})
}
