package store

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
)

// ErrDenied: the store's rules refuse the write or the push: the access
// policy (.aiwg/policy.json), or a remote's server-side checks. The CLI
// exits 3.
var ErrDenied = policy.ErrDenied

// PolicyPath is where the store keeps its access policy.
const PolicyPath = policy.Path

// checkPolicy applies the access policy in force at the branch head before
// the write (never the one the write brings: changing the policy is itself
// a write the old policy must allow) to every path the write changes. The
// agent is the commit's author. A merge is judged on what it did not take
// cleanly from its parents (mergepolicy.go), as the server's hook judges it.
func (s *Store) checkPolicy(tx *repo.Tx, wo WriteOptions, changes []Change) error {
	p, err := s.PolicyAt(tx.Parent())
	if errors.Is(err, policy.ErrInvalid) {
		return s.checkPolicyRepair(tx, wo, err)
	}
	if err != nil {
		return err
	}
	agent := s.Agent(wo.Agent) // as commit names the author
	pr, err := s.profileInForce(tx, agent)
	if err != nil || (p == nil && pr == nil) {
		return err
	}
	paths := tx.Changed()
	if len(wo.mergeParents) > 0 {
		if paths, err = s.mergeTxWrites(tx, wo.mergeParents); err != nil {
			return err
		}
	}
	for _, path := range paths {
		if p != nil {
			if err := p.Check(agent, path); err != nil {
				return err
			}
		}
		if err := pr.CheckWrite(agent, path); err != nil {
			return err
		}
	}
	return nil
}

// profileInForce is the sandbox profile the policy in force (that of the
// default branch, PolicyHead) gives agent, when a write to tx's branch
// must meet it besides its branch's own policy: as the server's hook
// judges every push by its default branch, else a branch made from a
// commit older than the policy, or than the agent's profile, would take
// any write. The rules stay those of the branch written, so the policy
// itself is still changed only as the policy in force there allows. Nil
// on the default branch itself (its policy is the branch's), and when the
// default branch has no commit (the branch's own policy judges alone).
func (s *Store) profileInForce(tx *repo.Tx, agent string) (*policy.Profile, error) {
	head, err := s.PolicyHead()
	if errors.Is(err, ErrNoPolicyHead) || (err == nil && (head.IsZero() || head == tx.Parent())) {
		return nil, nil
	}
	var def *policy.Policy
	if err == nil {
		def, err = s.PolicyAt(head)
	}
	if err != nil {
		return nil, fmt.Errorf("the access policy in force: %w", err)
	}
	if def == nil {
		return nil, nil
	}
	pr, _ := def.ProfileOf(agent)
	return pr, nil
}

// checkPolicyRepair judges a write while the policy in force is broken
// (written by plain git, or pushed to a server that did not check it):
// such a policy answers nothing, so the only write accepted is one that
// repairs it, changing .aiwg/policy.json alone, and who may make it is
// decided by the last policy of the branch's first-parent history that
// parses (none: the store was open, and still is to this one write).
// Every other write is refused with the reason, rather than failing on
// the broken file forever: `policy set` is always the way out.
func (s *Store) checkPolicyRepair(tx *repo.Tx, wo WriteOptions, broken error) error {
	for _, path := range tx.Changed() {
		if path != policy.Path {
			return &BrokenFileError{Kind: BrokenPolicy, File: policy.Path, Err: errkind.Errorf(ErrInvalidRecord, "%v; until then no other write is accepted", broken)}
		}
	}
	last, err := s.lastValidPolicy(tx.Parent())
	if err != nil {
		return err
	}
	if err := last.Check(s.Agent(wo.Agent), policy.Path); err != nil {
		return err
	}
	pr, err := s.profileInForce(tx, s.Agent(wo.Agent))
	if err != nil {
		return err
	}
	return pr.CheckWrite(s.Agent(wo.Agent), policy.Path)
}

// lastValidPolicy is the policy of the newest commit on commit's
// first-parent history whose policy parses (see LastValidPolicy).
func (s *Store) lastValidPolicy(commit plumbing.Hash) (*policy.Policy, error) {
	return LastValidPolicy(s.firstParents(commit))
}

// rawFiles reads the files of a tree as stored, a symlink as its target's
// name: what the store's settings are read with.
type rawFiles struct {
	r    *repo.Repo
	root plumbing.Hash
}

func (f rawFiles) ReadFile(path string) ([]byte, error) { return f.r.ReadFileAt(f.root, path) }

// firstParents walks the first-parent history from commit, newest first,
// yielding each commit's files.
func (s *Store) firstParents(commit plumbing.Hash) iter.Seq2[Files, error] {
	return func(yield func(Files, error) bool) {
		for !commit.IsZero() {
			c, err := s.repo.ReadCommit(commit)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(rawFiles{r: s.repo, root: c.Tree}, nil) {
				return
			}
			commit = plumbing.ZeroHash
			if len(c.Parents) > 0 {
				commit = c.Parents[0]
			}
		}
	}
}

// TrailerMergedCommit names the commit a merge brings in (pull, sync and
// integrate add it), for whoever reads the history; the policy reads the
// merge's parents themselves.
const TrailerMergedCommit = "Merged-Commit"

