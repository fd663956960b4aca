// Package indexfold runs the folds of a long-running process's per-key
// history index in a process of their own: `aiwg-state reindex --fold`.
// A fold merges the log into a new snapshot, streamed from the old one
// (about 0.16 s and 41 MB of peak resident memory at a million commits,
// most of it the old snapshot's mapped pages); done inside a query of a
// server, it would still hold that query up and touch every page of the
// snapshot in the server's process. Meanwhile queries read the longer
// log, and the next query after the fold reads the new snapshot. serve
// and the MCP server use it.
package indexfold

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiwg/aiwg-state/audit"
)

// Start has the folds of this process's queries of the store at store run
// by program (an aiwg-state), one at a time, until the returned stop,
// which waits for a fold under way. logf hears a fold that failed, and
// with verbose each one that ran.
func Start(program, store string, logf func(format string, a ...any), verbose bool) (stop func()) {
	f := &folder{program: program, store: store, logf: logf, verbose: verbose}
	audit.FoldElsewhere(f.start)
	return func() {
		audit.FoldElsewhere(nil)
		f.wg.Wait()
	}
}

type folder struct {
	program, store string
	logf           func(format string, a ...any)
	verbose        bool // log each fold, not only a failed one
	running        atomic.Bool
	wg             sync.WaitGroup
}

// start begins a fold unless one runs; it returns at
// once (see audit.FoldElsewhere).
func (f *folder) start(string) {
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
			// An aiwg-state that cannot fold (an older one on $PATH, or
			// one gone): the queries fold in place again, as a
			// command's do, rather than read an ever longer log.
			audit.FoldElsewhere(nil)
			f.logf("folding the history index with %s: %v: %s; queries fold it in this process from now on", f.program, err, bytes.TrimSpace(out))
		} else if f.verbose {
			f.logf("folded the history index in process %d in %v", cmd.Process.Pid, time.Since(t0).Round(time.Millisecond))
		}
	}()
}
