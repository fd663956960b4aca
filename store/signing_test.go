package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/signing"
	"github.com/aiwg/aiwg-state/store"
)

// TestSignedWritesVerifyWithGit: with a key configured for an agent in
// the store's git config, each of its writes (a set, a merge, a
// delete) carries git's SSH signature, which git verify-commit accepts
// and which the policy's keys verify in-process; another agent's writes
// stay unsigned.
func TestSignedWritesVerifyWithGit(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	keys := t.TempDir()
	alice := signtest.NewKey(t, keys, "alice")
	storetest.Git(t, st, "config", "aiwg.alice.signingKey", alice.Path)
	wo := store.WriteOptions{Agent: "alice"}
	m, err := st.Set(ctx, "docs/a.json", "v", []byte("1"), wo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "side", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "docs/b.json", "v", []byte("2"), store.WriteOptions{Agent: "alice", Branch: "side"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "docs/a.json", "v", []byte("3"), wo); err != nil {
		t.Fatal(err)
	}
	merged, err := st.Merges().Merge(ctx, "side", merge.MergeOptions{Write: wo})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Commit == nil || len(merged.Commit.Parents) != 2 {
		t.Fatalf("merge made no merge commit: %+v", merged)
	}
	rb, err := st.Delete(ctx, "docs/b.json", "", wo)
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := st.Set(ctx, "docs/c.json", "v", []byte("4"), store.WriteOptions{Agent: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	storetest.Fsck(t, st)

	p, err := policy.Parse([]byte(`{"default": "allow", "rules": [], "signers": {"alice": ["` + alice.Public + `"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{m.Commit, merged.Commit.Commit, rb.Commit} {
		body := catCommit(t, st, c)
		payload, sig := repo.SplitSigned(body)
		if v := p.VerifySignature("alice", payload, sig); v.Status != signing.Good || v.Signer != "alice" {
			t.Errorf("%s: in-process %+v", c[:12], v)
		}
		if v := p.VerifySignature("bob", payload, sig); v.Status != signing.UnknownKey {
			t.Errorf("%s as bob's: %+v", c[:12], v)
		}
	}
	if _, sig := repo.SplitSigned(catCommit(t, st, unsigned.Commit)); sig != nil {
		t.Errorf("bob's commit is signed")
	}
	if !signtest.HaveSSHKeygen() {
		t.Skip(signtest.NoSSHKeygen) // the oracle part
	}
	allowed := signtest.AllowedSigners(t, keys, map[string]signtest.Key{"alice@agents.invalid": alice})
	for _, c := range []string{m.Commit, merged.Commit.Commit, rb.Commit} {
		if out, ok := signtest.GitVerify(t, st.Dir(), allowed, c); !ok || !strings.Contains(out, `Good "git" signature`) {
			t.Errorf("git verify-commit %s: %v\n%s", c[:12], ok, out)
		}
	}
	if out, ok := signtest.GitVerify(t, st.Dir(), allowed, unsigned.Commit); ok {
		t.Errorf("bob's unsigned commit verified:\n%s", out)
	}
	if out := storetest.Git(t, st, "-c", "gpg.ssh.allowedSignersFile="+allowed, "log", "--show-signature", "-1", rb.Commit); !strings.Contains(out, `Good "git" signature for alice@agents.invalid`) {
		t.Errorf("git log --show-signature:\n%s", out)
	}
}

func catCommit(t *testing.T, st *aiwgstate.Store, c string) []byte {
	t.Helper()
	return []byte(storetest.Git(t, st, "cat-file", "commit", c))
}

// TestSigningKeyConfiguration: the write's own key comes first, then the
// agent's key in the store's git config, then user.signingKey when
// gpg.format is ssh; a key that cannot sign fails the write, which then
// writes nothing.
func TestSigningKeyConfiguration(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	keys := t.TempDir()
	alice, shared, flag := signtest.NewKey(t, keys, "alice"), signtest.NewKey(t, keys, "shared"), signtest.NewKey(t, keys, "flag")
	signedBy := func(wo store.WriteOptions) signtest.Key {
		t.Helper()
		m, err := st.Set(ctx, "docs/a.json", "v", []byte(`"`+m0()+`"`), wo)
		if err != nil {
			t.Fatal(err)
		}
		_, sig := repo.SplitSigned(catCommit(t, st, m.Commit))
		if len(sig) == 0 {
			return signtest.Key{}
		}
		for _, k := range []signtest.Key{alice, shared, flag} {
			p, _ := policy.Parse([]byte(`{"rules": [], "signers": {"x": ["` + k.Public + `"]}}`))
			payload, _ := repo.SplitSigned(catCommit(t, st, m.Commit))
			if p.VerifySignature("x", payload, sig).Status == signing.Good {
				return k
			}
		}
		t.Fatalf("signed by no known key")
		return signtest.Key{}
	}
	if k := signedBy(store.WriteOptions{Agent: "alice"}); k.Path != "" {
		t.Fatalf("unconfigured: signed by %s", k.Path)
	}
	storetest.Git(t, st, "config", "user.signingKey", shared.Path)
	if k := signedBy(store.WriteOptions{Agent: "alice"}); k.Path != "" {
		t.Fatalf("user.signingKey without gpg.format=ssh signed (git would not take it as an SSH key)")
	}
	storetest.Git(t, st, "config", "gpg.format", "ssh")
	if k := signedBy(store.WriteOptions{Agent: "bob"}); k.Path != shared.Path {
		t.Fatalf("user.signingKey: signed by %q", k.Path)
	}
	storetest.Git(t, st, "config", "aiwg.alice.signingKey", alice.Path+".pub") // the public half names the private
	if k := signedBy(store.WriteOptions{Agent: "alice"}); k.Path != alice.Path {
		t.Fatalf("aiwg.alice.signingKey: signed by %q", k.Path)
	}
	if k := signedBy(store.WriteOptions{Agent: "alice", SigningKey: flag.Path}); k.Path != flag.Path {
		t.Fatalf("WriteOptions.SigningKey: signed by %q", k.Path)
	}
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	for name, content := range map[string]string{"missing": "", "garbage": "not a key\n"} {
		path := filepath.Join(keys, name)
		if content != "" {
			os.WriteFile(path, []byte(content), 0o600)
		}
		_, err := st.Set(ctx, "docs/a.json", "v", []byte(`"x"`), store.WriteOptions{Agent: "alice", SigningKey: path})
		if !errors.Is(err, store.ErrSigningKey) {
			t.Errorf("%s key: %v", name, err)
		}
	}
	if got := storetest.Git(t, st, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a failed signing moved the branch")
	}
	storetest.Fsck(t, st)
}

var counter int

func m0() string { counter++; return strings.Repeat("x", counter) }

// TestSignedCheckpointsVerifyWithGit: a checkpoint is an annotated tag;
// made for an agent with a key, it is signed as git tag -s signs, and git
// verify-tag accepts it. A rollback to it is a signed commit.
func TestSignedCheckpointsVerifyWithGit(t *testing.T) {
	signtest.NeedSSHKeygen(t)
	ctx := context.Background()
	st := storetest.New(t)
	keys := t.TempDir()
	alice := signtest.NewKey(t, keys, "alice")
	storetest.Git(t, st, "config", "aiwg.alice.signingKey", alice.Path)
	wo := store.WriteOptions{Agent: "alice"}
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "p"}, wo)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := st.States().CreateCheckpoint(ctx, info.Header.StateID, "second", "", wo)
	if err != nil {
		t.Fatal(err)
	}
	allowed := signtest.AllowedSigners(t, keys, map[string]signtest.Key{"alice@agents.invalid": alice})
	for _, ref := range []string{ck.Ref, "refs/tags/checkpoints/" + info.Header.StateID + "/" + rlm.InitialCheckpoint} {
		out, err := exec.Command("git", "--git-dir", st.Dir(), "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-tag", "-v", ref).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `Good "git" signature`) {
			t.Errorf("git verify-tag %s: %v\n%s", ref, err, out)
		}
	}
	if _, err := st.States().SetVar(ctx, info.Header.StateID, "x", 1, rlm.VarOptions{}, wo); err != nil {
		t.Fatal(err)
	}
	m, _, err := st.States().Rollback(ctx, info.Header.StateID, rlm.InitialCheckpoint, rlm.RollbackOptions{}, wo)
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := signtest.GitVerify(t, st.Dir(), allowed, m.Commit); !ok {
		t.Errorf("rollback commit:\n%s", out)
	}
	storetest.Fsck(t, st)
}

// TestWritesThePolicyWouldRefuseFailInProcess: where the policy requires
// an agent to sign, its write fails before anything is written (ErrDenied)
// without a key, or with a key the policy lists for someone else; with
// its own key it lands. Agents the policy does not name write unsigned.
func TestWritesThePolicyWouldRefuseFailInProcess(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	keys := t.TempDir()
	alice, bob := signtest.NewKey(t, keys, "alice"), signtest.NewKey(t, keys, "bob")
	pol := `{"default": "allow", "rules": [], "require_signed": ["alice"], "signers": {"alice": ["` + alice.Public + `"], "bob": ["` + bob.Public + `"]}}`
	if _, err := st.SetPolicy(ctx, []byte(pol), store.WriteOptions{Agent: "admin"}); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	for name, wo := range map[string]store.WriteOptions{
		"no key":    {Agent: "alice"},
		"bob's key": {Agent: "alice", SigningKey: bob.Path},
	} {
		_, err := st.Set(ctx, "docs/a.json", "v", []byte("1"), wo)
		if !errors.Is(err, store.ErrDenied) {
			t.Errorf("%s: %v, want ErrDenied", name, err)
		}
	}
	if storetest.Git(t, st, "rev-parse", "HEAD") != head {
		t.Fatal("a refused write moved the branch")
	}
	if _, err := st.Set(ctx, "docs/a.json", "v", []byte("1"), store.WriteOptions{Agent: "alice", SigningKey: alice.Path}); err != nil {
		t.Fatalf("alice's own key: %v", err)
	}
	if _, err := st.Set(ctx, "docs/b.json", "v", []byte("1"), store.WriteOptions{Agent: "carol"}); err != nil {
		t.Fatalf("an agent that need not sign: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestSigningKeyChangesAreSeenAtOnce: a store kept open (as a server
// keeps one) signs with the key configured now, even when the config is
// rewritten within the same tick of the file clock to the same length.
func TestSigningKeyChangesAreSeenAtOnce(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	keys := t.TempDir()
	k1, k2 := signtest.NewKey(t, keys, "key1"), signtest.NewKey(t, keys, "key2")
	p, err := policy.Parse([]byte(`{"rules": [], "signers": {"a": ["` + k1.Public + `"], "b": ["` + k2.Public + `"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []signtest.Key{k1, k2, k1, k2} {
		storetest.Git(t, st, "config", "aiwg.alice.signingKey", k.Path)
		m, err := st.Set(ctx, "docs/a.json", "v", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		payload, sig := repo.SplitSigned(catCommit(t, st, m.Commit))
		if v := p.VerifySignature("x", payload, sig); v.Signer != map[string]string{k1.Path: "a", k2.Path: "b"}[k.Path] {
			t.Fatalf("write %d: signed by %q, want the key just configured (%s)", i, v.Signer, filepath.Base(k.Path))
		}
	}
}
