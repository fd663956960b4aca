package repo

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
)

// Packs written by this process, shared by every Repo of their directory.
// A server opens its store several times (a store per command running at
// once), and each commit's first read of the head (the commit another
// store of the process just wrote) missed in the packs its own Repo had
// listed: every miss listed the pack directory, checked every index's
// mode and mapped the new ones, a fifth of a served write's time. The
// indexes a Repo writes are kept here, so another Repo of the directory
// that misses looks in the packs written since its last listing before it
// lists the directory again.

// maxSharedPacks is how many of the last packs written are kept per
// directory: an index of a tail is a few kilobytes.
const maxSharedPacks = 32

// maxSharedDirs bounds the directories remembered: a process that opens
// many stores over its life keeps only the last ones written to.
const maxSharedDirs = 8

type sharedPack struct {
	seq      int64
	name     string // pack-<hash>
	idx      []byte // its index, never changed after
	replaced string // the tail it replaces, or ""
}

var shared struct {
	mu   sync.Mutex
	seq  int64
	dirs map[string][]sharedPack // by objects directory, oldest first
}

// sharePack records a pack a Repo of objectDir wrote.
func sharePack(objectDir, name string, idx []byte, replaced string) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.dirs == nil {
		shared.dirs = map[string][]sharedPack{}
	}
	shared.seq++
	l, ok := shared.dirs[objectDir]
	if !ok && len(shared.dirs) >= maxSharedDirs {
		// Forget the directory written to least recently.
		var oldest string
		var at int64 = -1
		for d, e := range shared.dirs {
			if last := e[len(e)-1].seq; at < 0 || last < at {
				oldest, at = d, last
			}
		}
		delete(shared.dirs, oldest)
	}
	l = append(l, sharedPack{seq: shared.seq, name: name, idx: idx, replaced: replaced})
	if len(l) > maxSharedPacks {
		l = slices.Clone(l[len(l)-maxSharedPacks:])
	}
	shared.dirs[objectDir] = l
}

// sharedSeq is the sequence number of the last pack shared: taken before
// a listing, the packs after it are those the listing may have missed.
func sharedSeq() int64 {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.seq
}

// sharedSince returns the packs of objectDir shared after seq that are
// still remembered (a miss in them lists the directory, as before).
func sharedSince(objectDir string, seq int64) []sharedPack {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	l := shared.dirs[objectDir]
	i, _ := slices.BinarySearchFunc(l, seq+1, func(p sharedPack, s int64) int { return cmp.Compare(p.seq, s) })
	return slices.Clone(l[i:])
}

// catchUp adds the packs other Repos of the process wrote since this
// reader's last listing, newest first, ahead of the packs it knows, and
// reports whether it added any. What they replaced is retired (a read may
// be under way: see scan), as a listing would.
func (o *objReader) catchUp() bool {
	if !o.loaded {
		return false
	}
	news := sharedSince(o.dir, o.sharedSeen)
	if len(news) == 0 {
		return false
	}
	o.sharedSeen = news[len(news)-1].seq
	if len(o.packs)+len(news) > max(2*o.listed, 64) {
		// Packs a roll-up removed stay listed until a listing: past
		// this, list the directory (the caller does) rather than grow
		// the list every lookup walks (see wrote).
		return false
	}
	known := make(map[string]bool, len(o.packs))
	for _, p := range o.packs {
		known[p.name] = true
	}
	replaced := map[string]bool{}
	var add []*packIndex
	for i := len(news) - 1; i >= 0; i-- {
		s := news[i]
		if s.replaced != "" {
			replaced[s.replaced] = true
		}
		if known[s.name] || replaced[s.name] {
			continue
		}
		known[s.name] = true
		add = append(add, &packIndex{name: s.name, idx: s.idx, n: int(binary.BigEndian.Uint32(s.idx[8+255*4:])), heapIdx: true})
	}
	if len(add) == 0 {
		return false
	}
	packs := add
	for _, p := range o.packs {
		if replaced[p.name] {
			o.retired = append(o.retired, p)
			continue
		}
		packs = append(packs, p)
	}
	o.packs = packs
	return true
}
