package sqlstate

import (
	"errors"
	"testing"

	"github.com/aiwg/aiwg-state/store"
)

// TestBusyIsLocked: SQLite's busy error reaches the caller as ErrBusy,
// which is store.ErrLocked (exit 5), never as an unexpected error.
func TestBusyIsLocked(t *testing.T) {
	err := busy(errors.New("database is locked (5) (SQLITE_BUSY)"))
	if !errors.Is(err, ErrBusy) || !errors.Is(err, store.ErrLocked) {
		t.Fatalf("busy: %v", err)
	}
	if other := errors.New("no such column: x"); busy(other) != other {
		t.Fatal("an error that is not busy changed")
	}
}
