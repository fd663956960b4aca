package repo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/sysfile"
)

// rawObject is an object about to be written.
type rawObject struct {
	typ  plumbing.ObjectType
	hash plumbing.Hash
	body []byte
	// base is the previous version of this object (the tree or file it
	// replaces), a candidate delta base; zero when there is none.
	base plumbing.Hash
}

// writePack writes objs as a pack and its index into objects/pack: the
// tail pack rewritten with objs appended (see tail.go), or a new pack. It
// returns the new pack and the tail it replaces, which the caller removes
// once the commit is published (removing it earlier could leave a reader
// without an object the branch needs).
//
// Both files are written whole under git's temporary names, then renamed
// into place back to back, the pack first, as git does: git finds a pack
// through its .idx and skips a .pack without one, but `git gc` deletes an
// .idx whose .pack is missing as garbage, which would leave the objects of
// a commit about to be published in a pack nothing indexes. A crash
// between the two renames leaves a .pack without its index, which
// maintenance indexes again (see RecoverPacks).
//
// The pack gets a .keep before it appears, as git's receive-pack has
// index-pack do for a pushed pack: until the branch names the commit, its
// objects are unreachable, and a `git repack -a -d` or `git gc` running
// meanwhile would drop them and delete the pack (git's repack lists the
// .pack files, and deletes an unkept one even before its index is
// there). The caller releases the
// keep (releaseInFlight) once the ref is published; a crash leaves a
// .keep naming a dead process, which maintenance removes.
//
// Under fsync the pack directory is flushed in the background: durable
// waits for it, and a ref must not name the pack before it returns (the
// ref's own file is flushed meanwhile; see fileLock.ready).
func (r *Repo) writePack(objs []rawObject) (newPack, oldTail plumbing.Hash, durable func() error, err error) {
	r.packMu.Lock()
	defer r.packMu.Unlock()
	tail, err := r.currentTail()
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, nil, err
	}
	repacking := r.maintaining()
	if tail != nil && repacking && !r.ourKeep(tail.hash) {
		// git repack may be reading the tail, so it must stay; a copy
		// of it with these objects appended would have to stay too (up
		// to tailPackMax per commit until the next repack). These go in
		// a new pack marked to be left out of the repack, which later
		// commits extend (see repackMayRead).
		tail = nil
	}
	var buf *bytes.Buffer
	var entries []packEntry
	first := int64(0) // where the pack's first commit ends (see tailPack.full)
	if tail != nil {
		first = tail.first
		// Appending reuses the tail's spare capacity, and the object
		// count in its header changes: from here a failure must drop
		// the cached tail, which a success replaces anyway.
		defer func() {
			if err != nil {
				r.setTail(nil)
			}
		}()
		buf = bytes.NewBuffer(tail.data)
		entries = tail.objs
		oldTail = tail.hash
	} else {
		buf = bytes.NewBuffer(make([]byte, 12, 4096))
		copy(buf.Bytes(), "PACK")
		binary.BigEndian.PutUint32(buf.Bytes()[4:], 2)
	}
	var added []packEntry
	seen := make(map[plumbing.Hash]bool, len(objs))
	memo := map[int64]int{}
	// Objects written earlier in this pack, as delta bases: a batch of
	// commits changes the same trees one after the other.
	type local struct {
		off   int64
		depth int
		body  []byte
	}
	written := map[plumbing.Hash]local{}
	for _, o := range objs {
		if seen[o.hash] {
			continue
		}
		seen[o.hash] = true
		if tail != nil {
			if _, dup := tail.find(o.hash); dup {
				continue
			}
		}
		off := int64(buf.Len())
		body := o.body
		depth := 0
		b, inPack := written[o.base]
		inPack = inPack && !o.base.IsZero() && b.depth < maxDeltaDepth-1 &&
			(o.typ == plumbing.TreeObject || o.typ == plumbing.BlobObject && len(o.body) >= minDeltaBlob)
		if inPack {
			if d := makeDelta(b.body, o.body); len(d) <= len(o.body)/2 {
				writeOfsDeltaHeader(buf, len(d), off-b.off)
				body, depth = d, b.depth+1
			} else {
				writeObjHeader(buf, o.typ, len(o.body))
			}
		} else if d, baseOff, ok := r.deltaFor(tail, o, memo); ok {
			writeOfsDeltaHeader(buf, len(d), off-baseOff)
			body, depth = d, tail.depth(baseOff, memo)+1
		} else {
			writeObjHeader(buf, o.typ, len(o.body))
		}
		written[o.hash] = local{off: off, depth: depth, body: o.body}
		if first == 0 && o.typ == plumbing.CommitObject {
			first = int64(buf.Len())
		}
		if err := r.deflate(buf, body); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, nil, err
		}
		added = append(added, packEntry{hash: o.hash, offset: off, crc: crc32.ChecksumIEEE(buf.Bytes()[off:])})
	}
	if tail != nil && len(added) == 0 {
		// Everything is in the tail already: rewriting it would give the
		// same pack, and removing the "old" one would remove it. The
		// commit that wrote the tail (in this process or another) may
		// not have flushed its directory yet.
		if r.syncing() {
			dir := filepath.Join(r.dir, "objects", "pack")
			return tail.hash, tail.hash, func() error { return syncDir(dir) }, nil
		}
		return tail.hash, tail.hash, noWait, nil
	}
	entries = mergeEntries(entries, added)
	data := buf.Bytes()
	binary.BigEndian.PutUint32(data[8:], uint32(len(entries)))
	sum := sha1.Sum(data)
	copy(newPack[:], sum[:])

	dir := filepath.Join(r.dir, "objects", "pack")
	base := filepath.Join(dir, "pack-"+newPack.String())
	// A copy of a kept tail is kept too, even when no repack ran as this
	// began: one may start before the old tail is removed, and git's
	// repack leaves out of its pack every object a kept pack holds. It
	// would roll an unkept copy up without the old tail's objects, and
	// removing the old tail would then lose them.
	keep := repacking || (tail != nil && tail.kept)
	content := []byte(tailKeep)
	if !keep {
		content = inFlightKeep() // released once the commit is published
	}
	// Before the pack and its index: git must find the pack kept from
	// the moment it can find the pack. Renamed in whole, so that a .keep
	// is ours or someone else's, never half written. Not flushed: a
	// .keep matters only to processes running beside this one, and
	// after a crash it is a leftover.
	var kerr error
	if keep {
		kerr = r.writeKeep(dir, base+".keep", content)
	} else {
		kerr = r.linkKeep(dir, base+".keep")
	}
	if kerr != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, nil, kerr
	}
	idx := encodeIdx(entries, newPack)
	r.wroteTail(newPack) // before the pack can be listed
	durable, err = r.writePackFiles(dir, base, idx, data, sum[:])
	if err != nil {
		os.Remove(base + ".keep")
		return plumbing.ZeroHash, plumbing.ZeroHash, nil, err
	}
	if !keep {
		r.tailMu.Lock()
		if r.inFlight == nil {
			r.inFlight = map[plumbing.Hash]int{}
		}
		r.inFlight[newPack]++
		r.tailMu.Unlock()
	}
	if tail == nil {
		r.packAdded.Store(true)
	}
	replaced := ""
	if !oldTail.IsZero() {
		replaced = "pack-" + oldTail.String()
	}
	r.mu.Lock()
	r.objs.wrote("pack-"+newPack.String(), idx, replaced)
	r.mu.Unlock()
	sharePack(r.objs.dir, "pack-"+newPack.String(), idx, replaced)
	if first == 0 {
		first = int64(len(data)) // objects without a commit
	}
	if t := (&tailPack{hash: newPack, data: data, objs: entries, kept: keep, first: first}); !t.full() {
		r.setTail(t)
	} else {
		r.tailFull()
	}
	return newPack, oldTail, durable, nil
}

