// Package trajectory is the domain of the RLM Trajectory Schema:
// the trajectory document and its Thought-Action-Observation iterations,
// their validation against the JSON Schema converted from the specification, the
// metadata totals and quality metrics computed at completion, the
// report.md rendering, and the learning analysis over many trajectories
// (average iterations to success, success rate, failure patterns and what
// recovered them, tool n-grams of successful runs, cost per task type).
//
// The rules (document.go, complete.go, analyze.go, report.go, schema.go)
// work on decoded JSON (the objects package's UseNumber form) and know
// nothing of git. Over them, traj.go keeps trajectories in a store: a
// header file (trajectories/<id>/trajectory.json, the specification's
// document without its iterations) and one file per iteration, each
// write one commit, the specification's document assembled on demand.
//
//   - The Go API is the Trajectories handle (aiwgstate.Store.Trajectories):
//     Start, RecordIteration, Complete, Get, List, WriteReport, Analyze,
//     Prune, Import; Trailers and Link tie any other write to an iteration.
//   - Guard (a store.Guard, wired in the root package) refuses a write
//     linked to a trajectory the branch does not hold; ValidateFile holds
//     pushed iteration files to the schema in the server-side hook.
//   - The CLI is `aiwg-state traj` (cmd/aiwg-state/cmd_traj.go).
package trajectory
