// Package store is the porcelain of aiwg-state, a versioned state store
// for AI agents kept in a dedicated git repository: what a Go program (an
// agent, a coordinator, the aiwg-state CLI itself) calls to keep, read,
// audit and merge agent state.
//
// A Store is a bare git repository. Every mutation (Set, Put, Delete, Move,
// or a batch of them through Apply) is exactly one commit on a branch, whose
// author is the agent and whose trailers carry the mutation id, operation,
// path, source and correlation id, so the commit log is the audit log.
// Documents are canonical JSON files, so git diff and git blame read key by
// key, and a write that changes nothing writes no commit.
//
// Reads take a revision: a branch, tag, commit, HEAD~N, or an RFC 3339
// time. Reads never write.
//
// The layers below are usable on their own: verbiage (key paths and names),
// objects (the canonical JSON codec and document operations), repo (git
// objects, refs and transactions), merge/jsonmerge (three-way JSON merge).
package store
