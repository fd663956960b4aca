// Package remote holds the workflows that move a store through a git
// server and merge what arrives: pull, an agent's sync, a coordinator's
// integrate, and the agents' own branches (agents/<id>/<name>) they work
// on. What travels is git's; what arrives is merged by package merge with
// the resolver strategies, and conflicts persist as data, never as
// markers.
//
// At scale: an agent's sync fetches main and its own branch only (the
// server advertises just those, protocol v2 ref prefixes) and pushes its
// branch alone; integrate reads one ref advertisement and fetches and
// merges only the branches that moved since its last pass; a branch that
// conflicts gets a conflict record in the branch integrated into
// (ConflictDir), which the agent's next sync shows and can settle; and
// large swarms integrate in shards (ShardOf, a jump consistent hash of the
// agent id) into integration/K, merged into main by a top-level pass.
//
// Where each part is:
//
//   - The Go API is the handle Swarm (aiwgstate.Store.Swarm): Pull,
//     Sync, Integrate and StartAgent; AgentBranch names an agent's branch.
//   - The transport is the core's (package store: Remotes, AddRemote,
//     RemoveRemote, Fetch, Deepen, Push, Clone): git's protocols, no
//     merge. A push of a branch with a merge in progress is refused
//     there.
//   - The rules are the core's and package merge's: a merge judges what it
//     brings with the access policy before anything moves, and every
//     commit passes the store's guards. This package adds no guard.
//   - The CLI is cmd/aiwg-state/cmd_pull.go, cmd_sync.go, cmd_integrate.go
//     and cmd_agent.go (agent start), with the flags they share in
//     cmd/aiwg-state/remote.go.
package remote
