// Package jsonschema is a copy of github.com/santhosh-tekuri/jsonschema/v6
// v6.0.3 (Apache-2.0, LICENSE beside this file) with one change: the
// drafts' metaschemas compile on first use instead of in init().
//
// Upstream's init() compiles the metaschemas of five drafts, 21,000
// allocations and 4.3 ms on the machine we measure on, in every process that
// links the package. The CLI links it for trajectory and RLM validation, so
// every `aiwg-state get` paid it; it was 45% of that command's time. With the
// change a process pays it only when it compiles a schema. The change is
// loadDrafts in draft.go and its one call in roots.go; everything else is
// upstream's, tests aside (upstream's suite needs the JSON-Schema-Test-Suite
// checkout). Drop this copy for the module once upstream compiles lazily.
package jsonschema
