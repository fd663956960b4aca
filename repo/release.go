package repo

import (
	"sync/atomic"
	"syscall"
)

// releaseMapped drops this process's resident pages of every mapped pack
// and index (see Repo.ReleaseMapped); the mappings stay valid and read
// the file again when touched. An index this process wrote lives on the
// heap, not in a mapping, and is left alone: the advice would zero it.
func (o *objReader) releaseMapped() {
	for _, p := range o.packs {
		if len(p.pack) > 0 {
			_ = syscall.Madvise(p.pack, syscall.MADV_DONTNEED)
		}
		if len(p.idx) > 0 && !p.heapIdx {
			_ = syscall.Madvise(p.idx, syscall.MADV_DONTNEED)
		}
	}
	for _, a := range o.alts {
		a.releaseMapped()
	}
}

// A read faults in the pages of the pack entry it inflates and of the
// index entries its lookup compares (the kernel maps what its page cache
// holds around each fault: from 64 KiB to a whole 2 MiB folio, counted
// here as 128 KiB a read), and they stay
// counted in the process's memory until it lets go of them: in a server, a
// walk over a long history (a log or blame reaching back a million
// commits) would hold pages all over its packs, as much as the history is
// long. So, once ReleaseWhileReading is on, every releaseBudget bytes of
// lookups and entries read, by that estimate, a reader lets go of its
// mapped pages; they stay in the page cache, and the few a later read needs
// again (the index's fanout, the newest objects) fault back in for
// microseconds. A command's process, which ends in moments, leaves it off:
// the faults back cost a busy walk a few percent of its time.
const touchEstimate = 128 << 10

var (
	releaseBudget int64 = 4 << 20 // a variable for tests
	releaseOn     atomic.Bool
)

// ReleaseWhileReading turns on (or off) for every repository of this
// process the release of the packs' mapped pages as reads go: for a
// long-running process, whose resident memory should not grow with the
// history its walks read.
func ReleaseWhileReading(on bool) { releaseOn.Store(on) }

func (o *objReader) touch(size int64) {
	if !releaseOn.Load() {
		return
	}
	o.touched += max(size, touchEstimate)
	if o.touched >= releaseBudget {
		o.touched = 0
		o.releaseMapped()
	}
}
