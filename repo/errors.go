package repo

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

var (
	// ErrNotFound: no such file, revision, ref or object.
	ErrNotFound = errors.New("not found")
	// ErrStale: a compare-and-swap found the ref at another value.
	ErrStale = errors.New("concurrent update")
	// ErrLocked: a ref's lock file is held by another writer for too long.
	ErrLocked = errors.New("lock failure")
	// ErrNoChange: a transaction produced the tree it started from.
	ErrNoChange = errors.New("no change")
	// ErrInvalidName: a tree entry name git would refuse (fsck --strict).
	ErrInvalidName = errors.New("invalid name")
	// ErrNotStore: the directory is not a store.
	ErrNotStore = errors.New("not a store")
	// ErrDetached: HEAD names a commit, not a branch.
	ErrDetached = errors.New("HEAD is detached")
)

// StaleError says where the ref was when a compare-and-swap failed.
type StaleError struct {
	Ref      string
	Expected plumbing.Hash
	Current  plumbing.Hash
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("concurrent update: %s is at %s, expected %s", e.Ref, short(e.Current), short(e.Expected))
}

func (e *StaleError) Unwrap() error { return ErrStale }

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}
