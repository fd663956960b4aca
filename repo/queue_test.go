package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLockLineIsFair: 64 writers taking one ref's lock over and over are
// served first come, first served: the lock goes to the writers in the
// order their records joined the line (each grant's place is the one
// after the previous grant's, or the first of a line emptied meanwhile),
// none times out, and the line is empty once all have left.
func TestLockLineIsFair(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	lockPath := filepath.Join(r.dir, "refs", "heads", "main.lock")
	const writers, each = 64, 8
	var mu sync.Mutex
	var places []int64
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				l, err := r.acquire(ctx, lockPath)
				if err != nil {
					t.Error(err)
					return
				}
				if l.turn == nil {
					t.Error("no place in the line")
				} else {
					mu.Lock() // under the ref's lock: in the order of grants
					places = append(places, l.turn.end/recLen)
					mu.Unlock()
				}
				time.Sleep(100 * time.Microsecond)
				l.release()
			}
		}()
	}
	wg.Wait()
	for i := 1; i < len(places); i++ {
		if places[i] != places[i-1]+1 && places[i] != 1 {
			t.Fatalf("grant %d went to place %d after place %d", i, places[i], places[i-1])
		}
	}
	if fi, err := os.Stat(r.queuePath(lockPath)); err != nil || fi.Size() != 0 {
		t.Errorf("the line is not empty once everyone left: %v %v", fi, err)
	}
}

// TestLockLineSkipsTheDead: a writer in line that dies (its turn's file
// closed without leaving) does not hold up the writer behind it, and one
// that holds its turn without the ref moving makes the next one time out.
func TestLockLineSkipsTheDead(t *testing.T) {
	r := newRepo(t)
	r.opts.LockTimeout = 200 * time.Millisecond
	ctx := context.Background()
	lockPath := filepath.Join(r.dir, "refs", "heads", "main.lock")
	dead, err := r.waitTurn(ctx, lockPath)
	if err != nil || dead == nil {
		t.Fatalf("first in line: %v %v", dead, err)
	}
	// Behind it a writer times out, as no ref moves.
	if stuck, err := r.waitTurn(ctx, lockPath); !errors.Is(err, ErrLocked) {
		t.Fatalf("behind a live writer that makes no progress: %v %v", stuck, err)
	}
	dead.f.Close() // dies: the kernel releases its node
	// Nothing moves the ref: had the wait not ended with the dead
	// writer, it would time out.
	next, err := r.waitTurn(ctx, lockPath)
	if err != nil {
		t.Fatalf("behind a dead writer: %v", err)
	}
	next.leave()
}