// mergeTxWrites is the paths a merge staged in tx writes itself: of those
// it changes, and of those the merged commits changed (which the merge may
// throw away), the ones it does not take cleanly from its parents.
func (s *Store) mergeTxWrites(tx *repo.Tx, merged []plumbing.Hash) ([]string, error) {
	paths := tx.Changed()
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p] = true
	}
	ours := s.TreeOf(tx.Parent())
	for _, m := range merged {
		files, err := s.repo.DiffTrees(ours, s.TreeOf(m))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if !seen[f.Path] {
				seen[f.Path] = true
				paths = append(paths, f.Path)
			}
		}
	}
	parents := append([]plumbing.Hash{tx.Parent()}, merged...)
	return s.mergeWrites(parents, paths, func(path string) (string, error) {
		data, err := tx.ReadFile(path)
		if errors.Is(err, repo.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, data).String(), nil
	})
}

// PolicyAt reads the policy of a commit; nil when it has none.
func (s *Store) PolicyAt(commit plumbing.Hash) (*policy.Policy, error) {
	if commit.IsZero() {
		return nil, nil
	}
	c, err := s.repo.ReadCommit(commit)
	if err != nil {
		return nil, err
	}
	data, err := s.repo.ReadFileAt(c.Tree, policy.Path)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := policy.Parse(data)
	if err != nil {
		return nil, &BrokenFileError{Kind: BrokenPolicy, File: policy.Path, Err: err}
	}
	return p, nil
}

// Policy returns the access policy at a revision ("" = the default
// branch's head); nil when the store has none (every write is allowed).
func (s *Store) Policy(ctx context.Context, ro ReadOptions) (*policy.Policy, error) {
	h, err := s.Resolve(RevName(ro), ro.Branch)
	if err != nil {
		return nil, err
	}
	return s.PolicyAt(h)
}

// SetPolicy validates and writes the access policy (.aiwg/policy.json) as
// one commit. The policy in force judges the change: once a policy exists,
// only an agent it lets write .aiwg/policy.json can change it.
func (s *Store) SetPolicy(ctx context.Context, data []byte, wo WriteOptions) (*Mutation, error) {
	if _, err := policy.Parse(data); err != nil {
		return nil, err
	}
	canon, err := objects.Canonical(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", policy.Path, err)
	}
	return s.Commit(ctx, wo, "set access policy", func(tx *repo.Tx, rec *Recorder) error {
		op := OpUpdate
		if ok, _ := tx.Exists(policy.Path); !ok {
			op = OpCreate
		}
		if err := tx.WriteFile(policy.Path, canon); err != nil {
			return err
		}
		rec.Add(op, policy.Path, "")
		return nil
	})
}

// ErrNoPolicyHead: the default branch has no commit while the store has
// other branches, so the policy in force cannot be read; what depends on
// an agent's profile is refused (fail closed) rather than judged by none.
var ErrNoPolicyHead = fmt.Errorf("%w: the default branch has no commit, so the access policy in force cannot be read", ErrDenied)

// PolicyHead is the commit whose access policy is in force for the whole
// store: the head of the branch HEAD names (read afresh, never the branch
// a command opened with -b, nor a revision it reads), or of main while
// HEAD's branch has no commit, as the server's hook takes its default
// branch. Zero when the store has no commit on any branch (no policy can
// be in force); ErrNoPolicyHead when the default branch has none but other
// branches do. Judging sandbox profiles by it is what keeps an agent from
// escaping its profile with -b, --at, or a branch made from an old commit.
func (s *Store) PolicyHead() (plumbing.Hash, error) {
	h, err := s.repo.Ref("HEAD")
	if err == nil {
		return h, nil
	}
	if !errors.Is(err, repo.ErrNotFound) {
		return plumbing.ZeroHash, err
	}
	if h, err := s.repo.Ref("refs/heads/main"); err == nil {
		return h, nil
	} else if !errors.Is(err, repo.ErrNotFound) {
		return plumbing.ZeroHash, err
	}
	heads, _, err := s.repo.Refs("refs/heads/")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(heads) > 0 {
		return plumbing.ZeroHash, ErrNoPolicyHead
	}
	return plumbing.ZeroHash, nil
}

// PolicyInForce is the access policy at PolicyHead: nil when there is
// none.
func (s *Store) PolicyInForce() (*policy.Policy, plumbing.Hash, error) {
	h, err := s.PolicyHead()
	if err != nil || h.IsZero() {
		return nil, h, err
	}
	p, err := s.PolicyAt(h)
	return p, h, err
}

// MayMoveHead is nil when agent may point HEAD at branch. Moving HEAD
// moves the policy in force for every later command (see PolicyHead), so
// when branch's head holds another policy than the one in force, the agent
// needs the right to change the policy: to write .aiwg/policy.json under
// the policy in force, its sandbox profile included.
func (s *Store) MayMoveHead(agent, branch string) error {
	cur, curHead, err := s.PolicyInForce()
	if err != nil && !errors.Is(err, ErrNoPolicyHead) {
		return err
	}
	if cur == nil && err == nil {
		return nil // no policy in force: nothing to escape
	}
	target, err := s.repo.Ref(branchRef(branch))
	if err != nil {
		return nil // the move itself says why not
	}
	if target == curHead {
		return nil
	}
	if cur != nil && !curHead.IsZero() {
		a, aerr := s.repo.ReadFileAt(s.TreeOf(curHead), policy.Path)
		b, berr := s.repo.ReadFileAt(s.TreeOf(target), policy.Path)
		if aerr == nil && berr == nil && string(a) == string(b) {
			return nil
		}
	}
	if cur == nil {
		return ErrNoPolicyHead
	}
	if err := cur.Check(agent, policy.Path); err != nil {
		return fmt.Errorf("moving HEAD to %s would change the access policy in force: %w", branch, err)
	}
	return nil
}
