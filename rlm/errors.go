package rlm

import (
	"fmt"
	"strings"

	"github.com/aiwg/aiwg-state/store"
)

// The typed errors of RLM state say what happened; the CLI adds what to
// run next (cmd/aiwg-state/advice.go), keyed by their type.

// ChildrenRunningError: a parent's Final set while some of its children
// have not completed. It is ErrInvalidState.
type ChildrenRunningError struct {
	State   string
	Running []string // the children not completed
}

func (e *ChildrenRunningError) Error() string {
	return fmt.Sprintf("state %s has children that have not completed (%s): a parent sets Final once all its children complete", e.State, strings.Join(e.Running, ", "))
}

func (e *ChildrenRunningError) Unwrap() error { return ErrInvalidState }

// StateExistsError: an import of a state the store holds already (see
// ImportOptions). It is store.ErrExists.
type StateExistsError struct{ State string }

func (e *StateExistsError) Error() string {
	return "state " + e.State + " is already in this store"
}

func (e *StateExistsError) Unwrap() error { return store.ErrExists }

// SharedChangeError: a rollback would change nothing of the state's own,
// only Dir, a session or tree other states share too (see
// RollbackOptions.Shared). It is store.ErrUsage.
type SharedChangeError struct{ Checkpoint, Dir string }

func (e *SharedChangeError) Error() string {
	return fmt.Sprintf("%v: since %s only %s changed, which other states share too", store.ErrUsage, e.Checkpoint, e.Dir)
}

func (e *SharedChangeError) Unwrap() error { return store.ErrUsage }

// VariableLimitError: creating a variable would give a state more
// variables than MaxVariables. It is store.ErrLimit.
type VariableLimitError struct {
	State       string
	Seen, Limit int
	Creating    string // the variable that was to be created
}

func (e *VariableLimitError) Error() string {
	return fmt.Sprintf("%v: %s sees %d variables, the limit is %d", store.ErrLimit, e.State, e.Seen, e.Limit)
}

func (e *VariableLimitError) Unwrap() error { return store.ErrLimit }
