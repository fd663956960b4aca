// Package queue is the tiered state specification's coordination tier:
// named queues of JSON messages that producers put and consumers take,
// first in, first out, each message taken once.
//
// Where each part is:
//   - The rules (queue.go): names, messages and their files. They know no
//     git.
//   - The Go API (queues.go): Queues, reached as aiwgstate.Store.Queues,
//     keeps a message as a file, queues/<name>/<seq>-<id>.json, whose name
//     orders the queue, and takes it by removing the file in a commit, so
//     that two consumers taking at once are ordered by the branch's lock
//     and the history keeps every message and who took it.
//   - The guard (queues.go), registered by package aiwgstate: RecordGuard
//     keeps every file under queues/ a message, whatever the write.
//   - The CLI: cmd/aiwg-state/cmd_queue.go (aiwg-state queue).
package queue
