// Package rlm is RLM state: the domain of the RLM State Schema and its
// keeping in a store.
//
// The rules (variable.go, export.go, schema.go) are variables and their
// eight types, scopes and where each lives in the store's tree, the
// specification's limits, large values kept in a file beside their
// variable, and the export document that conforms to the specification's
// schema; they know JSON and store paths, not git.
//
// Over them, the store's RLM state:
//
//   - The Go API is the States handle (aiwgstate.Store.States): states
//     (Init, End, List, Get), variables (SetVar, Var, Vars, DeleteVar,
//     RenameVar, RemoveExpired), Final (SetFinal), checkpoints and rollback
//     (CreateCheckpoint, Checkpoints, Rollback, RollbackHard; checkpoints.go,
//     over package checkpoint's tags), export and import (store.go), and
//     completion handlers with their trust on this machine (store.go,
//     trust.go). Each write is one commit.
//   - RunCompletion (a store.AfterCommit, wired in the root package) runs the
//     completion handlers of a state whose Final a commit set.
//   - The CLI is cmd/aiwg-state's cmd_state.go, cmd_var.go, cmd_final.go,
//     cmd_checkpoint.go, cmd_rollback.go, cmd_trust.go and rlm.go.
package rlm
