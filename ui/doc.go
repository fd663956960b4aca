// Package ui is the store's read-only review web app: the pages a person
// reads to review what agents did, served by `aiwg-state ui` or by a Go
// program that mounts New's handler.
//
// Where each part is:
//
//   - server.go: New, Options and the handler every request passes: only
//     GET and HEAD, the Host check against DNS rebinding on a loopback
//     address, the security headers (a strict Content-Security-Policy:
//     scripts and styles from the app itself only), the routes and errors.
//   - overview.go: the overview (branches and agent branches against the
//     default branch, last mutation, open conflicts, leases, queues).
//   - history.go: a branch's first-parent history with merges drawn,
//     filters and pages; a mutation (trailers, signature, key-level diff).
//   - review.go: a pull-request view, BASE...HEAD as package review makes
//     it, with the merge's dry run key by key.
//   - document.go: the files of a revision, a document's content with
//     per-key blame, and one key's history.
//   - rlm.go, trajectory.go: RLM states and checkpoints; RLM trajectories
//     with the SVG chart of tokens and cost per iteration (chart.go).
//   - live.go: server-sent events of the commits a branch gains, from the
//     store's watch.
//   - templates/, static/: the pages' html/template sources, the style
//     sheet and the little JavaScript (live updates), embedded in the
//     binary: no build step, no network.
//
// Everything an agent wrote (keys, values, file and branch names, commit
// messages, agent names) reaches a page through html/template's
// contextual escaping only, and every path a route takes is a store path
// read at a revision through the store, never a file of the machine.
package ui