// mergeEntries adds the new entries to the hash-ordered old ones, in place
// when old has the room: a commit adds a handful to a tail of a thousand,
// an import may add a hundred thousand to nothing.
func mergeEntries(old, added []packEntry) []packEntry {
	byHash := func(a, b packEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) }
	slices.SortFunc(added, byHash)
	n, m := len(old), len(added)
	out := slices.Grow(old, m)[:n+m]
	// From the back, so that nothing of old is overwritten before it moves.
	for i, j, k := n-1, m-1, n+m-1; j >= 0; k-- {
		if i >= 0 && byHash(out[i], added[j]) > 0 {
			out[k] = out[i]
			i--
		} else {
			out[k] = added[j]
			j--
		}
	}
	return out
}

// writePackFiles puts a pack and its index in place: both are written
// whole first, then renamed back to back, the pack before the index (see
// writePack). Under fsync the two files are flushed at the same time, and
// then the directory in the background, while the caller writes the ref's
// new file: two flushes issued together took 1.35x as long as one on the
// disks we measured, where two in turn take 2x.
func (r *Repo) writePackFiles(dir, base string, idx []byte, pack ...[]byte) (durable func() error, err error) {
	var tmpIdx, tmpPack string
	var idxErr error
	if r.syncing() {
		idxDone := make(chan struct{})
		go func() {
			defer close(idxDone)
			tmpIdx, idxErr = r.writeTemp(dir, "tmp_idx_", 0o444, idx)
		}()
		tmpPack, err = r.writeTemp(dir, "tmp_pack_", 0o444, pack...)
		<-idxDone
	} else if tmpIdx, idxErr = r.writeTemp(dir, "tmp_idx_", 0o444, idx); idxErr == nil {
		tmpPack, err = r.writeTemp(dir, "tmp_pack_", 0o444, pack...)
	}
	if err != nil {
		err = fmt.Errorf("write %s: %w", filepath.Base(base)+".pack", err)
	}
	if idxErr != nil {
		idxErr = fmt.Errorf("write %s: %w", filepath.Base(base)+".idx", idxErr)
	}
	if err == nil && idxErr == nil {
		if err = sysfile.Rename(tmpPack, base+".pack"); err == nil {
			testHookPackRenamed(base)
			if err = sysfile.Rename(tmpIdx, base+".idx"); err != nil {
				os.Remove(base + ".pack")
			} else {
				err = r.outlastGitGC(dir, base, idx)
			}
		}
	}
	if err != nil || idxErr != nil {
		for _, tmp := range []string{tmpPack, tmpIdx} {
			if tmp != "" {
				os.Remove(tmp)
			}
		}
		return nil, errors.Join(err, idxErr)
	}
	if !r.syncing() {
		return noWait, nil
	}
	dirDone := make(chan error, 1)
	go func() { dirDone <- syncDir(dir) }()
	return func() error { return <-dirDone }, nil
}

