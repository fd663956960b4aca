package aiwgstate

import (
	"context"
	"errors"
	"fmt"

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
// agent is the commit's author.
func (s *Store) checkPolicy(tx *repo.Tx, wo WriteOptions, changes []Change) error {
	p, err := s.policyAt(tx.Parent())
	if errors.Is(err, policy.ErrInvalid) {
		return s.checkPolicyRepair(tx, wo, err)
	}
	if err != nil || p == nil {
		return err
	}
	agent := s.agentName(wo.Agent) // as commit names the author
	theirs := mergedTree(s, wo)
	for _, path := range tx.Changed() {
		if !theirs.IsZero() && takenFrom(s, tx, theirs, path) {
			continue // the merge brings it as it is on the other side
		}
		if err := p.Check(agent, path); err != nil {
			return err
		}
	}
	return nil
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
			return errkind.Errorf(ErrInvalidRecord, "%v; until then no other write is accepted", broken)
		}
	}
	last, err := s.lastValidPolicy(tx.Parent())
	if err != nil {
		return err
	}
	return last.Check(AgentName(wo.Agent), policy.Path)
}

// maxPolicyHistory bounds the walk back for a policy that parses: a
// history that long with a broken policy all the way denies the repair
// to all but those the empty policy allows (no one), not hang.
const maxPolicyHistory = 10000

// lastValidPolicy is the policy of the newest commit on commit's
// first-parent history whose policy parses; nil when that commit has
// none (an open store).
func (s *Store) lastValidPolicy(commit plumbing.Hash) (*policy.Policy, error) {
	for i := 0; i < maxPolicyHistory && !commit.IsZero(); i++ {
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
		if p, err := policy.Parse(data); err == nil {
			return p, nil
		}
		commit = plumbing.ZeroHash
		if len(c.Parents) > 0 {
			commit = c.Parents[0]
		}
	}
	if commit.IsZero() {
		return nil, nil
	}
	return policy.Parse([]byte(`{"rules": []}`)) // deny
}

// TrailerMergedCommit names the commit a merge brings in (pull, sync and
// integrate add it). The policy judges a merge only on what the merge
// itself decides, as the server's hook does: a path whose merged content
// is the other side's was written by that side's authors, whose commits
// are judged on their own.
const TrailerMergedCommit = "Merged-Commit"

func mergedTree(s *Store, wo WriteOptions) plumbing.Hash {
	v := repo.Trailers(wo.Trailers).Get(TrailerMergedCommit)
	if !plumbing.IsHash(v) {
		return plumbing.ZeroHash
	}
	c, err := s.repo.ReadCommit(plumbing.NewHash(v))
	if err != nil {
		return plumbing.ZeroHash
	}
	return c.Tree
}

// takenFrom reports whether path holds in tx what it holds in tree.
func takenFrom(s *Store, tx *repo.Tx, tree plumbing.Hash, path string) bool {
	staged, err := tx.ReadFile(path)
	stagedMissing := errors.Is(err, repo.ErrNotFound)
	if err != nil && !stagedMissing {
		return false
	}
	theirs, err := s.repo.ReadFileAt(tree, path)
	if errors.Is(err, repo.ErrNotFound) {
		return stagedMissing
	}
	return err == nil && !stagedMissing && string(staged) == string(theirs)
}

// policyAt reads the policy of a commit; nil when it has none.
func (s *Store) policyAt(commit plumbing.Hash) (*policy.Policy, error) {
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
		return nil, fmt.Errorf("%w (aiwg-state policy set FILE repairs it)", err)
	}
	return p, nil
}

// Policy returns the access policy at a revision ("" = the default
// branch's head); nil when the store has none (every write is allowed).
func (s *Store) Policy(ctx context.Context, ro ReadOptions) (*policy.Policy, error) {
	h, err := s.Resolve(revName(ro), ro.Branch)
	if err != nil {
		return nil, err
	}
	return s.policyAt(h)
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
	return s.commit(ctx, wo, "set access policy", func(tx *repo.Tx, rec *recorder) error {
		op := OpUpdate
		if ok, _ := tx.Exists(policy.Path); !ok {
			op = OpCreate
		}
		if err := tx.WriteFile(policy.Path, canon); err != nil {
			return err
		}
		rec.add(op, policy.Path, "")
		return nil
	})
}
