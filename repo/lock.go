package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fileLock is a held <name>.lock file. Until its final value is written it
// holds a marker naming our process, so a waiter can tell a lock of a dead
// aiwg-state writer (marker, flock free) from git's own (no flock ever).
type fileLock struct {
	*os.File
	path    string
	owner   string // the owner record (see recordOwner)
	written bool
}

// ownerRecord is where the record of who holds lockPath is kept, under
// the git dir where git does not look.
func (r *Repo) ownerRecord(lockPath string) string {
	rel, err := filepath.Rel(r.dir, lockPath)
	if err != nil {
		return ""
	}
	return filepath.Join(r.dir, "aiwg", "locks", strings.ReplaceAll(filepath.ToSlash(rel), "/", "%"))
}

// recordOwner notes, right after the lock is created and before its
// content changes, that this process holds the lock file with this inode;
// clearOwner erases the note once the lock is renamed or removed. A
// breaker takes a lock for ours (and its writer for dead) only when the
// note names that very inode and a process that no longer exists: so a
// writer killed at any point after its first microseconds, even while
// syncing the ref's value over the marker, does not block the store, and
// a lock of git's is never taken for ours (it would need a note left by a
// writer killed between its rename and the clearing, no aiwg-state write
// since, and git's new lock on that very inode).
func (l *fileLock) recordOwner() {
	if l.owner == "" {
		return
	}
	fi, err := l.Stat()
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	os.MkdirAll(filepath.Dir(l.owner), 0o755)
	os.WriteFile(l.owner, []byte(fmt.Sprintf("%d %d\n", os.Getpid(), st.Ino)), 0o644)
}

func (l *fileLock) clearOwner() {
	if l.owner != "" {
		os.WriteFile(l.owner, nil, 0o644)
	}
}

// ownedByUs reports whether the owner note names this lock file and a
// process that is gone.
func ownedByUs(record string, f *os.File) bool {
	data, err := os.ReadFile(record)
	if err != nil {
		return false
	}
	var pid int
	var ino uint64
	if _, err := fmt.Sscanf(string(data), "%d %d", &pid, &ino); err != nil || pid <= 0 {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Ino) == ino && syscall.Kill(pid, 0) == syscall.ESRCH
}

const lockMarker = "aiwg-state lock held by pid "

// WriteString writes the lock's final content, replacing the marker.
func (l *fileLock) WriteString(s string) (int, error) {
	if !l.written {
		l.written = true
		if err := l.Truncate(0); err != nil {
			return 0, err
		}
		if _, err := l.Seek(0, 0); err != nil {
			return 0, err
		}
	}
	return l.File.WriteString(s)
}

// Write is WriteString for bytes.
func (l *fileLock) Write(b []byte) (int, error) { return l.WriteString(string(b)) }

// acquire creates lockPath exclusively, as git does (see tryLock), waiting
// with jittered backoff while another writer holds it, and breaking it
// when its holder was an aiwg-state writer that died (see breakStaleLock):
// without that, one SIGKILL would block every writer until someone removed
// the file by hand.
func (r *Repo) acquire(ctx context.Context, lockPath string) (*fileLock, error) {
	deadline := time.Now().Add(r.opts.LockTimeout)
	wait := 50 * time.Microsecond
	for {
		l, err := r.tryLock(lockPath)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if r.breakStaleLock(lockPath) {
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %s is held by another writer (if no aiwg-state or git process is running, remove it)", ErrLocked, lockPath)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait + rand.N(wait)):
		}
		if wait < 5*time.Millisecond {
			wait *= 2
		}
	}
}

// tryLock creates lockPath, failing with fs.ErrExist when it exists. The
// file is made under a temporary name (ending in .lock, which git ignores),
// flocked and marked there, and then hard-linked to lockPath, which is as
// exclusive as O_EXCL: so lockPath never exists, even for a moment, without
// the flock and marker that let a waiter tell a dead writer's lock from a
// live one or from git's.
func (r *Repo) tryLock(lockPath string) (*fileLock, error) {
	tmp := lockPath + "." + strconv.FormatUint(rand.Uint64(), 36) + ".lock"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if _, err := f.WriteString(lockMarker + strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	err = os.Link(tmp, lockPath)
	os.Remove(tmp)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: create the lock in place, as
		// git does, leaving a short window in which a killed writer's lock
		// is not recognisable (it then needs removing by hand, as git's).
		f.Close()
		if f, err = os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644); err != nil {
			return nil, err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			f.WriteString(lockMarker + strconv.Itoa(os.Getpid()) + "\n")
		}
	} else if err != nil {
		f.Close()
		return nil, err
	}
	l := &fileLock{File: f, path: lockPath, owner: r.ownerRecord(lockPath)}
	l.recordOwner()
	return l, nil
}

// breakStaleLock removes a lock left by a dead aiwg-state writer: one that
// carries our marker with its flock free (the writer died mid-transaction).
// Breakers take turns (an flock on
// aiwg/lock-breaker, which the kernel releases if a breaker dies), and a
// lock is only removed while the breaker holds its flock and the path
// still names the very file judged: a live writer holds its flock for as
// long as its lock file has that name, so a live lock is never taken.
func (r *Repo) breakStaleLock(lockPath string) bool {
	f, err := os.Open(lockPath)
	if err != nil {
		return false
	}
	defer f.Close()
	record := r.ownerRecord(lockPath)
	if !looksStale(f, record) {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // a live aiwg-state writer holds it
	}
	// Read again under the flock: a live writer replaces the marker with
	// the ref's value before it lets go, so what we read before may be
	// stale.
	if !looksStale(f, record) {
		return false
	}
	brkDir := filepath.Join(r.dir, "aiwg")
	os.MkdirAll(brkDir, 0o755)
	b, err := os.OpenFile(filepath.Join(brkDir, "lock-breaker"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false
	}
	defer b.Close()
	if syscall.Flock(int(b.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // another breaker is at it; the caller waits and retries
	}
	judged, err := f.Stat()
	if err != nil {
		return false
	}
	cur, err := os.Stat(lockPath)
	if err != nil || !os.SameFile(cur, judged) {
		return false // already broken, or finished, by someone else
	}
	// The note goes first: once the file is removed its inode may be
	// reused by git's next lock, which the note must not then name.
	os.WriteFile(record, nil, 0o644)
	return os.Remove(lockPath) == nil
}

// looksStale: the lock is ours (our marker in it, or our owner record
// naming it), so with its flock free its writer is dead. A lock that is
// not ours is git's and is never broken: git renames whatever <ref>.lock
// names when it finishes, however long it took, so breaking a slow git's
// lock could put another writer's lock over the ref. A killed git's lock
// is reported, as git does.
func looksStale(f *os.File, record string) bool {
	return hasMarker(f) || ownedByUs(record, f)
}

func hasMarker(f *os.File) bool {
	var head [len(lockMarker)]byte
	n, _ := f.ReadAt(head[:], 0)
	return string(head[:n]) == lockMarker
}