// outlastGitGC makes sure the index just renamed into place survives a
// `git gc` running beside this write, before any ref names the pack. git
// gc ends by deleting every .idx it listed without its .pack, and in a
// pack directory too large for one read of the directory (hundreds of
// files) its listing may catch the index renamed after the pack and miss
// the pack renamed just before. So while a git gc of this host runs
// (gc.pid names a live process, as git itself judges it), the write
// waits for it to end, and an index deleted meanwhile is written again.
// Without a gc running this costs two failed lookups.
func (r *Repo) outlastGitGC(dir, base string, idx []byte) error {
	for waited := time.Duration(0); ; {
		for gitGCRunning(r.dir) && waited < gitGCWaitMax {
			time.Sleep(10 * time.Millisecond)
			waited += 10 * time.Millisecond
		}
		if exists(base + ".idx") {
			return nil
		}
		if err := r.writeFileAtomic(dir, "tmp_idx_", base+".idx", 0o444, idx); err != nil {
			return err
		}
		if waited >= gitGCWaitMax {
			return nil
		}
	}
}

// gitGCWaitMax bounds how long a write waits for a git gc (see
// outlastGitGC): past it, the write goes on as it did before.
const gitGCWaitMax = 10 * time.Minute

// gitGCRunning reports whether gc.pid names a live git gc of this host,
// as git's own gc judges it (a pid file older than 12 hours is stale).
func gitGCRunning(gitDir string) bool {
	path := filepath.Join(gitDir, "gc.pid")
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return false
	}
	if fi, err := os.Stat(path); err != nil || time.Since(fi.ModTime()) > 12*time.Hour {
		return false
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(f[0])
	return err == nil && pid > 0 && f[1] == host && processAlive(pid)
}

