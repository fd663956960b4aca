// Package trajectory is the domain of the RLM Trajectory Schema:
// the trajectory document and its Thought-Action-Observation iterations,
// their validation against the JSON Schema converted from the specification, the
// metadata totals and quality metrics computed at completion, the
// report.md rendering, and the learning analysis over many trajectories
// (average iterations to success, success rate, failure patterns and what
// recovered them, tool n-grams of successful runs, cost per task type).
//
// It works on decoded JSON (the objects package's UseNumber form) and
// knows nothing of git: the store keeps a trajectory as a header file
// (trajectory.json, the specification's document without its iterations) and one file
// per iteration, and assembles the specification's document on demand.
package trajectory
