package merge

import (
	"fmt"

	"github.com/aiwg/aiwg-state/store"
)

// ConflictsError: a merge stopped on conflicts, recorded for resolution
// (Left: those still unresolved when it was continued). It is store.ErrConflict;
// the MergeResult returned with it lists them.
type ConflictsError struct {
	Conflicts, Files int
	Left             bool
}

func (e *ConflictsError) Error() string {
	left := ""
	if e.Left {
		left = " left"
	}
	return fmt.Sprintf("%v: %d conflict(s)%s in %d file(s)", store.ErrConflict, e.Conflicts, left, e.Files)
}

func (e *ConflictsError) Unwrap() error { return store.ErrConflict }

// NoMergeError: a continue, abort or resolve on a branch with no merge in
// progress. It is store.ErrNotFound.
type NoMergeError struct{ Branch string }

func (e *NoMergeError) Error() string {
	return e.Branch + " has no merge in progress, so there is nothing to continue, abort or resolve"
}

func (e *NoMergeError) Unwrap() error { return store.ErrNotFound }

// ResolvedMergeInvalidError: a merge's resolutions are settled, and the
// result breaks a schema; the merge cannot be resolved again, only
// aborted. It wraps the schema's error (docschema.ErrInvalid).
type ResolvedMergeInvalidError struct{ Err error }

func (e *ResolvedMergeInvalidError) Error() string {
	return e.Err.Error() + " (the merge as resolved breaks a schema)"
}

func (e *ResolvedMergeInvalidError) Unwrap() error { return e.Err }