// Test seams in the write path, run at the instants a concurrent git
// gc or repack can do the most harm: testHookPackRenamed between the
// renames of a new pack and of its index (base is its path without
// extension), testHookBeforeRef once both are in place and before the
// branch is moved. No-ops outside tests.
var (
	testHookPackRenamed = func(base string) {}
	testHookBeforeRef   = func() {}
)

// writeKeep puts a .keep in place whole, unflushed (see writePack).
func (r *Repo) writeKeep(dir, dst string, content []byte) error {
	tmp := filepath.Join(dir, "tmp_keep_"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64(), 36))
	err := sysfile.WriteNew(tmp, 0o644, false, false, content)
	if err == nil {
		err = sysfile.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	return nil
}

// linkKeep puts the .keep of a pack in flight in place as a link to this
// process's one in-flight keep file: every commit has one, and a new file
// (a fresh inode) is the costliest thing a commit's file work does, where
// a link is a directory entry. git reads a .keep's existence, and
// maintenance its content, which the links share. The file lives in
// aiwg/ (inflightKeepName), where git looks for nothing; it is made again
// if it went, and maintenance removes a dead process's.
func (r *Repo) linkKeep(dir, dst string) error {
	tpl := filepath.Join(r.dir, "aiwg", inflightKeepName+strconv.Itoa(os.Getpid()))
	for attempt := 0; ; attempt++ {
		r.tailMu.Lock()
		made := r.keepMade
		r.tailMu.Unlock()
		if (!made || attempt > 0) && !exists(tpl) {
			// Written only when missing: the name holds our pid, so a
			// file there is this process's, written by another Repo of
			// the same store. Replacing it would free the file under a
			// link that Repo is making, which then fails (a link to a
			// file with no name left); two writing it at once can still
			// do that, and the next attempt links to the survivor.
			if err := os.MkdirAll(filepath.Dir(tpl), 0o755); err != nil {
				return err
			}
			if err := r.writeKeep(dir, tpl, inFlightKeep()); err != nil {
				return err
			}
		}
		if !made {
			r.tailMu.Lock()
			r.keepMade = true
			r.tailMu.Unlock()
		}
		err := os.Link(tpl, dst)
		switch {
		case err == nil, errors.Is(err, fs.ErrExist):
			return nil // a pack this process has in flight twice is kept already
		case errors.Is(err, fs.ErrNotExist) && attempt < 3:
			continue
		default:
			return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
		}
	}
}

// inflightKeepName starts the name of a process's in-flight keep file in
// aiwg/; its pid follows.
const inflightKeepName = "inflight-keep-"

// inFlightKeep is the content of the .keep that protects a pack until its
// commit is published, in git's own format for a pack a process is
// receiving ("receive-pack <pid> on <host>"): maintenance recognizes the
// keep of a process that is gone.
var inFlightKeep = sync.OnceValue(func() []byte {
	host, err := os.Hostname()
	if err != nil || host == "" || strings.ContainsAny(host, " \n") {
		host = "localhost"
	}
	return []byte(inFlightKeepPrefix + strconv.Itoa(os.Getpid()) + " on " + host + "\n")
})

const inFlightKeepPrefix = "aiwg-state "

// releaseInFlight removes the .keep writePack put on pack h for its
// commit, once the branch names the commit, or the commit failed (the
// pack then stays, an ordinary pack). A pack this process wrote twice in
// flight (the same objects on two branches) keeps it until both are done.
func (r *Repo) releaseInFlight(h plumbing.Hash) {
	r.tailMu.Lock()
	n, ok := r.inFlight[h]
	if ok {
		if n > 1 {
			r.inFlight[h] = n - 1
		} else {
			delete(r.inFlight, h)
		}
	}
	r.tailMu.Unlock()
	if ok && n == 1 {
		os.Remove(filepath.Join(r.dir, "objects", "pack", "pack-"+h.String()+".keep"))
	}
}

