package store

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// A Guard runs inside every write transaction, after the operation has
// staged its changes and before the commit is written; an error aborts the
// write and nothing is committed. The core's own rules (sizes, the store's
// settings, unresolved conflicts, the state document, the access policy,
// signatures) run first, then the guards the store was opened with
// (Options.Guards), in order: each feature that keeps rules over its files
// owns one.
type Guard func(s *Store, tx *repo.Tx, wo WriteOptions, changes []Change) error

// An AfterCommit runs after a commit is published on its branch. Its
// errors do not undo the commit (it is already visible to others); they
// are returned to the caller with the mutation.
type AfterCommit func(s *Store, m *Mutation, wo WriteOptions, changes []Change) error

// A FastForwardGuard judges a fast-forward of a branch from ours to
// theirs, which writes no commit for the guards to judge: what the branch
// brings must meet the rules as the branch has them.
type FastForwardGuard func(s *Store, ours, theirs plumbing.Hash) error

// CheckFastForward runs the core's rules, then the store's
// FastForwardGuards, over a fast-forward from ours to theirs.
func (s *Store) CheckFastForward(ours, theirs plumbing.Hash) error {
	checks := []func(ours, theirs plumbing.Hash) error{
		s.checkSettingsFastForward, // manifest.go: the policy and manifest stay readable
	}
	for _, g := range s.fastForward {
		checks = append(checks, func(ours, theirs plumbing.Hash) error { return g(s, ours, theirs) })
	}
	for _, check := range checks {
		if err := check(ours, theirs); err != nil {
			return err
		}
	}
	return nil
}

// writeCheck is a guard bound to its store.
type writeCheck func(tx *repo.Tx, wo WriteOptions, changes []Change) error

// writeChecks lists the guards every write passes, in order.
func (s *Store) writeChecks() []writeCheck {
	checks := []writeCheck{
		checkSizes,            // manifest.go: every file within limits.max_document_bytes
		checkSettings,         // manifest.go: the policy and manifest stay readable
		s.checkConflicts,      // mergestate.go: no write on a branch with unresolved conflicts
		s.checkRuledDocuments, // statedoc.go: verbiage-ruled documents stay valid
		s.checkPolicy,         // policy.go: the agent may write these paths
		s.checkSigner,         // signing.go: a required signature, with a key the policy lists
		checkTTLFiles,         // ttl.go: time-to-live files read as such
	}
	for _, g := range s.guards {
		checks = append(checks, func(tx *repo.Tx, wo WriteOptions, changes []Change) error { return g(s, tx, wo, changes) })
	}
	return checks
}

// afterCommits lists what runs once a write is published, in order.
func (s *Store) afterCommits() []func(*Mutation, WriteOptions, []Change) error {
	after := []func(*Mutation, WriteOptions, []Change) error{
		s.indexCommit, // audit.go: the changed-paths index
	}
	for _, a := range s.after {
		after = append(after, func(m *Mutation, wo WriteOptions, changes []Change) error { return a(s, m, wo, changes) })
	}
	return after
}
