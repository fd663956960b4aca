// Package lease is the swarm shared state specification's leases: locks
// with a time to live that agents take on a resource, exclusive or shared,
// and the queue of those waiting for one.
//
// Where each part is:
//   - The rules (lease.go, foreign.go): a resource's Record, who holds it,
//     who waits, in what order, and what a request, renewal or release
//     does to that. They know no git.
//   - The Go API (leases.go): Leases, reached as aiwgstate.Store.Leases,
//     keeps a Record as a file, leases/<resource>.json, and applies the
//     rules' decisions inside the commit that records them, so that two
//     agents deciding at once are ordered by the branch's lock, and log
//     and blame of the file are the history of who held it. A refused
//     acquire, a queued wait, a lease found run out and a forced release
//     record their event (lock.contention, lock.expired,
//     lock.force_released; package event) in that same commit.
//   - The guards (leases.go), registered by package aiwgstate: RecordGuard
//     keeps every file under leases/ a lease record; HolderGuard keeps
//     other agents' leases theirs (a forced release is for the access
//     policy's lease_admin role), whatever the write: put, set, a merge.
//   - The CLI: cmd/aiwg-state/cmd_lease.go (aiwg-state lease).
package lease