// isInFlight reports whether pack h is one of this process's packs whose
// commit is not yet published.
func (r *Repo) isInFlight(h plumbing.Hash) bool {
	r.tailMu.Lock()
	defer r.tailMu.Unlock()
	return r.inFlight[h] > 0
}

func noWait() error { return nil }

// writeObjects writes objects that need no commit to be published (trees
// of a virtual merge base): the replaced tail is superseded at once, since
// the new pack holds everything it did.
func (r *Repo) writeObjects(objs []rawObject) error {
	return r.writeObjectsThen(objs, nil)
}

// writeObjectsThen is writeObjects with publish (a ref update naming the
// objects) run once they are durable and while their pack is still kept:
// a git repack running beside it would otherwise drop them as unreachable
// in the moment between the write and the ref, as it would a commit's.
func (r *Repo) writeObjectsThen(objs []rawObject, publish func() error) error {
	newPack, oldTail, durable, err := r.writePack(objs)
	if err != nil {
		return err
	}
	err = durable()
	var perr error
	if err == nil && publish != nil {
		perr = publish()
	}
	if err == nil && !oldTail.IsZero() && oldTail != newPack && !r.repackMayRead(oldTail) && !r.isInFlight(oldTail) {
		r.supersede(oldTail)
	}
	if oldTail != newPack {
		r.releaseInFlight(newPack)
	}
	if err == nil {
		err = perr
	}
	return err
}

// deltaFor encodes o as a delta against its previous version when that
// version is in the tail pack, the chain stays short, and the delta is
// much smaller than the object.
func (r *Repo) deltaFor(tail *tailPack, o rawObject, memo map[int64]int) ([]byte, int64, bool) {
	if tail == nil || o.base.IsZero() || (o.typ == plumbing.BlobObject && len(o.body) < minDeltaBlob) || o.typ == plumbing.CommitObject {
		return nil, 0, false
	}
	e, ok := tail.find(o.base)
	if !ok || tail.depth(e.offset, memo) >= maxDeltaDepth-1 {
		return nil, 0, false
	}
	src, ok := r.cachedBody(o.base, o.typ)
	if !ok {
		return nil, 0, false
	}
	d := makeDelta(src, o.body)
	if len(d) > len(o.body)/2 {
		return nil, 0, false
	}
	return d, e.offset, true
}

// cachedBody returns an object's body from the cache (a decoded tree is
// re-encoded); a delta base missing there is not worth a read.
func (r *Repo) cachedBody(h plumbing.Hash, t plumbing.ObjectType) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.cache.get(h); ok {
		if v, ok := o.(rawObject); ok {
			return v.body, v.typ == t
		}
	}
	if body, ok := r.lastTrees[h]; ok {
		return body, t == plumbing.TreeObject
	}
	if o, ok := r.cache.get(treeKey(h)); ok && t == plumbing.TreeObject {
		if v, ok := o.(*Tree); ok {
			return encodeTree(v.Entries), true
		}
	}
	return nil, false
}

// currentTail is the tail pack to extend: this process's last one while
// its file is still there, else the newest small pack on disk; nil (start
// a new pack) right after this process filled a tail.
func (r *Repo) currentTail() (*tailPack, error) {
	r.tailMu.Lock()
	t, filled := r.tail, r.tailFilled
	r.tailMu.Unlock()
	if t != nil {
		if _, err := os.Stat(filepath.Join(r.dir, "objects", "pack", "pack-"+t.hash.String()+".pack")); err == nil {
			return t, nil
		}
	} else if filled {
		// Searching now would pick some other nearly full pack (an old
		// tail that maintenance left), copy it whole into a pack that is
		// full again, and search again on the next commit.
		return nil, nil
	}
	t, err := r.findTail(false)
	if err != nil {
		return nil, err
	}
	r.setTail(t)
	if t != nil {
		r.tailMu.Lock()
		r.foundTail = t.hash
		r.tailMu.Unlock()
	}
	return t, nil
}

// setTail caches t as the tail to extend; nil means search the disk.
func (r *Repo) setTail(t *tailPack) {
	r.tailMu.Lock()
	r.tail, r.tailFilled = t, false
	r.tailMu.Unlock()
}

