package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"golang.org/x/crypto/ssh"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/sysfile"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/signing"
)

// ErrSigningKey: the signing key configured for an agent cannot sign
// (missing, passphrase-protected, not an SSH private key). The CLI exits 3.
var ErrSigningKey = signing.ErrKey

// Where an agent's signing key is configured, in the store's own git
// config (.aiwg/state.git/config), so that it stays on the machine and
// never travels with the store's history:
//
//	[aiwg "alice"]
//		signingKey = ~/.ssh/alice_ed25519
//	[gpg]
//		format = ssh
//	[user]
//		signingKey = ~/.ssh/store_ed25519
//
// aiwg.<agent>.signingKey is the agent's own key; user.signingKey, read
// only when gpg.format is ssh (as git reads it), signs for every agent
// without one. WriteOptions.SigningKey (the CLI's --signing-key and
// $AIWG_SIGNING_KEY) comes before both.
const (
	configAgentKey = "signingKey"
)

// signingConfig caches the store's git config and the keys it names,
// parsed again when their content changes (a server keeps a store open).
// Content, not a file's time and size: git rewrites its config within
// the same tick of the file clock, often to the same length.
type signingConfig struct {
	mu      sync.Mutex
	raw     []byte // the config file as last parsed
	cfg     *gitconfig.Config
	stat    configStat // the file's when raw was read
	settled bool       // raw was read configSettle after the file last changed
	signers map[string]signerEntry
	// policyBlob and policy are the last policy file read and its parse:
	// every write asks it whether its agent must sign.
	policyBlob plumbing.Hash
	policy     *policy.Policy
}

// configStat is what a stat tells of the config file: a change of
// content shows in it once the file's clock has moved on.
type configStat struct {
	ino          uint64
	size         int64
	mtime, ctime int64
}

// configSettle is longer than any file system's time granularity (FAT's
// two seconds): a file read that long after its last change shows any
// later change in its times.
const configSettle = 2 * time.Second

type signerEntry struct {
	raw    []byte // the key file as parsed
	signer *signing.Signer
}

// SignerFor is the signer of an agent's writes: nil when none is
// configured (the write is unsigned).
func (s *Store) SignerFor(agent string, wo WriteOptions) (*signing.Signer, error) {
	if wo.Signer != nil {
		return wo.Signer, nil
	}
	path := wo.SigningKey
	if path == "" {
		var err error
		if path, err = s.configuredKey(agent); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return nil, nil
	}
	return s.loadSigner(path)
}

// SigningKey is the key file configured for agent's writes in the store's
// git config ("" when none), as signerFor reads it.
func (s *Store) SigningKey(agent string) (string, error) { return s.configuredKey(agent) }

func (s *Store) configuredKey(agent string) (string, error) {
	cfg, err := s.gitConfig()
	if err != nil || cfg == nil {
		return "", err
	}
	if k := configOption(cfg, "aiwg", agent, configAgentKey); k != "" {
		return s.keyPath(k), nil
	}
	if strings.EqualFold(configOption(cfg, "gpg", "", "format"), "ssh") {
		if k := configOption(cfg, "user", "", "signingKey"); k != "" {
			if strings.HasPrefix(k, "key::") || strings.HasPrefix(k, "ssh-") {
				return "", errkind.Errorf(ErrSigningKey, "user.signingKey holds a public key, which signs through an ssh-agent: aiwg-state needs the private key's file (set aiwg.%s.signingKey to it)", agent)
			}
			return s.keyPath(k), nil
		}
	}
	return "", nil
}

// configOption reads section.key, or section.subsection.key, from a
// parsed config that concurrent writes share: go-git's Section and
// Subsection add what they do not find, so they are asked only for what
// is there.
func configOption(cfg *gitconfig.Config, section, subsection, key string) string {
	if !cfg.HasSection(section) {
		return ""
	}
	sec := cfg.Section(section)
	if subsection == "" {
		return sec.Option(key)
	}
	if !sec.HasSubsection(subsection) {
		return ""
	}
	return sec.Subsection(subsection).Option(key)
}

