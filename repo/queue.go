package repo

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The lock queue. Writers of one ref in several processes line up for its
// <ref>.lock, first come first served. Taken by polling (try, sleep with
// backoff, try again), the lock goes to whoever happens to try just after
// a release: under load some writers wait many turns while others come
// and go, and one can time out (ErrLocked) although the writers ahead of
// it are making progress.
//
// So writers line up first, and only the head of the line tries
// <ref>.lock, which it normally finds free. The line is
// a file beside the Repo's lock files (aiwg/locks/queue-<hash of the
// lock's path>) to which each writer appends a record naming a node: a
// byte range of that file the writer holds an open-file-description lock
// on (fcntl F_OFD_SETLK) for as long as it waits and holds the ref's
// lock. A writer waits, blocked in the kernel without polling, for the
// lock on the node of the record before its own: it is granted when that
// writer is done, or dies (the kernel releases a dead process's locks),
// so the line never stalls on a killed writer. The wait times out only
// when the ref has not moved for Options.LockTimeout: while the writers
// ahead make progress, a writer waits its turn however long the line.
//
// The file is emptied by a writer leaving when no one is behind it, so it
// holds at most the records of one busy spell. git, and versions of this
// program that do not queue, still take <ref>.lock directly; the head of
// the line then waits for them as before (see acquire).

// recLen is the length of a record: a node's offset in hex and a newline.
const recLen = 17

// nodeBase is where nodes start: byte 0 guards the file's emptying,
// records' own bytes are never locked, and a node is a random offset
// above this, unique to its writer's turn.
const nodeBase = 1 << 40

// turn is a writer's place in a ref's line, held until leave.
type turn struct {
	f    *os.File // this turn's own open file description: holds the node
	end  int64    // the end of this turn's record
	node int64
}

// queuePath is the line's file for lockPath.
func (r *Repo) queuePath(lockPath string) string {
	rel, err := filepath.Rel(r.dir, lockPath)
	if err != nil {
		rel = lockPath
	}
	sum := sha1.Sum([]byte(filepath.ToSlash(rel)))
	return filepath.Join(r.dir, "aiwg", "locks", "queue-"+hex.EncodeToString(sum[:8]))
}

// refState is what tells a wait that the writers ahead made progress:
// the ref's file, replaced by every update.
type refState struct {
	fi  os.FileInfo
	err error
}

func statRef(path string) refState {
	fi, err := os.Stat(path)
	return refState{fi, err}
}

func (a refState) same(b refState) bool {
	if a.err != nil || b.err != nil {
		return (a.err == nil) == (b.err == nil)
	}
	return os.SameFile(a.fi, b.fi) && a.fi.ModTime().Equal(b.fi.ModTime()) && a.fi.Size() == b.fi.Size()
}

// waitTurn lines up for lockPath and waits until the writers ahead are
// done. A nil turn and no error: no line here (a file system or system
// without open-file-description locks); the caller polls as before.
func (r *Repo) waitTurn(ctx context.Context, lockPath string) (*turn, error) {
	if _, _, err := r.lockFile(); err != nil { // makes aiwg/locks
		return nil, nil
	}
	path := r.queuePath(lockPath)
	t, pred, err := joinLine(path)
	if err != nil || t == nil {
		return nil, nil
	}
	if pred < 0 {
		return t, nil // first in line
	}
	g, err := os.OpenFile(path, os.O_RDWR, 0) // a write lock needs a writable file
	if err != nil {
		return t, nil
	}
	done := make(chan error, 1)
	go func() { done <- lockRange(g, true, pred, true) }()
	target := strings.TrimSuffix(lockPath, ".lock")
	last := statRef(target)
	timer := time.NewTimer(r.opts.LockTimeout)
	defer timer.Stop()
	for {
		select {
		case <-done:
			g.Close()
			return t, nil
		case <-ctx.Done():
			abandon(g, done)
			t.leave()
			return nil, ctx.Err()
		case <-timer.C:
			if cur := statRef(target); !cur.same(last) {
				last = cur
				timer.Reset(r.opts.LockTimeout)
				continue
			}
			abandon(g, done)
			t.leave()
			return nil, fmt.Errorf("%w: %s: the writers ahead made no progress in %s (if no aiwg-state or git process is running, remove it)", ErrLocked, lockPath, r.opts.LockTimeout)
		}
	}
}

// abandon lets a wait for a predecessor end in the background.
func abandon(g *os.File, done chan error) {
	go func() {
		<-done
		g.Close()
	}()
}

// joinLine appends a record for a new node of this writer's, locked
// first, and returns the node of the record before it (-1: none).
func joinLine(path string) (*turn, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	t := &turn{f: f, node: nodeBase + randNode()}
	if err := lockRange(f, true, t.node, false); err != nil {
		f.Close()
		return nil, 0, err
	}
	// Shared while joining: the file is only emptied under an exclusive
	// lock of byte 0, by a writer who finds no record after its own.
	if err := lockRange(f, false, 0, true); err != nil {
		f.Close()
		return nil, 0, err
	}
	defer unlockRange(f, 0)
	if _, err := fmt.Fprintf(f, "%016x\n", t.node); err != nil {
		f.Close()
		return nil, 0, err
	}
	// With O_APPEND the write went to the end, atomically, and left this
	// descriptor's offset at the end of the record.
	if t.end, err = f.Seek(0, 1); err != nil || t.end%recLen != 0 {
		f.Close()
		return nil, 0, fmt.Errorf("lock queue %s: not a queue", path)
	}
	if t.end < 2*recLen {
		return t, -1, nil
	}
	var rec [recLen]byte
	if _, err := f.ReadAt(rec[:], t.end-2*recLen); err != nil {
		return t, -1, nil
	}
	var pred int64
	if _, err := fmt.Sscanf(string(rec[:recLen-1]), "%016x", &pred); err != nil || pred < nodeBase {
		return t, -1, nil // not ours to understand: the ref's lock decides
	}
	return t, pred, nil
}

// leave gives the turn to the writer behind, emptying the line when there
// is none.
func (t *turn) leave() {
	if t == nil {
		return
	}
	if lockRange(t.f, true, 0, false) == nil {
		if fi, err := t.f.Stat(); err == nil && fi.Size() == t.end {
			t.f.Truncate(0)
		}
		unlockRange(t.f, 0)
	}
	t.f.Close() // releases the node: the next writer's wait ends
}
