// Package merge merges a store's branches three ways with the resolver
// strategies of the swarm shared state specification, and keeps what it
// cannot settle as data to resolve, never as conflict markers.
//
// Where each part is:
//
//   - The rules are in package merge/jsonmerge: the three-way merge of
//     JSON documents and files key by key, the strategies, how
//     .gitattributes assigns them, the git merge driver, the record of a
//     conflict, and the hybrid logical clock last-write-wins orders writes
//     by. It knows nothing of git or of a store, so the packages below
//     the core use it too.
//   - The Go API is the handle Merges (aiwgstate.Store.Merges): Merge
//     (merges.go: fast-forward, or the three-way merge of two commits'
//     trees over a recursive virtual base, base.go); Conflicts, Resolve,
//     Continue and Abort of a merge in progress (inprogress.go); Verify,
//     which recomputes a merge commit (verify.go); Strategies,
//     SetStrategy and ExplainStrategy, the strategies in .gitattributes
//     (rules.go). InstallDrivers registers the git merge drivers in a
//     clone (install.go).
//   - The guards are the core's: the merge-in-progress ref, which every
//     write on its branch is refused by until the merge is continued or
//     aborted (store/mergestate.go), the clocks every commit carries
//     (store/clock.go), and the access policy's judgement of what a merge
//     brings (store/mergepolicy.go), which Merge asks before anything
//     moves, as it asks the store's fast-forward rules before it
//     fast-forwards. A merge commit passes every write guard
//     (store.CommitMerge). This package adds no guard.
//   - The CLI is cmd/aiwg-state/cmd_merge.go (with merge.go), cmd_conflicts.go,
//     cmd_resolve.go, cmd_strategy.go (with strategy.go), cmd_merge_file.go
//     (the git merge driver) and cmd_install_drivers.go.
//
// The remote workflows that merge what they fetch (pull, sync, integrate)
// are package remote's.
package merge