// keyPath makes a configured relative path relative to the store, not to
// wherever the command runs.
func (s *Store) keyPath(k string) string {
	k = signing.ExpandHome(k)
	if !filepath.IsAbs(k) {
		k = filepath.Join(s.Dir(), k)
	}
	return k
}

// gitConfig reads the store's git config; nil when it has none.
func (s *Store) gitConfig() (*gitconfig.Config, error) {
	sc := &s.root().signing
	sc.mu.Lock()
	defer sc.mu.Unlock()
	path := filepath.Join(s.Dir(), "config")
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err == syscall.ENOENT {
		sc.cfg, sc.raw, sc.settled = nil, nil, false
		return nil, nil
	}
	// Every write asks for the config: while its stat is what it was when
	// read, long enough after its last change that a rewrite would show in
	// the time (git rewrites it within one tick of the file clock, often
	// at the same length), the parse stands; otherwise its content decides.
	stat := configStat{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	if sc.cfg != nil && sc.settled && stat == sc.stat {
		return sc.cfg, nil
	}
	data, err := sysfile.ReadFile(path, 1)
	if errors.Is(err, fs.ErrNotExist) {
		sc.cfg, sc.raw, sc.settled = nil, nil, false
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sc.stat, sc.settled = stat, time.Since(time.Unix(0, max(stat.mtime, stat.ctime))) > configSettle
	if sc.cfg != nil && bytes.Equal(data, sc.raw) {
		return sc.cfg, nil
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		// A config valid to git that the decoder does not follow:
		// ask git itself for the few keys the store reads (its agent, its
		// signing keys).
		if cfg, err = s.gitConfigByGit(); err != nil {
			return nil, err
		}
	}
	sc.cfg, sc.raw = cfg, data
	return cfg, nil
}

func (s *Store) gitConfigByGit() (*gitconfig.Config, error) {
	out, err := exec.Command("git", "--git-dir", s.Dir(), "config", "--null", "--get-regexp", `^(aiwg\.agent|aiwg\..*\.signingkey|gpg\.format|user\.signingkey)$`).Output()
	cfg := gitconfig.New()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return cfg, nil // none set
		}
		return nil, fmt.Errorf("reading the store's git config: %w", err)
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		key, val, _ := strings.Cut(rec, "\n")
		first, rest, _ := strings.Cut(key, ".")
		i := strings.LastIndexByte(rest, '.')
		if i < 0 {
			cfg.Section(first).SetOption(rest, val)
		} else {
			cfg.Section(first).Subsection(rest[:i]).SetOption(rest[i+1:], val)
		}
	}
	return cfg, nil
}

func (s *Store) loadSigner(path string) (*signing.Signer, error) {
	sc := &s.root().signing
	file, data, err := signing.ReadKey(path)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	e, ok := sc.signers[file]
	sc.mu.Unlock()
	if ok && bytes.Equal(e.raw, data) {
		return e.signer, nil
	}
	sg, err := signing.ParseSigner(file, data)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	if sc.signers == nil {
		sc.signers = map[string]signerEntry{}
	}
	sc.signers[file] = signerEntry{raw: data, signer: sg}
	sc.mu.Unlock()
	return sg, nil
}

// SignFunc is what repo.CommitInfo.Sign takes: nil for no signer.
func SignFunc(sg *signing.Signer) func([]byte) ([]byte, error) {
	if sg == nil {
		return nil
	}
	return sg.Sign
}

