// Package jsondiff is the semantic diff of agent state: it compares two
// decoded JSON documents key path by key path and reports what a reviewer
// needs to know (added, removed, changed, moved), renders that for a
// terminal or a pull-request review, and turns it into an RFC 6902 JSON
// Patch. It knows no git and no files: callers hand it decoded values in
// the encoding/json UseNumber form.
//
// Arrays are aligned, not compared index by index: elements are matched by
// identity (an "id", "ID" or "*_id" field when every object element carries
// a unique one, else the whole canonical value) along a longest common
// subsequence, so an insertion in the middle of a list is one added element
// rather than a cascade of changes down to its end.
//
// Diff gives the changes for people (WriteText, WriteMarkdown) and for
// programs (json.Marshal of the result); Patch gives the same comparison as
// an RFC 6902 JSON Patch that reproduces the new document exactly.
package jsondiff
