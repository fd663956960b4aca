package repo

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Superseded tails. A commit writes the tail with its objects appended as
// a new pack; the old tail then holds nothing the new one lacks. It is not
// removed by the commit: a plain git reader (`git cat-file`, `git mktree`,
// `git rev-list --objects`) that listed the pack directory a moment ago
// may be about to open it, and git looks again only once after a miss;
// with writers replacing the tail every few milliseconds the pack it finds
// then may be gone too. Unless no reader listed the directory while the
// old tail was the newest copy of its objects (see listings: then it goes
// at once), the commit marks the old tail superseded (the
// sticky bit on its .idx, one chmod: no file to create, and the mark's
// ctime is when it happened) and superseded tails are removed once they
// have been so for supersededGrace: by a later commit of this process,
// which knows what it superseded, or by the next process that looks for a
// tail, or maintenance, once the tail is seen to hold all of it (the mark
// alone is a hint: see sweepStale). Git's repack and prune likewise leave
// what they replace to readers for a while.
//
// Readers here list marked packs last, and the pack count that triggers a
// roll-up leaves them out: they hold only copies.

// supersededGrace is how long a superseded tail stays for readers that
// listed it: git opens a pack it listed within microseconds, and even a
// descheduled reader within this. Longer keeps more near-copies of the
// tail around a fast writer, which every plain git reader then lists
// (at 2 s, a race of four writers against git readers ran 3x slower).
var supersededGrace = time.Second

const (
	// supersededCap bounds the superseded tails a fast writer keeps
	// while readers list the pack directory: past it, those older than
	// supersededMinAge go early. Each kept tail is two files more in the
	// directory, which every plain git reader lists, and kept pages.
	// git opens a pack it listed within microseconds, but a reader the
	// writers starve of CPU may wait far longer between the two: with
	// four writers racing git readers on two cores, ten milliseconds
	// let a reader miss in both of git's looks about once in 8,000
	// reads once writes stopped waiting for the disk to discard what
	// they freed; a tenth of a second let none miss in 300,000.
	supersededCap    = 4
	supersededMinAge = 100 * time.Millisecond
	// stickyMode is a superseded tail's .idx mode: git writes packs 0444,
	// and no git command sets the sticky bit.
	stickyMode = 0o444 | syscall.S_ISVTX
)

type supersededTail struct {
	hash plumbing.Hash
	at   time.Time
}

// supersede marks the tail h superseded by a published pack holding all of
// its objects, and removes those this process marked long enough ago.
func (r *Repo) supersede(h plumbing.Hash) {
	r.supMu.Lock()
	unseen := r.unlisted(h)
	r.supMu.Unlock()
	if unseen {
		// No plain reader listed it while it was the newest copy of
		// its objects (see listings): it goes now, as the oldest
		// superseded tails do.
		r.removeSuperseded(h, readMidxCover(filepath.Join(r.dir, "objects", "pack")), false, false)
		return
	}
	idx := filepath.Join(r.dir, "objects", "pack", "pack-"+h.String()+".idx")
	if syscall.Chmod(idx, stickyMode) != nil {
		return // removed meanwhile (another writer's sweep, a repack)
	}
	r.supMu.Lock()
	r.superseded = append(r.superseded, supersededTail{h, time.Now()})
	r.supMu.Unlock()
	r.sweepSuperseded()
}

// sweepSuperseded removes the tails this process marked that are old
// enough (see supersedeGrace and supersededCap).
func (r *Repo) sweepSuperseded() {
	r.supMu.Lock()
	now := time.Now()
	n := 0
	for n < len(r.superseded) {
		age := now.Sub(r.superseded[n].at)
		if age < supersededGrace && !(len(r.superseded)-n > supersededCap && age >= supersededMinAge) {
			break
		}
		n++
	}
	gone := append([]supersededTail(nil), r.superseded[:n]...)
	r.superseded = append(r.superseded[:0], r.superseded[n:]...)
	r.supMu.Unlock()
	if len(gone) == 0 {
		return
	}
	dir := filepath.Join(r.dir, "objects", "pack")
	cover := readMidxCover(dir)
	for _, s := range gone {
		r.removeSuperseded(s.hash, cover, false, false)
	}
}

// removeSuperseded removes a superseded tail unless a multi-pack-index
// names it or a running repack may be reading it (the repack removes what
// it rolls up); maintenance, which holds the repack's lock before it
// starts one, says so with locked.
func (r *Repo) removeSuperseded(h plumbing.Hash, cover midxCover, locked, gitFiles bool) {
	if cover.covers("pack-"+h.String()) || (!locked && r.repackMayRead(h)) {
		return
	}
	r.removePack(h, gitFiles)
}

// isSuperseded reports whether fi, a pack's .idx, carries the mark, and
// for how long it has.
func isSuperseded(fi os.FileInfo) (bool, time.Duration) {
	if fi == nil || fi.Mode()&os.ModeSticky == 0 {
		return false, 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return true, time.Since(time.Unix(st.Ctim.Sec, st.Ctim.Nsec))
	}
	return true, 0
}