// tailFull records that the pack just written reached tailPackMax: the
// next commit starts a new one.
func (r *Repo) tailFull() {
	r.tailMu.Lock()
	r.tail, r.tailFilled = nil, true
	r.tailMu.Unlock()
}

// deflate appends body to buf as a zlib stream at the store's compression
// level.
func (r *Repo) deflate(buf *bytes.Buffer, body []byte) error {
	if r.opts.Compression == zlib.NoCompression {
		buf.Write(appendStored(buf.AvailableBuffer(), body))
		return nil
	}
	zw, ok := r.zlibPool.Get().(*zlib.Writer)
	if !ok {
		var err error
		// A compressor allocates about a megabyte: reused.
		if zw, err = zlib.NewWriterLevel(nil, r.opts.Compression); err != nil {
			return err
		}
	}
	defer r.zlibPool.Put(zw)
	zw.Reset(buf)
	if _, err := zw.Write(body); err != nil {
		return err
	}
	return zw.Close()
}

// appendStored appends data to b as a zlib stream of stored (not
// compressed) deflate blocks, the level a store writes by default. It is
// what compress/zlib writes at NoCompression, without the compressor of
// about a megabyte that compress/flate allocates even for that level: in
// a CLI write, the largest memory the process touched after the tail.
func appendStored(b, data []byte) []byte {
	sum := adler32.Checksum(data)
	b = append(b, 0x78, 0x01) // deflate, 32 KiB window, no dictionary
	for {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		b = append(b, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		b = append(b, data[:n]...)
		data = data[n:]
		if final == 1 {
			return binary.BigEndian.AppendUint32(b, sum)
		}
	}
}

// removePack deletes a tail whose objects a newer pack holds, and its
// .keep if it is ours; a pack someone else keeps stays. gitFiles says the
// pack may have a bitmap or reverse index beside it, which go with it.
func (r *Repo) removePack(h plumbing.Hash, gitFiles bool) {
	base := filepath.Join(r.dir, "objects", "pack", "pack-"+h.String())
	kept, ours := readKeep(base + ".keep")
	if kept && !ours {
		return
	}
	// Under fsync the pack's blocks are on the disk: the files are
	// freed off the writer's path (see holdFile). Without it they seldom
	// are, and freeing them costs less than opening them.
	pack, idx := -1, -1
	if r.syncing() {
		pack, idx = holdFile(base+".pack"), holdFile(base+".idx")
	}
	os.Remove(base + ".pack")
	os.Remove(base + ".idx")
	letGo(pack, idx)
	r.tailMu.Lock()
	found := r.foundTail == h
	r.tailMu.Unlock()
	if found || gitFiles {
		// What git gc may have written beside a pack that then became
		// the tail, which git would report as garbage without its pack.
		// Packs aiwg-state wrote have none: spared two failed unlinks.
		for _, ext := range []string{".bitmap", ".rev"} {
			os.Remove(base + ext)
		}
	}
	if ours {
		os.Remove(base + ".keep")
	}
}

// writeObjHeader writes a pack entry header: type and size as git's varint.
func writeObjHeader(buf *bytes.Buffer, t plumbing.ObjectType, size int) {
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
}

// writeFileAtomic writes the chunks of data to a temporary file in dir,
// syncs it when the repo is durable, and renames it to dst.
func (r *Repo) writeFileAtomic(dir, prefix, dst string, perm os.FileMode, data ...[]byte) error {
	tmp, err := r.writeTemp(dir, prefix, perm, data...)
	if err == nil {
		err = sysfile.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	return nil
}

// writeTemp writes the chunks of data to a new temporary file in dir,
// synced when the repo is durable, and returns its name.
func (r *Repo) writeTemp(dir, prefix string, perm os.FileMode, data ...[]byte) (string, error) {
	// The pid in the name lets maintenance tell a killed writer's file
	// from a live one's (see removeStaleTemp).
	tmp := filepath.Join(dir, prefix+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64(), 36))
	if err := sysfile.WriteNew(tmp, perm, true, r.syncing(), data...); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
