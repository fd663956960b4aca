// Package memory is the tiered state specification's durable memory tier:
// records keyed by (namespace, record kind, record id), each a JSON payload
// with its timestamps and an optional time to live.
//
// Where each part is:
//   - The rules (memory.go, lines.go): keys, records, what put, append and
//     prune do to them, and the JSON Lines bridge. They know no git.
//   - The Go API (store.go): Memory, reached as aiwgstate.Store.Memory,
//     keeps each record as a file, memory/<namespace>/<kind>/<id>.json, so
//     that log and blame of a record are its history.
//   - The guard (store.go), registered by package aiwgstate: RecordGuard
//     keeps every file under memory/ a memory record, whatever the write.
//   - The CLI: cmd/aiwg-state/cmd_memory.go (aiwg-state memory).
package memory
