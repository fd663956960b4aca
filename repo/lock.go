package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aiwg/aiwg-state/internal/sysfile"
)

// fileLock is a held <name>.lock file. For as long as it exists it holds
// a marker naming our process, and our flock: a waiter can tell the lock
// of a dead aiwg-state writer (marker, flock free) from a live one (flock
// held) and from git's (no marker). The ref's new value is not written
// into the lock, as git does, but into a file of its own that is renamed
// over the ref before the lock is removed; so the marker is never
// overwritten, and a writer killed at any instant, or a breaker killed
// mid-break, leaves either no lock or one the next writer recognises.
//
// The lock is a hard link to the Repo's lock file (see lockFile), which
// is flocked and marked once, when the Repo first takes a lock: taking and
// releasing a lock then allocates and frees no inode, only a name.
type fileLock struct {
	path  string
	held  *os.File // the flocked file path names
	own   bool     // held is this lock's own file, not the Repo's
	value bytes.Buffer
	// ready, when set, is waited on after the new value is written and
	// synced and before it replaces the ref: the flush that makes the
	// objects it names durable, overlapped with the value's own.
	ready func() error
	// taken: publish found path naming another file (removed by hand and
	// taken by another writer), which release must then leave alone.
	taken bool
	// turn is the writer's place in the lock's line (nil: none).
	turn *turn
}

const lockMarker = "aiwg-state lock held by pid "

// WriteString adds to the ref's new value.
func (l *fileLock) WriteString(s string) (int, error) { return l.value.WriteString(s) }

// Write adds to the ref's new value.
func (l *fileLock) Write(b []byte) (int, error) { return l.value.Write(b) }

// release removes the lock. The name goes before the flock can: once the
// flock is released a breaker may take the file for a dead writer's and a
// new writer may create the next lock, which this must not remove.
func (l *fileLock) release() {
	if !l.taken {
		os.Remove(l.path)
	}
	if l.own {
		l.held.Close()
	}
	l.turn.leave() // last: the next writer in line takes the lock at once
}

