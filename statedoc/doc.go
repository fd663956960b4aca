// Package statedoc serves the verbiage-keyed state document of the state document specification
// ("State Schema and Rules"): its default shape and validation, shard
// references (`ref file://<path>`) that mount other JSON files into it, and
// the specification's domain verbs (goals, sub-goals, events, latest, requests,
// items, the active project, apply and reset) as pure functions on the
// decoded document.
//
// The package knows no git. Files are read through the Files interface with
// '/'-separated store paths; a write produces the set of files to write
// (FileWrite), which the caller commits as one commit.
//
// Where the rest is: the store keeps the ruled documents (which files
// are ruled, their check on every write and read) and the Go API, a
// handle whose methods run each verb here as one commit
// (store.Store.StateDocument, store/statedocument.go; the ruled-document
// model in store/statedoc.go); the CLI's verbs (goal, event, latest,
// request, item, project, doc, state-doc) are
// cmd/aiwg-state/cmd_statedoc.go.
//
// # Shards
//
// Any string value of the form "ref file://<path>" mounts the JSON file at
// <path> at that point. <path> is relative to the directory of the file that
// holds the ref; when that directory is named "state", a path that itself
// starts with "state/" is taken from the directory above (the specification's
// convenience rule, so state/state.json can say "ref file://state/OPS/Q.json"
// instead of "ref file://OPS/Q.json"). Absolute paths, ".." that climbs out
// of the store, paths into the store's own .aiwg/ directory and files that
// are not .json are refused with verbiage.ErrInvalidPath, as is raw white
// space in a stored ref's path. Mounts resolve recursively; a cycle is
// ErrInvalidState.
//
// Doc.Resolved is the document with every mount inlined, which is what the
// verbs and readers see. Doc.Update takes a new resolved document and writes
// it back through the mounts: a value inside a mounted subtree goes to the
// shard file, and the parent keeps its ref string. Deleting or replacing a
// ref with a non-ref value unmounts the shard; the file is left in place (a
// write never deletes data it was not asked to delete).
//
// A ref string set with an init payload, "ref file://<path> <json-or-string>",
// writes the payload as the shard's root value and stores the canonical ref;
// it is refused with ErrExists when that file is already mounted, so an init
// never clobbers a mounted shard.
package statedoc

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Sentinel errors; callers map them to the specification's exit codes. Invalid keys
// and paths are verbiage.ErrInvalidKey and verbiage.ErrInvalidPath (exit 2);
// a missing goal, sub-goal or item is objects.ErrNotFound and a deep set
// through a scalar objects.ErrNotContainer (exit 3).
var (
	// ErrInvalidState: the document breaks the specification's shape or a shard rule
	// (cycle, missing shard, a file mounted twice and written differently).
	// Exit 3.
	ErrInvalidState = errors.New("invalid state")
	// ErrExists: a goal or sub-goal of that key exists, or an init would
	// overwrite a mounted shard. Exit 3.
	ErrExists = errors.New("already exists")
	// ErrInFlight: a request was made while the sub-goal already has one in
	// flight. Exit 4.
	ErrInFlight = errors.New("request in flight")
	// ErrNoProject: a chat scope names no project, and no project is
	// active. It is verbiage.ErrInvalidPath (exit 2).
	ErrNoProject = fmt.Errorf("%w: a chat scope needs a project", verbiage.ErrInvalidPath)
)
