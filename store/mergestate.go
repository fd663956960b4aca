package store

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// A merge that stops on conflicts is kept in progress under a ref of its
// own (MergeRefPrefix), and no write proceeds on its branch until it is
// continued or aborted. Package merge makes, resolves and finishes it; the
// core keeps the ref's names and the guard every write passes.

// ErrConflict: a merge left conflicts to resolve, or a branch has a merge
// in progress that blocks writes until `merge --continue` or
// `merge --abort`. The CLI exits 4.
var ErrConflict = errors.New("unresolved merge conflicts")

// OpMerge is the Operation trailer of a merge commit, one per merged path.
const OpMerge = "merge"

// TrailerMergeRecord names the merge-in-progress commit a
// `merge --continue` finishes (see MergeRefPrefix).
const TrailerMergeRecord = "Merge-Record"

// MergeRefPrefix is where a merge in progress is kept: the ref
// refs/aiwg/merge/<branch> points at a commit whose tree holds
//
//	merge.json         what is merged: into, from, ours, theirs, bases,
//	                   strategy override, the deleted paths
//	result/<path>      the merged content of every path that differs from
//	                   ours (ours' value stands at each unresolved key)
//	conflicts/<path>   one jsonmerge.Record per file with something to resolve:
//	                   base, ours and theirs per key path, as JSON data
//
// and whose parents are ours and theirs (so gc keeps them); each resolve
// adds a commit on top, so the resolution has a history too. A ref rather
// than files in the git dir because it is updated atomically with git's
// lockfile protocol (a resolve is a compare-and-swap), git fsck checks it,
// it survives gc, and it can be pushed for someone else to resolve. The
// branch itself is untouched until `merge --continue`, so `--abort` is
// only the deletion of the ref.
const MergeRefPrefix = "refs/aiwg/merge/"

// MergeConflictsDir is the folder of a merge in progress's tree holding
// what is left to resolve, one record per file (see MergeRefPrefix).
const MergeConflictsDir = "conflicts/"

// MergeRef is the ref of the merge in progress on a branch (a full ref
// name or a short one).
func MergeRef(branchRef string) string {
	return MergeRefPrefix + strings.TrimPrefix(branchRef, "refs/heads/")
}

// checkConflicts refuses every write on a branch with a merge in progress,
// except the commit of `merge --continue` that finishes it.
func (s *Store) checkConflicts(tx *repo.Tx, wo WriteOptions, changes []Change) error {
	ref := s.RefTarget(s.Ref(wo.Branch)) // an alias's merge is its branch's
	state, err := s.repo.Ref(MergeRef(ref))
	if errors.Is(err, repo.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, t := range wo.Trailers {
		if t.Key == TrailerMergeRecord && t.Value == state.String() {
			n, err := s.countConflicts(state)
			if err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
		}
	}
	return &MergeInProgressError{Branch: strings.TrimPrefix(ref, "refs/heads/")}
}

// HasConflicts reports whether branch ("" = the default branch) has a merge
// in progress: conflicts left to resolve, or resolved but not yet
// committed with `merge --continue`. No write proceeds on such a branch,
// and a push of it should not either.
func (s *Store) HasConflicts(branch string) (bool, error) {
	_, err := s.repo.Ref(MergeRef(s.RefTarget(s.Ref(branch))))
	if errors.Is(err, repo.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Store) countConflicts(state plumbing.Hash) (int, error) {
	n := 0
	err := s.repo.Walk(s.TreeOf(state), strings.TrimSuffix(MergeConflictsDir, "/"), func(string, plumbing.Hash) error {
		n++
		return nil
	})
	if errors.Is(err, repo.ErrNotFound) {
		return 0, nil
	}
	return n, err
}

func shortBranch(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }

// MergeCommit makes a write a merge commit (CommitMerge).
type MergeCommit struct {
	// Ours is the head the branch must still be at; Theirs is the commit
	// merged in, its second parent.
	Ours, Theirs plumbing.Hash
	// UpstreamFirst makes Theirs, the branch's own upstream, the first
	// parent (repo.CommitInfo.UpstreamFirst).
	UpstreamFirst bool
}

// CommitMerge is Commit for a merge of mc.Theirs into the branch at
// mc.Ours: the commit has both as parents and is written even when its
// tree is ours', only while the branch is still at ours; it carries a
// Merged-Commit trailer, by which the access policy tells what the merge
// brought in from what it decided (policy.go), and a Clock past both
// sides'. Every guard judges it as any other write.
func (s *Store) CommitMerge(ctx context.Context, wo WriteOptions, mc MergeCommit, subject string, build func(*repo.Tx, *Recorder) error) (*Mutation, error) {
	wo.Trailers = append(append(repo.Trailers{}, wo.Trailers...), repo.Trailer{Key: TrailerMergedCommit, Value: mc.Theirs.String()})
	wo.mergeParents = []plumbing.Hash{mc.Theirs}
	wo.upstreamFirst = mc.UpstreamFirst
	wo.expectHead = &mc.Ours
	return s.Commit(ctx, wo, subject, build)
}