// publish puts the value written to the lock in place at path (the ref)
// with an atomic rename, syncing it first when sync is set. It refuses if
// lockPath no longer names this lock (removed by hand), so a writer never
// updates a ref it did not hold.
func (l *fileLock) publish(path string, sync bool) error {
	tmp := tempName(l.path)
	err := sysfile.WriteNew(tmp, 0o644, false, sync, l.value.Bytes())
	if err == nil && l.ready != nil {
		ready := l.ready
		l.ready = nil // waited for once, even if publish is tried again
		err = ready()
	}
	if err == nil {
		mine, serr := l.held.Stat()
		cur, cerr := os.Stat(l.path)
		if serr != nil || cerr != nil || !os.SameFile(mine, cur) {
			l.taken = cerr == nil // a lock at path that is not ours
			err = fmt.Errorf("%w: the lock was taken from this writer", ErrLocked)
		}
	}
	if err == nil {
		old := holdFile(path) // see holdFile
		err = sysfile.Rename(tmp, path)
		letGo(old)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// holdFile opens the file at path so that removing or replacing its name
// does not free it, or returns -1; letGo frees it later, off the caller's
// path. Freeing a file is the costliest step of a commit's file work on
// the disks we measured: its pages and inode go back to the file system,
// and its blocks, if its data reached the disk, which a file system
// mounted with discard waits for the device to discard (0.1 ms and more
// a file). A commit frees the ref's old value, whose block the rename
// that put it in place had allocated, and, under fsync, the packs it
// supersedes. A rename over a file, or an unlink, frees it in that very
// system call unless the file is still open: then it is freed when its
// last descriptor closes. Readers are unaffected: the name is gone (or
// names the new file) as before, and what a reader has open stays
// readable as it always did.
func holdFile(path string) int {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return -1
	}
	return fd
}

// letGo has descriptors holdFile opened closed in the background: the
// last close frees their file. They are closed a batch at a time (see
// heldBatch), and those pending when a Repo closes with it.
func letGo(fds ...int) {
	held.Lock()
	for _, fd := range fds {
		if fd >= 0 {
			held.fds = append(held.fds, fd)
		}
	}
	var batch []int
	if len(held.fds) >= heldBatch {
		batch, held.fds = held.fds, nil
	}
	held.Unlock()
	if batch != nil {
		go closeAll(batch)
	}
}

// heldBatch is how many held files are freed together: handing each to a
// goroutine of its own woke an idle thread of the runtime every commit.
const heldBatch = 8

// held are the descriptors letGo has yet to close.
var held struct {
	sync.Mutex
	fds []int
}

// freeHeld closes, in the background, the descriptors letGo holds.
func freeHeld() {
	held.Lock()
	batch := held.fds
	held.fds = nil
	held.Unlock()
	if batch != nil {
		go closeAll(batch)
	}
}

func closeAll(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// tempName is a fresh name beside lockPath that ends in .lock, which git
// skips when it lists refs; removeStaleTemp sweeps any a crash leaves.
func tempName(lockPath string) string {
	return lockPath + "." + strconv.FormatUint(rand.Uint64(), 36) + ".lock"
}

// acquire creates lockPath exclusively, as git does (see tryLock), once
// the writers lined up before this one are done (see queue.go). The head
// of the line normally finds it free; when git, or a writer that does not
// line up, holds it, it waits for it with jittered backoff, and breaks it
// when its holder was an aiwg-state writer that died (see
// breakStaleLock): without that, one SIGKILL would block every writer
// until someone removed the file by hand.
func (r *Repo) acquire(ctx context.Context, lockPath string) (*fileLock, error) {
	t, err := r.waitTurn(ctx, lockPath)
	if err != nil {
		return nil, err
	}
	l, err := r.acquireFile(ctx, lockPath)
	if err != nil {
		t.leave()
		return nil, err
	}
	l.turn = t
	return l, nil
}

// acquireFile takes lockPath itself, polling while another writer holds
// it. A dead holder is looked for at the first failure, then every
// staleCheckEvery: not on every retry, whose cost the waiting writers
// would share with the one holding the lock.
func (r *Repo) acquireFile(ctx context.Context, lockPath string) (*fileLock, error) {
	deadline := time.Now().Add(r.opts.LockTimeout)
	wait := 50 * time.Microsecond
	var checked time.Time
	for {
		l, err := r.tryLock(lockPath)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if time.Since(checked) >= staleCheckEvery {
			checked = time.Now()
			if r.breakStaleLock(lockPath) {
				continue
			}
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

// staleCheckEvery spaces the looks for a dead holder of a lock.
const staleCheckEvery = 50 * time.Millisecond

// tryLock creates lockPath, failing with fs.ErrExist when it exists, as
// a hard link to the Repo's lock file, which is as exclusive as O_EXCL:
// so lockPath never exists, even for a moment, without the flock and
// marker that let a waiter tell a dead writer's lock from a live one or
// from git's.
func (r *Repo) tryLock(lockPath string) (*fileLock, error) {
	held, template, err := r.lockFile()
	if err != nil {
		return nil, err
	}
	err = os.Link(template, lockPath)
	if err == nil {
		return &fileLock{path: lockPath, held: held}, nil
	}
	if errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	// A file system without hard links: create the lock in place, as git
	// does, leaving a short window in which a killed writer's lock is not
	// recognisable (it then needs removing by hand, as git's).
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		f.WriteString(lockMarker + strconv.Itoa(os.Getpid()) + "\n")
	}
	return &fileLock{path: lockPath, held: f, own: true}, nil
}

// lockFile returns the Repo's lock file, creating it on first use: a file
// under aiwg/locks, marked and flocked for the Repo's life (the kernel
// drops the flock when the process dies), of which every lock the Repo
// takes is a hard link. It is made under a temporary name and renamed
// once flocked, so sweepLockFiles never takes a live one for a dead one's.
func (r *Repo) lockFile() (*os.File, string, error) {
	r.lockMu.Lock()
	defer r.lockMu.Unlock()
	if r.lockF != nil {
		return r.lockF, r.lockPath, nil
	}
	dir := filepath.Join(r.dir, "aiwg", "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	name := strconv.FormatUint(rand.Uint64(), 36)
	tmp := filepath.Join(dir, "new-"+name)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, "", err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_, err = f.WriteString(lockMarker + strconv.Itoa(os.Getpid()) + "\n")
	}
	final := filepath.Join(dir, "held-"+name)
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, "", err
	}
	r.lockF, r.lockPath = f, final
	return f, final, nil
}

// closeLockFile removes the Repo's lock file when the Repo closes.
func (r *Repo) closeLockFile() {
	r.lockMu.Lock()
	defer r.lockMu.Unlock()
	if r.lockF != nil {
		os.Remove(r.lockPath)
		r.lockF.Close()
		r.lockF = nil
	}
}

// sweepLockFiles removes the lock files of Repos whose process died (their
// flock is free), and temporary ones a crash left.
func (r *Repo) sweepLockFiles() {
	dir := filepath.Join(r.dir, "aiwg", "locks")
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		p := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "held-"):
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				os.Remove(p)
			}
			f.Close()
		case strings.HasPrefix(e.Name(), "new-"):
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.Remove(p)
			}
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
	if !hasMarker(f) {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // a live aiwg-state writer holds it
	}
	judged, err := f.Stat()
	if err != nil {
		return false
	}
	return r.removeJudged(lockPath, judged)
}

// removeJudged removes the lock at lockPath, judged stale while open as
// judged, taking its turn among breakers (an flock on aiwg/lock-breaker,
// which the kernel releases if a breaker dies), and only while the path
// still names that very file: one broken and taken again by someone else
// is left alone. The caller keeps the judged file open, so its inode
// cannot be reused by a new lock meanwhile.
func (r *Repo) removeJudged(lockPath string, judged os.FileInfo) bool {
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
	cur, err := os.Stat(lockPath)
	if err != nil || !os.SameFile(cur, judged) {
		return false // already broken, or finished, by someone else
	}
	return os.Remove(lockPath) == nil
}

// hasMarker reports whether f is an aiwg-state lock. A lock that is not
// ours is git's and is never broken: git renames whatever <ref>.lock names
// when it finishes, however long it took, so breaking a slow git's lock
// could put another writer's lock over the ref. A killed git's lock is
// reported, as git does.
func hasMarker(f *os.File) bool {
	var head [len(lockMarker)]byte
	n, _ := f.ReadAt(head[:], 0)
	return string(head[:n]) == lockMarker
}
