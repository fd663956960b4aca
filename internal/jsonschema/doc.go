// Package jsonschema compiles JSON Schemas (2020-12, and draft-07 when a
// schema says so) and validates documents against them, naming the first
// field, in document order, that breaks one. It builds on
// github.com/google/jsonschema-go (imported here under the same name:
// `jsonschema.Schema` in these files is that library's), adding format
// assertions, json.Number documents, refusal of schemas it would accept
// unchecked, and the location of a failure.
//
// It knows no store: package docschema rules store documents by schemas
// compiled here, and the specifications' packages (rlm, trajectory)
// validate their documents with it.
package jsonschema
