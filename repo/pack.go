package repo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
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
// Both files are written under git's temporary names and renamed into
// place, the index first: git finds a pack through its .idx and skips one
// whose .pack is missing, while go-git lists .pack files and fails on one
// without an .idx. In this order a reader of either kind, or a crash at any
// point, sees nothing or a complete pack.
func (r *Repo) writePack(objs []rawObject) (newPack, oldTail plumbing.Hash, err error) {
	tail := r.currentTail()
	if tail != nil && r.maintaining() {
		// git repack may be reading the tail, so it must stay; a copy
		// of it with these objects appended would have to stay too (up
		// to tailPackMax per commit until the next repack). These go in
		// a pack of their own, which is extended once maintenance is over.
		tail = nil
	}
	var buf bytes.Buffer
	iw := new(idxfile.Writer)
	// OnHeader resets the writer's entries, so it comes first; the index
	// takes its object count from the entries added, not from this.
	if err := iw.OnHeader(uint32(len(objs))); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	count := uint32(0)
	if tail != nil {
		buf.Grow(len(tail.data) + 4096)
		buf.Write(tail.data)
		for h, e := range tail.entries {
			iw.Add(h, uint64(e.offset), e.crc)
		}
		count = uint32(len(tail.entries))
		oldTail = tail.hash
	} else {
		var hdr [12]byte
		copy(hdr[:4], "PACK")
		binary.BigEndian.PutUint32(hdr[4:], 2)
		buf.Write(hdr[:])
	}
	zw, err := r.zlibWriter()
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	defer r.zlibPool.Put(zw)
	written := make(map[plumbing.Hash]idxEntry, len(objs))
	memo := map[int64]int{}
	for _, o := range objs {
		if _, dup := written[o.hash]; dup {
			continue
		}
		if tail != nil {
			if _, dup := tail.entries[o.hash]; dup {
				continue
			}
		}
		off := int64(buf.Len())
		body := o.body
		if d, baseOff, ok := r.deltaFor(tail, o, memo); ok {
			writeOfsDeltaHeader(&buf, len(d), off-baseOff)
			body = d
		} else {
			writeObjHeader(&buf, o.typ, len(o.body))
		}
		zw.Reset(&buf)
		if _, err := zw.Write(body); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		if err := zw.Close(); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		crc := crc32.ChecksumIEEE(buf.Bytes()[off:])
		iw.Add(o.hash, uint64(off), crc)
		written[o.hash] = idxEntry{offset: off, crc: crc}
		count++
	}
	if tail != nil && len(written) == 0 {
		// Everything is in the tail already: rewriting it would give the
		// same pack, and removing the "old" one would remove it.
		return tail.hash, tail.hash, nil
	}
	data := buf.Bytes()
	binary.BigEndian.PutUint32(data[8:], count)
	sum := sha1.Sum(data)
	copy(newPack[:], sum[:])
	if err := iw.OnFooter(newPack); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	idx, err := iw.Index()
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	var ibuf bytes.Buffer
	if _, err := idxfile.NewEncoder(&ibuf).Encode(idx); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}

	dir := filepath.Join(r.dir, "objects", "pack")
	base := filepath.Join(dir, "pack-"+newPack.String())
	if err := r.writeFileAtomic(dir, "tmp_idx_", base+".idx", ibuf.Bytes(), 0o444); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if err := r.writeFileAtomic(dir, "tmp_pack_", base+".pack", append(data, sum[:]...), 0o444); err != nil {
		os.Remove(base + ".idx")
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if r.opts.Sync {
		if err := syncDir(dir); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
	}
	if len(data) < tailPackMax {
		entries := make(map[plumbing.Hash]idxEntry, count)
		if tail != nil {
			for h, e := range tail.entries {
				entries[h] = e
			}
		}
		for h, e := range written {
			entries[h] = e
		}
		r.setTail(&tailPack{hash: newPack, data: data, entries: entries})
	} else {
		r.tailFull()
	}
	return newPack, oldTail, nil
}

// writeObjects writes objects that need no commit to be published (trees
// of a virtual merge base): the replaced tail goes at once, since the new
// pack holds everything it did.
func (r *Repo) writeObjects(objs []rawObject) error {
	newPack, oldTail, err := r.writePack(objs)
	if err == nil && !oldTail.IsZero() && oldTail != newPack && !r.maintaining() {
		r.removePack(oldTail)
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
	e, ok := tail.entries[o.base]
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
func (r *Repo) currentTail() *tailPack {
	r.tailMu.Lock()
	t, filled := r.tail, r.tailFilled
	r.tailMu.Unlock()
	if t != nil {
		if _, err := os.Stat(filepath.Join(r.dir, "objects", "pack", "pack-"+t.hash.String()+".pack")); err == nil {
			return t
		}
	} else if filled {
		// Searching now would pick some other nearly full pack (an old
		// tail that maintenance left), copy it whole into a pack that is
		// full again, and search again on the next commit.
		return nil
	}
	t = r.findTail()
	r.setTail(t)
	return t
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

// zlibWriter reuses compressors: a new one allocates about a megabyte,
// more than the rest of a write.
func (r *Repo) zlibWriter() (*zlib.Writer, error) {
	if zw, ok := r.zlibPool.Get().(*zlib.Writer); ok {
		return zw, nil
	}
	return zlib.NewWriterLevel(nil, r.opts.Compression)
}

// removePack deletes a pack: a tail whose objects a newer pack holds, or a
// pack whose commit was never published.
func (r *Repo) removePack(h plumbing.Hash) {
	base := filepath.Join(r.dir, "objects", "pack", "pack-"+h.String())
	os.Remove(base + ".pack")
	os.Remove(base + ".idx")
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

// writeFileAtomic writes data to a temporary file in dir, syncs it when the
// repo is durable, and renames it to dst.
func (r *Repo) writeFileAtomic(dir, prefix, dst string, data []byte, perm os.FileMode) error {
	f, tmp, err := r.createTemp(dir, prefix)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && r.opts.Sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	return nil
}

// createTemp creates a temporary file in dir.
func (r *Repo) createTemp(dir, prefix string) (*os.File, string, error) {
	tmp := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	return f, tmp, err
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
