// Package signing signs commits with SSH keys and verifies them, in the
// format git writes with gpg.format=ssh: an armored SSHSIG signature of
// the commit (namespace "git", SHA-512) in its gpgsig header, which
// `git verify-commit` and `git log --show-signature` accept given an
// allowed-signers file. The key formats come from golang.org/x/crypto/ssh
// and the signature format from github.com/hiddeco/sshsig: no signature
// code of its own.
package signing

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Namespace and Hash are what git signs commits with (git's
// sign_buffer_ssh: ssh-keygen -Y sign -n git, whose default is SHA-512).
const (
	Namespace = "git"
	Hash      = sshsig.HashSHA512
)

var (
	// ErrKey: a signing key cannot be used (missing, unreadable,
	// passphrase-protected, not an SSH private key).
	ErrKey = errors.New("unusable signing key")
	// ErrSignature: a signature is malformed or does not verify.
	ErrSignature = errors.New("bad signature")
)

// Signer signs commits with one SSH private key.
type Signer struct {
	key ssh.Signer
}

// NewSigner wraps an SSH signer (a parsed private key, an agent's key).
func NewSigner(k ssh.Signer) *Signer { return &Signer{key: k} }

// LoadSigner reads an unencrypted OpenSSH (or PEM) private key file. As
// git's user.signingKey may name the public half, a path ending in .pub
// is taken as the private key beside it.
func LoadSigner(path string) (*Signer, error) {
	file, data, err := ReadKey(path)
	if err != nil {
		return nil, err
	}
	return ParseSigner(file, data)
}

// ReadKey reads the key file LoadSigner would parse: the file it is and
// its content.
func ReadKey(path string) (string, []byte, error) {
	path = ExpandHome(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && strings.HasSuffix(path, ".pub") {
		path = strings.TrimSuffix(path, ".pub")
		data, err = os.ReadFile(path)
	} else if err == nil && strings.HasSuffix(path, ".pub") {
		if priv, perr := os.ReadFile(strings.TrimSuffix(path, ".pub")); perr == nil {
			path, data = strings.TrimSuffix(path, ".pub"), priv
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return path, data, nil
}

// ParseSigner parses the content of a private key file (file names it in
// errors).
func ParseSigner(file string, data []byte) (*Signer, error) {
	k, err := ssh.ParsePrivateKey(data)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("%w: %s is protected by a passphrase; aiwg-state signs with unencrypted keys only (give each agent a key of its own, readable by it alone)", ErrKey, file)
	case err != nil:
		if _, _, _, _, perr := ssh.ParseAuthorizedKey(data); perr == nil {
			// git would sign through an ssh-agent holding it.
			return nil, fmt.Errorf("%w: %s is a public key, and no private key is beside it (without .pub): aiwg-state signs with the private key's file", ErrKey, file)
		}
		return nil, fmt.Errorf("%w: %s: not an SSH private key: %v", ErrKey, file, err)
	}
	return &Signer{key: k}, nil
}

// ExpandHome expands a leading "~/" as git does for user.signingKey.
func ExpandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return path
}

// PublicKey is the key a signature of this signer verifies with.
func (s *Signer) PublicKey() ssh.PublicKey { return s.key.PublicKey() }

// Sign returns the armored signature of payload (a commit without its
// signature header), ending with a newline.
func (s *Signer) Sign(payload []byte) ([]byte, error) {
	sig, err := sshsig.Sign(bytes.NewReader(payload), s.key, Hash, Namespace)
	if err != nil {
		return nil, fmt.Errorf("%w: signing: %v", ErrKey, err)
	}
	return sshsig.Armor(sig), nil
}

// IsSSH reports whether an armored signature is an SSH one (as git tells
// the formats apart: by the first line).
func IsSSH(sig []byte) bool {
	return bytes.HasPrefix(sig, []byte("-----BEGIN SSH SIGNATURE-----"))
}

// Parse reads an armored SSH signature strictly: one block and nothing
// around it but line ends, version 1, git's namespace, a hash git uses.
func Parse(armored []byte) (*sshsig.Signature, error) {
	if !IsSSH(armored) {
		return nil, fmt.Errorf("%w: not an SSH signature", ErrSignature)
	}
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	end := []byte("-----END SSH SIGNATURE-----")
	if i := bytes.Index(armored, end); i < 0 || len(bytes.TrimRight(armored[i+len(end):], "\r\n")) != 0 {
		return nil, fmt.Errorf("%w: data after the signature", ErrSignature)
	}
	if sig.Namespace != Namespace {
		return nil, fmt.Errorf("%w: namespace %q, not %q", ErrSignature, sig.Namespace, Namespace)
	}
	if err := sig.HashAlgorithm.Supported(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	return sig, nil
}

// Verify checks an armored SSH signature of payload and returns the key
// that made it, which must be one of keys: a signature by any other key,
// however valid, fails with ErrUnknownKey.
func Verify(payload, armored []byte, keys []ssh.PublicKey) (ssh.PublicKey, error) {
	sig, err := Parse(armored)
	if err != nil {
		return nil, err
	}
	if !contains(keys, sig.PublicKey) {
		return sig.PublicKey, fmt.Errorf("%w: made by %s", ErrUnknownKey, Fingerprint(sig.PublicKey))
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, Namespace); err != nil {
		return sig.PublicKey, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	return sig.PublicKey, nil
}

// ErrUnknownKey: a signature by a key not among those it may be made by.
var ErrUnknownKey = errors.New("signed by a key not allowed for this signer")

func contains(keys []ssh.PublicKey, k ssh.PublicKey) bool {
	m := k.Marshal()
	for _, c := range keys {
		if subtle.ConstantTimeCompare(c.Marshal(), m) == 1 {
			return true
		}
	}
	return false
}

// SameKey reports whether two keys are one.
func SameKey(a, b ssh.PublicKey) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }

// Fingerprint is a key's SHA256 fingerprint, as ssh-keygen -l shows it.
func Fingerprint(k ssh.PublicKey) string { return ssh.FingerprintSHA256(k) }

// ParsePublicKey reads one public key in authorized_keys form
// ("ssh-ed25519 AAAA… comment"), without options: an allowed signer is a
// key and nothing else.
func ParsePublicKey(s string) (ssh.PublicKey, error) {
	k, _, opts, rest, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not an SSH public key (\"ssh-ed25519 AAAA…\")", ErrKey, abbrev(s))
	}
	if len(opts) > 0 || len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("%w: %q: one key per entry, without options", ErrKey, abbrev(s))
	}
	return k, nil
}

func abbrev(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Status is what a commit's signature shows.
type Status string

// Statuses of a signature.
const (
	// Good: an SSH signature of the commit by a key the policy lists for
	// its author.
	Good Status = "good"
	// Bad: malformed, or not a signature of this commit (tampered).
	Bad Status = "bad"
	// None: the commit is not signed.
	None Status = "none"
	// UnknownKey: a valid signature by a key the policy does not list for
	// the commit's author (another agent's, or no one's).
	UnknownKey Status = "unknown-key"
	// Unverified: a signature this check does not verify itself (OpenPGP
	// or X.509, which git verify-commit checks with the server's keys).
	Unverified Status = "unverified"
)
