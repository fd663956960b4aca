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

// ErrCorrupt: the store's files are damaged (a pack or its index fails its
// checksum, an object does not inflate or decode). Nothing is written on
// such a base; the message names the damaged file and `aiwg-state fsck`
// says what repairs it.
var ErrCorrupt = errors.New("damaged")

// ErrUnsupported: a repository format this package does not read (SHA-256
// object names), refused when the store is opened rather than misread.
var ErrUnsupported = errors.New("unsupported repository format")

// CorruptError names a damaged file of the object database.
type CorruptError struct {
	File   string // relative to the git directory, e.g. objects/pack/pack-….idx
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the store's %s is damaged (%s): run `aiwg-state fsck`", e.File, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }
