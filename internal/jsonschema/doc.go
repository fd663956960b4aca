// Package jsonschema is a copy of github.com/santhosh-tekuri/jsonschema/v6
// v6.0.3 (Apache-2.0, LICENSE beside this file) with two changes: the
// drafts' metaschemas compile on first use instead of in init(), and error
// messages print through kind.Printer (English, package fmt) instead of
// golang.org/x/text/message's Printer.
//
// Upstream's init() compiles the metaschemas of five drafts, 21,000
// allocations and 4.3 ms on the machine we measure on, in every process that
// links the package. The CLI links it for trajectory and RLM validation, so
// every `aiwg-state get` paid it; it was 45% of that command's time. With the
// change a process pays it only when it compiles a schema. The change is
// loadDrafts in draft.go and its one call in roots.go.
//
// x/text's package inits (language tables, catmsg, plural rules) cost about
// 0.5 ms of every process start, and upstream imports x/text only to format
// error messages. kind.Printer, a struct with a fmt-backed Sprintf, takes the
// place of *message.Printer in every signature (LocalizedString,
// LocalizedError, Localized*Output keep their names), and &kind.Printer{}
// replaces message.NewPrinter(language.English). Numbers no longer get
// digit grouping: 1000, not "1,000".
//
// Everything else is upstream's, tests aside (upstream's suite needs the
// JSON-Schema-Test-Suite checkout). Drop this copy for the module once
// upstream compiles lazily and no longer needs x/text.
package jsonschema
