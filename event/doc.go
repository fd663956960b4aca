// Package event is the swarm shared state specification's event bus, made
// of the store's history: agents emit typed events (task, handoff, agent,
// lock and system events, or types of their own), others watch for them,
// subscribe durably, and replay them.
//
// Where each part is:
//   - The rules (event.go): an event's fields (type, source agent, target,
//     correlation id, time, payload) and its file. They know no git.
//   - The Go API (events.go): Events, reached as aiwgstate.Store.Events,
//     keeps each event as a file of its own,
//     events/<source>/<day>/<time>-<id>.json, added in one commit whose
//     Event trailer names its type (log and watch filter on it). A file
//     per event is never changed once written, so branches that emit at
//     once merge without a conflict, by git's merge as by the store's.
//     List and Replay read a revision's events by type, source, target,
//     correlation id and time.
//   - Durable subscriptions (subscriber.go): a subscriber's cursor, kept
//     in the store's git directory (never pushed), from which Subscribe
//     delivers every commit at least once, in batches, retrying a failing
//     handler and setting aside what fails too often as a dead letter.
//   - The guard (events.go), registered by package aiwgstate: RecordGuard
//     keeps every file under events/ an event, never rewritten, whose
//     source is the agent that wrote it; the server's hook checks pushed
//     files with ValidateFile.
//   - The CLI: cmd/aiwg-state/cmd_event.go (aiwg-state event emit, ls,
//     replay, subscriber) and watch's --event, --subscriber, --batch,
//     --exec.
package event
