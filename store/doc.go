// Package store is the core of aiwg-state, a versioned state store for AI
// agents kept in a dedicated git repository: documents, their history,
// branches, and the rules every write passes. Programs open a store with
// package aiwgstate, which adds the features' rules and handles; this
// package is what those features build on.
//
// A Store is a bare git repository. Every mutation (Set, Put, Delete, Move,
// or a batch of them through Apply) is exactly one commit on a branch, whose
// author is the agent and whose trailers carry the mutation id, operation,
// path, source and correlation id, so the commit log is the audit log.
// Documents are canonical JSON files, so git diff and git blame read key by
// key, and a write that changes nothing writes no commit. Reads take a
// revision: a branch, tag, commit, HEAD~N, or an RFC 3339 time. Reads never
// write.
//
// Where each part is:
//   - Opening and options: store.go, options.go (every verb's options, each
//     validating itself), errors.go (typed errors; the CLI adds hints).
//   - Reads and writes: read.go, write.go (Commit and its Recorder, the one
//     way a commit is made), ops.go (batches as JSON Lines).
//   - History: log.go, diff.go, audit.go (blame, bisect; the index is
//     package audit), watch.go.
//   - Branches and the merge-in-progress ref: branch.go, mergestate.go,
//     clock.go (the hybrid logical clock every commit carries), remote.go
//     (git's transport: fetch, push, clone).
//   - The rules every write passes: guard.go (the core's guards, and the
//     Guard, AfterCommit, FastForwardGuard and FsckCheck types features
//     register), rules.go (the rules over a revision's files that the
//     server's hook shares), policy.go and mergepolicy.go (the access
//     policy, merges included), signing.go, manifest.go and config.go (the
//     store's settings), records.go.
//   - The state document: statedoc.go (verbiage-ruled documents, which
//     every Get and Set goes through) and statedocument.go (its verbs).
//   - Upkeep: maintain.go, fsck.go.
package store
