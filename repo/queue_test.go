package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLockLineIsFair: 64 writers taking one ref's lock over and over are
// served first come, first served: none sees more grants to others while
// it waits than there are writers (with polling, an unlucky one saw
// hundreds), and none times out.
func TestLockLineIsFair(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	lockPath := filepath.Join(r.dir, "refs", "heads", "main.lock")
	const writers, each = 64, 8
	var grants atomic.Int64
	var worst atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				before := grants.Load()
				l, err := r.acquire(ctx, lockPath)
				if err != nil {
					t.Error(err)
					return
				}
				waited := grants.Add(1) - 1 - before
				for {
					w := worst.Load()
					if waited <= w || worst.CompareAndSwap(w, waited) {
						break
					}
				}
				time.Sleep(100 * time.Microsecond)
				l.release()
			}
		}()
	}
	wg.Wait()
	// A writer reads the count, then joins: a few grants may pass
	// between the two, besides the 63 writers ahead of it at most.
	if w := worst.Load(); w > writers+writers/2 {
		t.Errorf("a writer saw %d grants to others while it waited; %d writers", w, writers)
	}
	t.Logf("the longest wait saw %d grants to others", worst.Load())
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
	start := time.Now()
	next, err := r.waitTurn(ctx, lockPath)
	if err != nil {
		t.Fatalf("behind a dead writer: %v", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("waited %s behind a dead writer", d)
	}
	next.leave()
}
