// Package repo is how the store is versioned: a bare git repository read
// and written by hand (go-git's plumbing types are its vocabulary), with no
// index and no work tree.
//
// A write is a transaction: the caller's function reads files at the branch
// head and stages new file contents; repo turns that into a blob per changed
// file, a tree per directory on a changed path (untouched subtrees keep their
// hashes), and a commit, writes them as one small pack, and moves the branch
// with git's own lockfile protocol (<ref>.lock created exclusively, old value
// compared, written, fsynced, renamed). When the branch moved underneath, the
// function is run again on the new head, so concurrent writers, in this
// process, in other processes or in the git CLI, never lose an update.
//
// Why a pack per commit rather than loose objects: a mutation creates a
// blob, one tree per directory level and a commit. As loose objects that is
// four or more files, each a create, write, fsync and rename, and file
// creation dominates the cost of a write on the machines we measured. A pack
// holds them all in two files (.pack and .idx) however deep the path is, and
// git, go-git and every git server read it. Small packs are rolled up by
// `git repack --geometric` (see Repo.Maintain), as git's own maintenance does.
//
// repo knows nothing of JSON: it stores bytes at paths. Its sentinel errors
// (ErrNotFound, ErrStale, ErrLocked, ErrNoChange, ErrInvalidName) are what
// callers map to exit codes.
package repo
