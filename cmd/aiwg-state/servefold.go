package main

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// indexFolder runs a server's folds of the per-key history index in a
// process of its own, `aiwg-state reindex --fold`, one at a time. A fold
// rebuilds the index's snapshot in memory (about 3 s and 450 MB at a
// million commits); done inside a query, it would stall that query and
// raise the server's memory for good, as Go returns little of a heap
// once grown. Meanwhile queries read the longer log, and the next query
// after the fold reads the new snapshot.
type indexFolder struct {
	program, store string
	logf           func(format string, a ...any)
	verbose        bool // log each fold, not only a failed one
	running        atomic.Bool
	failedAt       atomic.Int64 // a failed fold is not retried for foldRetry
	wg             sync.WaitGroup
}

const foldRetry = 30 * time.Second

// start begins a fold unless one runs or one failed lately; it returns at
// once (see audit.FoldElsewhere).
func (f *indexFolder) start(string) {
	if t := f.failedAt.Load(); t != 0 && time.Since(time.Unix(0, t)) < foldRetry {
		return
	}
	if !f.running.CompareAndSwap(false, true) {
		return
	}
	// AIWG_STATE_NO_SERVE: the fold runs in the child, not forwarded
	// back to this server.
	cmd := exec.Command(f.program, "--store", f.store, "reindex", "--fold")
	cmd.Env = append(os.Environ(), "AIWG_STATE_NO_SERVE=1")
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.running.Store(false)
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			f.failedAt.Store(time.Now().UnixNano())
			f.logf("folding the history index: %v: %s", err, bytes.TrimSpace(out))
		} else if f.verbose {
			f.logf("folded the history index in process %d in %v", cmd.Process.Pid, time.Since(t0).Round(time.Millisecond))
		}
	}()
}

// wait waits for a fold under way.
func (f *indexFolder) wait() { f.wg.Wait() }