// checkSigner refuses, before anything is written, a commit the policy in
// force would refuse on a server: one of an agent that must sign, made
// without a signing key, or with a key the policy does not list for it.
func (s *Store) checkSigner(tx *repo.Tx, wo WriteOptions, _ []Change) error {
	p, err := s.signingPolicy(tx)
	agent := s.Agent(wo.Agent)
	if err != nil || !p.SignatureRequired(agent) {
		return err
	}
	sg, err := s.SignerFor(agent, wo)
	if err != nil {
		return err
	}
	if sg == nil {
		return &SigningKeyMissingError{Agent: agent, Dir: s.Dir()}
	}
	if p.HasSigners() && !slices.ContainsFunc(p.SignerKeys(agent), func(k ssh.PublicKey) bool { return signing.SameKey(k, sg.PublicKey()) }) {
		return errkind.Errorf(ErrDenied, "the signing key %s is not one the policy lists for agent %q (signers in %s)", signing.Fingerprint(sg.PublicKey()), agent, PolicyPath)
	}
	return nil
}

// Signatures verifies mutations' signatures, for log, blame and show: an
// SSH signature against the keys that the policy at a revision (the
// branch head by default) lists for the commit's author, as the server's
// hook does. Unsigned commits are "none"; OpenPGP and X.509 signatures
// are "unverified" (git verify-commit checks those with your keyring).
type Signatures struct {
	s      *Store
	policy *policy.Policy
	mu     sync.Mutex
	seen   map[string]*policy.Verdict
}

// Signatures reads the policy whose signers verify mutations.
func (s *Store) Signatures(ro ReadOptions) (*Signatures, error) {
	h, err := s.Resolve(RevName(ro), ro.Branch)
	if err != nil {
		return nil, err
	}
	p, err := s.PolicyAt(h)
	if errors.Is(err, policy.ErrInvalid) {
		p, err = s.lastValidPolicy(h) // as the hook judges while it is broken
	}
	if err != nil {
		return nil, err
	}
	return &Signatures{s: s, policy: p, seen: map[string]*policy.Verdict{}}, nil
}

// Verify judges one commit's signature.
func (v *Signatures) Verify(commit string) (*policy.Verdict, error) {
	v.mu.Lock()
	got, ok := v.seen[commit]
	v.mu.Unlock()
	if ok {
		return got, nil
	}
	if !plumbing.IsHash(commit) {
		return nil, fmt.Errorf("commit %q: %w", commit, ErrNotFound)
	}
	h := plumbing.NewHash(commit)
	c, err := v.s.repo.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	var verdict policy.Verdict
	if c.PGPSignature == "" {
		verdict = policy.Verdict{Status: signing.None}
	} else {
		_, body, err := v.s.repo.ReadObject(h)
		if err != nil {
			return nil, err
		}
		payload, sig := repo.SplitSigned(body)
		verdict = v.policy.VerifySignature(c.Author.Name, payload, sig)
	}
	v.mu.Lock()
	v.seen[commit] = &verdict
	v.mu.Unlock()
	return &verdict, nil
}

// Mark sets m.Signature.
func (v *Signatures) Mark(m *Mutation) error {
	var err error
	m.Signature, err = v.Verify(m.Commit)
	return err
}

// signingPolicy is the policy in force for a write (at the head it
// builds on), parsed once per version of the file.
func (s *Store) signingPolicy(tx *repo.Tx) (*policy.Policy, error) {
	root, err := tx.ParentTree()
	if err != nil || root.IsZero() {
		return nil, err
	}
	e, err := s.repo.Lookup(root, policy.Path)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sc := &s.root().signing
	sc.mu.Lock()
	if sc.policy != nil && sc.policyBlob == e.Hash {
		p := sc.policy
		sc.mu.Unlock()
		return p, nil
	}
	sc.mu.Unlock()
	p, err := s.PolicyAt(tx.Parent())
	if errors.Is(err, policy.ErrInvalid) {
		// A broken policy answers nothing: its repair (the only write
		// then taken) is held to the last one that parses, as the hook
		// holds a push.
		return s.lastValidPolicy(tx.Parent())
	}
	if err != nil || p == nil {
		return p, err
	}
	sc.mu.Lock()
	sc.policyBlob, sc.policy = e.Hash, p
	sc.mu.Unlock()
	return p, nil
}
