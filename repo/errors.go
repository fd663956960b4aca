package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
	// ErrObjectMissing: an object the store refers to (from a ref, a
	// commit or a tree) is not in it and could not be had: in a partial
	// clone, one its promisor remote did not supply; anywhere else,
	// damage. It never matches ErrNotFound: a document whose content
	// cannot be read is not an absent document. A *MissingObjectError
	// says which object and what repairs it.
	ErrObjectMissing = errors.New("object missing")
	// ErrShallow: a revision lies beyond a shallow clone's history. A
	// *ShallowError names it.
	ErrShallow = errors.New("beyond shallow history")
)

// MissingObjectError is an object that could not be read although the
// store refers to it.
type MissingObjectError struct {
	Hash plumbing.Hash
	// Promisor: the store is a partial clone, and Remote is the promisor
	// remote that was asked for the object (empty when none could be).
	Promisor bool
	Remote   string
	// Cause is why fetching it failed (a partial clone only).
	Cause error
}

func (e *MissingObjectError) Error() string {
	if !e.Promisor {
		return fmt.Sprintf("object %s is missing from the store, which is damaged: run `git fsck`, then restore the object (`git fetch` from a remote or clone that has it)", e.Hash)
	}
	from := "its promisor remote"
	if e.Remote != "" {
		from = "promisor remote " + e.Remote
	}
	why := ""
	if e.Cause != nil {
		why = " (" + e.Cause.Error() + ")"
	}
	return fmt.Sprintf("object %s is not in this partial clone and could not be fetched from %s%s: reconnect and retry, or fetch it with `git fetch %s %s`",
		e.Hash, from, why, orOrigin(e.Remote), e.Hash)
}

func (e *MissingObjectError) Unwrap() error { return ErrObjectMissing }

func orOrigin(remote string) string {
	if remote == "" {
		return DefaultRemote
	}
	return remote
}

// ShallowError is a revision beyond a shallow clone's history: git holds
// the commits from the shallow boundary up, not their parents.
type ShallowError struct {
	// Rev is the revision as asked.
	Rev string
}

func (e *ShallowError) Error() string {
	return fmt.Sprintf("%s is beyond this shallow clone's history", e.Rev)
}

func (e *ShallowError) Unwrap() error { return ErrShallow }

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
// such a base; the message names the damaged file, and a check of the
// store says what repairs it.
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
	return fmt.Sprintf("the store's %s is damaged (%s)", e.File, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// RemoteMissingError: no remote of that name. It is ErrNotFound.
type RemoteMissingError struct{ Name string }

func (e *RemoteMissingError) Error() string {
	return fmt.Sprintf("remote %q: %v", e.Name, ErrNotFound)
}

func (e *RemoteMissingError) Unwrap() error { return ErrNotFound }

// ErrPermission: this user may not write the store's files (a read-only
// pack or refs directory, a store owned by another user). A
// *PermissionError names the directory.
var ErrPermission = errors.New("permission denied")

// PermissionError is a write refused by the file system's permissions,
// before the write moved anything: the pack and the ref are written into
// directories this user may not write, so the branch stays where it was.
type PermissionError struct {
	Dir string // the directory, relative to the git directory (objects/pack, refs/heads)
	Err error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("permission denied on the store's %s: this user may not write there, and nothing was written (run as the store's owner, or make the store writable: chmod -R u+w STORE)", e.Dir)
}

func (e *PermissionError) Unwrap() []error { return []error{ErrPermission, e.Err} }

// permissionError turns a permission failure under the git directory into
// a *PermissionError naming the directory; other errors are returned as
// they are.
func (r *Repo) permissionError(err error) error {
	if err == nil || !errors.Is(err, fs.ErrPermission) || errors.Is(err, ErrPermission) {
		return err
	}
	path := ""
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		path = pe.Path
	case errors.As(err, &le):
		path = le.New
	}
	dir, rerr := filepath.Rel(r.dir, filepath.Dir(path))
	if path == "" || rerr != nil || strings.HasPrefix(dir, "..") {
		dir = "files"
	}
	return &PermissionError{Dir: filepath.ToSlash(dir), Err: syscall.EACCES}
}
