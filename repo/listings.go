package repo

import (
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
)

// Listings of the pack directory. A superseded tail is kept for plain git
// readers that listed the pack directory while it was the newest copy of
// its objects: such a reader may be about to open it. A reader that
// listed the directory later saw the newer tail too, which holds all of
// it, and git tries the newest packs first. So a tail no one listed before
// its successor was in place can go at once, and most can: writers replace
// the tail hundreds of times a second, readers list the directory far
// less often. Keeping every tail for a while instead cost a fast writer
// time for the files it kept (see supersededCap).
//
// Linux reports every listing of a directory to an inotify watch on it
// (IN_ACCESS, raised while the listing still holds the directory), so a
// process that watches the pack directory from before a tail is written
// knows whether anyone listed it since: a listing that saw the old tail
// and not its successor ended before the successor was renamed into
// place, which is before the commit that superseded the old tail looks.
// Listings on other hosts raise nothing here, so the watch is used only
// on local file systems. Without it (a network file system, inotify's
// limits reached, the directory replaced), or for a tail written before
// the watch began or by another process, every superseded tail is kept as
// supersede describes.
type listings struct {
	fd    int       // the inotify instance; -1 when there is none
	since time.Time // when the watch began
	// last is when a look at the watch last found a listing (or an
	// overflow of its queue, which may hide one).
	last time.Time
	// born is when this process's tails were written, taken before their
	// files were renamed into place: what a listing is compared with.
	born map[plumbing.Hash]time.Time
	// gone: the watch ended (its directory removed or unmounted).
	gone bool
	buf  []byte
}

// watchListings starts the watch on the pack directory, once; under supMu.
func (r *Repo) watchListings() *listings {
	if r.listed != nil {
		return r.listed
	}
	l := &listings{fd: -1, born: map[plumbing.Hash]time.Time{}}
	r.listed = l
	// inotify instances are few per user (128 by default) and shared
	// with every other program of the user: a process holding many
	// stores open watches the first few.
	if watches.Add(1) > maxWatches {
		watches.Add(-1)
		return l
	}
	dir := filepath.Join(r.dir, "objects", "pack")
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) != nil || !localFS[uint32(fs.Type)] {
		watches.Add(-1)
		return l
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		watches.Add(-1)
		return l
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_ACCESS|syscall.IN_ONLYDIR); err != nil {
		syscall.Close(fd)
		watches.Add(-1)
		return l
	}
	// Taken once the watch is in place: tails written before are not
	// trusted to it.
	l.fd, l.since, l.buf = fd, time.Now(), make([]byte, 4096)
	return l
}

// localFS are the file systems (statfs magic numbers) whose every
// listing is a local one: ext2/3/4, XFS, Btrfs, tmpfs, F2FS.
var localFS = map[uint32]bool{0xEF53: true, 0x58465342: true, 0x9123683E: true, 0x01021994: true, 0xF2F52010: true}

// watches counts the watches of this process; maxWatches bounds them.
var watches atomic.Int32

const maxWatches = 16

// wroteTail records when a tail this process writes is about to appear;
// the caller renames its files into place after. Listings queued until
// now are read first: they cannot have seen it.
func (r *Repo) wroteTail(h plumbing.Hash) {
	r.supMu.Lock()
	defer r.supMu.Unlock()
	l := r.watchListings()
	if l.fd < 0 {
		return
	}
	l.drain()
	at := time.Now()
	if at.Before(l.since) {
		return
	}
	if len(l.born) >= 64 {
		// Tails that filled up are never superseded by a copy: forget
		// those of long ago.
		for k, t := range l.born {
			if at.Sub(t) > time.Minute {
				delete(l.born, k)
			}
		}
	}
	l.born[h] = at
}

// unlisted reports whether no plain reader can have listed the tail h
// while it was the newest copy of its objects (see listings): h was
// written by this process under the watch, and no listing was seen since.
// The caller has put h's successor in place. Under supMu.
func (r *Repo) unlisted(h plumbing.Hash) bool {
	l := r.listed
	if l == nil || l.fd < 0 {
		return false
	}
	born, ok := l.born[h]
	delete(l.born, h)
	l.drain()
	return ok && !l.gone && !born.Before(l.since) && l.last.Before(born)
}

// drain reads the watch's queue: the events of the directory itself are
// listings; those of files in it (a reader reading a pack) are not.
func (l *listings) drain() {
	for {
		n, err := syscall.Read(l.fd, l.buf)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&l.buf[off]))
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 || (ev.Len == 0 && ev.Mask&syscall.IN_ACCESS != 0) {
				l.last = time.Now()
			}
			if ev.Mask&(syscall.IN_IGNORED|syscall.IN_UNMOUNT) != 0 {
				l.gone = true // the directory was removed or replaced
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// closeListings ends the watch.
func (r *Repo) closeListings() {
	r.supMu.Lock()
	defer r.supMu.Unlock()
	if r.listed != nil && r.listed.fd >= 0 {
		// In the background: closing an inotify instance waits for the
		// kernel's grace period, 5 to 20 ms measured, which a server
		// closing a surplus store after each command added to its
		// answer.
		fd := r.listed.fd
		r.listed.fd = -1
		go func() {
			syscall.Close(fd)
			watches.Add(-1)
		}()
	}
}
