// Package objects owns what the store keeps: the canonical JSON codec and
// operations on decoded documents.
//
// Every file the store writes is canonical JSON (see [Canonical]): the same
// content always gives the same bytes, so a no-op write produces no commit,
// merges compare blobs cheaply, and one line of git blame is one key.
//
// Decoded values use the encoding/json "UseNumber" form: map[string]any,
// []any, string, [json.Number], bool and nil. Numbers keep the literal they
// were written with, so no value changes by passing through the store.
//
// Documents are addressed with [verbiage.Path] key paths. Operations never
// mutate their input: [Set] and [Delete] copy the spine they change and share
// the rest, so a caller can keep the previous version of a document.
//
// The package knows nothing of git or files.
package objects
