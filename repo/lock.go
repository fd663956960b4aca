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
	"syscall"
	"time"
)

// fileLock is a held <name>.lock file. Until its final value is written it
// holds a marker naming our process, so a waiter can tell a lock of a dead
// aiwg-state writer (marker, flock free) from git's own (no flock ever).
type fileLock struct {
	*os.File
	path    string
	written bool
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

// acquire creates lockPath exclusively, as git does, and also takes an
// flock on it that the kernel releases when this process dies. A waiter
// that finds the file old and the flock free knows the holder was killed
// and breaks the lock; without that, one SIGKILL would block every writer
// until someone removed the file by hand.
func (r *Repo) acquire(ctx context.Context, lockPath string) (*fileLock, error) {
	deadline := time.Now().Add(r.opts.LockTimeout)
	wait := 50 * time.Microsecond
	for {
		f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			// Nobody else can hold an flock on a file we just created.
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				f.WriteString(lockMarker + strconv.Itoa(os.Getpid()) + "\n")
			}
			return &fileLock{File: f, path: lockPath}, nil
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
	if !looksStale(f) {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // a live aiwg-state writer holds it
	}
	// Read again under the flock: a live writer replaces the marker with
	// the ref's value before it lets go, so what we read before may be
	// stale.
	if !looksStale(f) {
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
	return os.Remove(lockPath) == nil
}

// looksStale: our marker, so the writer never got to write the ref's
// value. A lock without it is git's (or ours in its last microseconds) and
// is never broken: git renames whatever <ref>.lock names when it finishes,
// however long it took, so breaking a slow git's lock could put another
// writer's lock over the ref. A killed git's lock is reported, as git does.
func looksStale(f *os.File) bool { return hasMarker(f) }

func hasMarker(f *os.File) bool {
	var head [len(lockMarker)]byte
	n, _ := f.ReadAt(head[:], 0)
	return string(head[:n]) == lockMarker
}
