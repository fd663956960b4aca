package store

import (
	"github.com/aiwg/aiwg-state/repo"
)

// writeCheck runs inside every write transaction, after the operation has
// staged its changes and before the commit is written; an error aborts the
// write and nothing is committed. Each concern that guards writes (merge
// conflicts, verbiage-ruled documents, access policy) owns one.
type writeCheck func(tx *repo.Tx, wo WriteOptions, changes []Change) error

// afterCommit runs after a commit is published on its branch. Its errors
// do not undo the commit (it is already visible to others); they are
// returned to the caller with the mutation.
type afterCommit func(m *Mutation, wo WriteOptions, changes []Change) error

// writeChecks lists the guards every write passes, in order.
func (s *Store) writeChecks() []writeCheck {
	return []writeCheck{
		checkSizes,            // manifest.go: every file within limits.max_document_bytes
		checkSettings,         // manifest.go: the policy and manifest stay readable
		s.checkConflicts,      // merge.go: no write on a branch with unresolved conflicts
		s.checkRuledDocuments, // statedoc.go: verbiage-ruled documents stay valid
		s.checkPolicy,         // policy.go: the agent may write these paths
		s.checkSigner,         // signing.go: a required signature, with a key the policy lists
		checkTrajectoryLink,   // traj.go: a linked trajectory exists
		checkRecords,          // records.go: lease, memory and queue files stay records
		s.checkLeaseHolders,   // lease.go: others' leases are released by force only by a lease_admin
		s.checkSchemas,        // schemas.go: ruled documents meet their JSON Schema
	}
}

// afterCommits lists what runs once a write is published, in order.
func (s *Store) afterCommits() []afterCommit {
	return []afterCommit{
		s.indexCommit,   // audit.go: the changed-paths index
		s.runCompletion, // rlm.go: completion handlers when Final is set
	}
}
