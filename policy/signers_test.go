package policy

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/aiwg/aiwg-state/signing"
)

func newKey(t testing.TB, seed byte) (ssh.Signer, string) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
}

func TestRequireSignedForms(t *testing.T) {
	_, a := newKey(t, 1)
	p, err := Parse([]byte(`{"roles": {"workers": ["w-*"]}, "require_signed": ["alice", "role:workers"], "signers": {"alice": ["` + a + ` alice@laptop"]}, "rules": []}`))
	if err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]bool{"alice": true, "w-1": true, "bob": false, "role:workers": false} {
		if got := p.SignatureRequired(agent); got != want {
			t.Errorf("SignatureRequired(%q) = %v", agent, got)
		}
	}
	all, err := Parse([]byte(`{"require_signed": true, "rules": []}`))
	if err != nil || !all.SignatureRequired("anyone") || all.HasSigners() {
		t.Fatalf("true: %v %v", err, all)
	}
	for _, v := range []string{"false", "null"} {
		none, err := Parse([]byte(`{"require_signed": ` + v + `, "rules": []}`))
		if err != nil || none.SignatureRequired("anyone") {
			t.Fatalf("%s: %v", v, err)
		}
	}
	var nilp *Policy
	if nilp.SignatureRequired("a") || nilp.HasSigners() || nilp.SignerKeys("a") != nil {
		t.Fatal("no policy requires nothing")
	}
	// Written back as read.
	for _, in := range []string{`true`, `false`, `["a","role:r"]`} {
		var r Requirement
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatal(err)
		}
		if out, _ := json.Marshal(r); string(out) != in {
			t.Errorf("%s became %s", in, out)
		}
	}
}

func TestSigningFieldsAreValidatedStrictly(t *testing.T) {
	_, a := newKey(t, 1)
	_, b := newKey(t, 2)
	for name, doc := range map[string]string{
		"require_signed a number":   `{"require_signed": 1, "rules": []}`,
		"require_signed a string":   `{"require_signed": "yes", "rules": []}`,
		"require_signed empty list": `{"require_signed": [], "rules": []}`,
		"require_signed objects":    `{"require_signed": [{}], "rules": []}`,
		"unknown role":              `{"require_signed": ["role:ghosts"], "rules": []}`,
		"bad agent glob":            `{"require_signed": ["a["], "rules": []}`,
		"empty subject":             `{"require_signed": [""], "rules": []}`,
		"signer pattern":            `{"signers": {"w-*": ["` + a + `"]}, "rules": []}`,
		"signer without keys":       `{"signers": {"alice": []}, "rules": []}`,
		"not a key":                 `{"signers": {"alice": ["ssh-ed25519 AAAAnope"]}, "rules": []}`,
		"key with options":          `{"signers": {"alice": ["command=\"sh\" ` + a + `"]}, "rules": []}`,
		"two keys in one entry":     `{"signers": {"alice": ["` + a + `\n` + b + `"]}, "rules": []}`,
		"one key for two agents":    `{"signers": {"alice": ["` + a + `"], "bob": ["` + a + ` other"]}, "rules": []}`,
		"a key twice":               `{"signers": {"alice": ["` + a + `", "` + a + `"]}, "rules": []}`,
		"signers not a map":         `{"signers": ["` + a + `"], "rules": []}`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse = %v, want ErrInvalid", name, err)
		}
	}
}

// TestVerifySignature: good only with a key listed for the author; a
// listed key of another agent, or no one's, is unknown-key naming whose;
// a changed payload or a foreign namespace is bad; OpenPGP is left to git.
func TestVerifySignature(t *testing.T) {
	ka, a := newKey(t, 1)
	kb, b := newKey(t, 2)
	ks, _ := newKey(t, 3)
	p, err := Parse([]byte(`{"signers": {"alice": ["` + a + `"], "bob": ["` + b + `"]}, "rules": []}`))
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor alice <alice@agents.invalid> 1 +0000\ncommitter alice <alice@agents.invalid> 1 +0000\n\nm\n")
	sign := func(k ssh.Signer) []byte {
		sig, err := signing.NewSigner(k).Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	if v := p.VerifySignature("alice", payload, sign(ka)); v.Status != signing.Good || v.Signer != "alice" || !strings.HasPrefix(v.Key, "SHA256:") {
		t.Errorf("alice's key: %+v", v)
	}
	if v := p.VerifySignature("alice", payload, sign(kb)); v.Status != signing.UnknownKey || v.Signer != "bob" || !strings.Contains(v.Detail, `the key of "bob"`) {
		t.Errorf("bob's key on alice's commit: %+v", v)
	}
	if v := p.VerifySignature("alice", payload, sign(ks)); v.Status != signing.UnknownKey || v.Signer != "" {
		t.Errorf("a stranger's key: %+v", v)
	}
	tampered := bytes.Replace(payload, []byte("\nm\n"), []byte("\nM\n"), 1)
	if v := p.VerifySignature("alice", tampered, sign(ka)); v.Status != signing.Bad {
		t.Errorf("tampered: %+v", v)
	}
	if v := p.VerifySignature("alice", payload, nil); v.Status != signing.None {
		t.Errorf("unsigned: %+v", v)
	}
	if v := p.VerifySignature("alice", payload, []byte("-----BEGIN PGP SIGNATURE-----\nx\n-----END PGP SIGNATURE-----\n")); v.Status != signing.Unverified {
		t.Errorf("OpenPGP: %+v", v)
	}
	for name, sig := range map[string][]byte{
		"garbage":        []byte("-----BEGIN SSH SIGNATURE-----\nnope\n-----END SSH SIGNATURE-----\n"),
		"trailing data":  append(sign(ka), "more\n"...),
		"truncated":      sign(ka)[:60],
		"file namespace": signNamespace(t, ka, payload, "file"),
	} {
		if v := p.VerifySignature("alice", payload, sig); v.Status != signing.Bad {
			t.Errorf("%s: %+v", name, v)
		}
	}
}

// signNamespace signs as another application would: a valid SSH
// signature, for a namespace other than git's.
func signNamespace(t *testing.T, k ssh.Signer, payload []byte, ns string) []byte {
	t.Helper()
	sig, err := sshsig.Sign(bytes.NewReader(payload), k, sshsig.HashSHA512, ns)
	if err != nil {
		t.Fatal(err)
	}
	return sshsig.Armor(sig)
}
