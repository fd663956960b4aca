package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"syscall"
)

// A fold streams: the new snapshot is the old one merged with the log's
// commits, written section by section straight to the file, rather than
// every commit of the old snapshot decoded and built again in memory
// (which at a million commits took about 3 s and 450 MB, every 1,024
// commits). What it holds is the new commits' compact form (a builder of
// them alone) and one word per key of the old snapshot (its new id); the
// old snapshot is read through its mapping, once per section, in order.
//
//   - commits, extra: the old rows and parents' lists as they are, then the
//     new ones (numbered on, their extra and fwd offsets after the old);
//   - hashidx, mut: merges of the old sorted tables with the new entries;
//   - dict, strs, posts: a merge of the old sorted keys with the new keys;
//     a key's posting lists are its old lists then the new commits;
//   - fwd: the old entries with their key ids renumbered into the merged
//     dictionary (the blobs copied as they are), then the new ones.
//
// The result is byte for byte the snapshot the whole rebuild writes
// (foldParts, which the tests hold it to). That holds for a snapshot the
// builder laid out, in this format; anything else (a snapshot of format
// 2, which has no blobs, or one whose tables are not laid out as the
// builder lays them out) is rebuilt whole once, in the current format,
// and the folds after it stream.

// errNotStreamable: the old snapshot is not laid out as the builder lays
// one out, so the fold rebuilds it whole instead.
var errNotStreamable = errors.New("index snapshot: not laid out for a streamed fold")

// streamFault, when set (by tests), fails a streamed fold's write once
// this many bytes are written.
var streamFault func(written int64) error

// foldReleaseEvery is how many bytes a streamed fold writes between
// releases of the old snapshot's mapped pages: it reads each of them
// once, and holding them all would make the fold's resident memory the
// snapshot's size again (they stay in the page cache).
var foldReleaseEvery int64 = 8 << 20

// foldParts is the fold rebuilt whole in memory: every commit of the old
// snapshot (nil: none) and then tail's, added to a builder. A fold takes
// it when the snapshot cannot stream; tests hold the streamed fold to it.
func foldParts(snap *snapshot, tail []*commit, gen uint64) [][]byte {
	n := len(tail)
	if snap != nil {
		n += snap.n
	}
	b := newSnapBuilder(n)
	if snap != nil {
		snap.each(b.add)
	}
	for _, c := range tail {
		b.add(c)
	}
	return b.finishParts(gen)
}

// streamable tells whether s's header lays its sections out as the
// builder does, in this format: one after the other, in order, to the end
// of the file.
func (s *snapshot) streamable() bool {
	n, nk := s.n, s.nkeys
	return s.version == snapVersion &&
		s.commits == snapHeaderSize && s.hashidx == s.commits+n*commitSize &&
		s.extra == s.hashidx+n*hashIdxSize && s.extra <= s.fwd && s.fwd <= s.dict &&
		s.strs == s.dict+nk*dictSize && s.strs <= s.posts && s.posts <= s.mut &&
		s.mut+8*s.nmut == len(s.data) &&
		(s.fwd-s.extra)%4 == 0 && (s.dict-s.fwd)%4 == 0 && (s.mut-s.posts)%4 == 0
}

// snapWriter writes a snapshot's sections through a buffer, keeping the
// checksum of what it wrote.
type snapWriter struct {
	f       snapFile
	buf     []byte
	crc     uint32
	written int64 // bytes handed to the file, header included
	old     *snapshot
	unused  int64 // written since the old snapshot's pages were let go of
	err     error
}

// snapWriteBuf is the size of a streamed fold's writes (a variable for
// the tests, which write through a small one).
var snapWriteBuf = 1 << 20

func (w *snapWriter) flush() {
	if w.err != nil || len(w.buf) == 0 {
		w.buf = w.buf[:0]
		return
	}
	if streamFault != nil {
		w.err = streamFault(w.written)
	}
	if w.err == nil {
		w.crc = crc32.Update(w.crc, crc32.IEEETable, w.buf)
		_, w.err = w.f.Write(w.buf)
	}
	w.written += int64(len(w.buf))
	w.unused += int64(len(w.buf))
	w.buf = w.buf[:0]
	if w.unused >= foldReleaseEvery && w.old.mapped {
		w.unused = 0
		_ = syscall.Madvise(w.old.data, syscall.MADV_DONTNEED)
	}
}

func (w *snapWriter) u32(v uint32) {
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
	if len(w.buf) >= snapWriteBuf {
		w.flush()
	}
}

func (w *snapWriter) bytes(p []byte) {
	for len(p) > 0 {
		k := min(len(p), snapWriteBuf-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) >= snapWriteBuf {
			w.flush()
		}
	}
}

func (w *snapWriter) str(k string) {
	w.buf = append(w.buf, k...)
	if len(w.buf) >= snapWriteBuf {
		w.flush()
	}
}

// writeStreamedFold publishes at path the snapshot of s followed by the
// commits of tail (numbered after s's), as foldParts would lay it out:
// temporary file, fsync, rename. errNotStreamable (nothing published)
// says s must be rebuilt whole instead.
func writeStreamedFold(path string, s *snapshot, tail []*commit, gen uint64) error {
	if !s.streamable() {
		return errNotStreamable
	}
	return publishFile(path, func(f *os.File) error { return streamFold(f, s, tail, gen) })
}

// snapFile is where streamFold writes: the temporary file (a buffer in
// the fuzz test).
type snapFile interface {
	Write(p []byte) (int, error)
	WriteAt(p []byte, off int64) (int, error)
}

// streamFold writes the merged snapshot to f, from its start.
func streamFold(f snapFile, s *snapshot, tail []*commit, gen uint64) error {
	le := binary.LittleEndian
	b := newSnapBuilder(len(tail))
	b.n = int32(s.n)
	oldExtra, oldFwd := s.fwd-s.extra, s.dict-s.fwd
	b.extraBase, b.fwdBase = uint32(oldExtra), uint32(oldFwd)
	for _, c := range tail {
		b.add(c)
	}
	n := s.n + len(tail)

	// The keys: the new ones sorted, then merged with the old, which gives
	// every key its id in the new dictionary.
	order := make([]uint32, len(b.keys)) // sorted position -> provisional id
	for i := range order {
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return b.keys[order[i]] < b.keys[order[j]] })
	remapNew := make([]uint32, len(b.keys)) // provisional id -> merged id
	remapOld := make([]uint32, s.nkeys)     // old id -> merged id
	strsLen := s.posts - s.strs
	postsLen := (s.mut - s.posts) / 4
	oldKey := func(id int) (so, sl int) {
		o := s.dict + id*dictSize
		return int(s.u32(o)), int(s.u32(o + 4))
	}
	oldPosts := func(id, kind int) (start, cnt int) {
		o := s.dict + id*dictSize + 8 + 8*kind
		return int(s.u32(o)), int(s.u32(o + 4))
	}
	// oldAt is old key i, checked to lie within strs, with its lists
	// within posts, and to sort after the one before.
	oldAt := func(i int, prev []byte) ([]byte, bool) {
		so, sl := oldKey(i)
		if so > strsLen || sl > strsLen-so {
			return nil, false
		}
		for kind := 0; kind < 3; kind++ {
			if start, cnt := oldPosts(i, kind); start > postsLen || cnt > postsLen-start {
				return nil, false
			}
		}
		k := s.data[s.strs+so : s.strs+so+sl]
		return k, i == 0 || bytes.Compare(prev, k) < 0
	}
	var nkeys, keyBytes, posts int
	var ko []byte // old key i
	if s.nkeys > 0 {
		var ok bool
		if ko, ok = oldAt(0, nil); !ok {
			return errNotStreamable
		}
	}
	for i, j := 0, 0; i < s.nkeys || j < len(order); nkeys++ {
		takeOld, takeNew := i < s.nkeys, j < len(order)
		if takeOld && takeNew {
			nk := b.keys[order[j]]
			takeOld, takeNew = string(ko) <= nk, string(ko) >= nk
		}
		if takeNew {
			remapNew[order[j]] = uint32(nkeys)
			if !takeOld {
				keyBytes += len(b.keys[order[j]])
			}
			j++
		}
		if takeOld {
			remapOld[i] = uint32(nkeys)
			keyBytes += len(ko)
			if i++; i < s.nkeys {
				var ok bool
				if ko, ok = oldAt(i, ko); !ok {
					return errNotStreamable
				}
			}
		}
	}
	for i := 0; i < s.nkeys; i++ {
		for kind := 0; kind < 3; kind++ {
			_, cnt := oldPosts(i, kind)
			posts += cnt
		}
	}
	for _, p := range b.post {
		posts += len(p[0]) + len(p[1]) + len(p[2])
	}
	// merged hands each key of the new dictionary, in order, to fn: its
	// old id and its provisional id in b, -1 for none.
	merged := func(fn func(old, nw int)) {
		for i, j := 0, 0; i < s.nkeys || j < len(order); {
			switch {
			case j == len(order) || (i < s.nkeys && remapOld[i] < remapNew[order[j]]):
				fn(i, -1)
				i++
			case i == s.nkeys || remapOld[i] > remapNew[order[j]]:
				fn(-1, int(order[j]))
				j++
			default:
				fn(i, int(order[j]))
				i++
				j++
			}
		}
	}

	muts := b.muts
	sort.Slice(muts, func(a, b int) bool {
		if muts[a].id != muts[b].id {
			return muts[a].id < muts[b].id
		}
		return muts[a].num < muts[b].num
	})
	nmut := s.nmut + len(muts)

	// The header, whose checksum is written last.
	secs := [8]int{n * commitSize, n * hashIdxSize, oldExtra + len(b.extraB), oldFwd + 4*len(b.fwdB),
		nkeys * dictSize, keyBytes, 4 * posts, 8 * nmut}
	head := make([]byte, snapHeaderSize)
	copy(head, snapMagic)
	le.PutUint32(head[12:], snapVersion)
	le.PutUint64(head[16:], gen)
	le.PutUint32(head[24:], uint32(n))
	le.PutUint32(head[28:], uint32(nkeys))
	le.PutUint32(head[32:], uint32(nmut))
	size := snapHeaderSize
	for i, l := range secs {
		le.PutUint64(head[40+8*i:], uint64(size))
		size += l
	}
	w := &snapWriter{f: f, buf: make([]byte, 0, snapWriteBuf+64), old: s}
	if s.mapped {
		// Loading the log looked its commits' parents up in the hash
		// index, which mapped much of it.
		_ = syscall.Madvise(s.data, syscall.MADV_DONTNEED)
	}
	w.buf = append(w.buf, head...)
	w.flush()
	if w.err != nil {
		return w.err
	}
	w.crc = crc32.ChecksumIEEE(head[12:])

	// commits: the old rows, whose merges' lists of parents must lie in
	// extra one after the other as the builder writes them, then the new.
	ex := 0
	for i := 0; i < s.n; i++ {
		row := s.data[s.commits+i*commitSize : s.commits+(i+1)*commitSize]
		if e := le.Uint32(row[32:]); e != noExtra {
			if int(e) != ex || oldExtra-ex < 4 {
				return errNotStreamable
			}
			cnt := int(s.u32(s.extra + ex))
			if cnt < 2 || (oldExtra-ex-4)/4 < cnt || s.u32(s.extra+ex+4) != le.Uint32(row[20:]) {
				return errNotStreamable
			}
			ex += 4 + 4*cnt
		}
		w.bytes(row)
	}
	if ex != oldExtra {
		return errNotStreamable
	}
	w.bytes(b.commitsB)

	// hashidx: the old table and the new commits' hashes, merged.
	newHash := make([]int32, len(tail))
	for i := range newHash {
		newHash[i] = int32(i)
	}
	hashAt := func(i int32) []byte { return b.commitsB[int(i)*commitSize : int(i)*commitSize+20] }
	sort.Slice(newHash, func(x, y int) bool { return bytes.Compare(hashAt(newHash[x]), hashAt(newHash[y])) < 0 })
	var prevHash []byte
	for i, j := 0, 0; i < s.n || j < len(newHash); {
		if i < s.n {
			e := s.data[s.hashidx+i*hashIdxSize : s.hashidx+(i+1)*hashIdxSize]
			if j == len(newHash) || bytes.Compare(e[:20], hashAt(newHash[j])) < 0 {
				if (i > 0 && bytes.Compare(prevHash, e[:20]) >= 0) || int(le.Uint32(e[20:])) >= s.n {
					return errNotStreamable
				}
				prevHash = e[:20]
				w.bytes(e)
				i++
				continue
			}
		}
		w.bytes(hashAt(newHash[j]))
		w.u32(uint32(s.n) + uint32(newHash[j]))
		j++
	}
	newHash = nil

	// extra.
	w.bytes(s.data[s.extra:s.fwd])
	w.bytes(b.extraB)

	// fwd: the old entries, one per commit in order, their keys
	// renumbered; then the new ones.
	pos := 0
	for i := 0; i < s.n; i++ {
		if int(s.u32(s.commits+i*commitSize+36)) != pos || oldFwd-pos < 12 {
			return errNotStreamable
		}
		o := s.fwd + pos
		w0, ne, nd := s.u32(o), s.u32(o+4), s.u32(o+8)
		nf := w0 &^ hasBlobs
		cnt := uint64(nf) + uint64(ne) + uint64(nd)
		end := uint64(pos) + 12 + 4*cnt
		if w0&hasBlobs != 0 {
			end += 20 * uint64(nf)
		}
		if end > uint64(oldFwd) {
			return errNotStreamable
		}
		w.u32(w0)
		w.u32(ne)
		w.u32(nd)
		for k := 0; k < int(cnt); k++ {
			id := s.u32(o + 12 + 4*k)
			if int(id) >= s.nkeys {
				return errNotStreamable
			}
			w.u32(remapOld[id])
		}
		w.bytes(s.data[o+12+4*int(cnt) : s.fwd+int(end)])
		pos = int(end)
	}
	if pos != oldFwd {
		return errNotStreamable
	}
	for i := 0; i < len(b.fwdB); {
		withBlobs := b.fwdB[i]&hasBlobs != 0
		nf := b.fwdB[i] &^ hasBlobs
		cnt := int(nf + b.fwdB[i+1] + b.fwdB[i+2])
		w.u32(b.fwdB[i])
		w.u32(b.fwdB[i+1])
		w.u32(b.fwdB[i+2])
		for _, id := range b.fwdB[i+3 : i+3+cnt] {
			w.u32(remapNew[id])
		}
		i += 3 + cnt
		if withBlobs {
			for _, v := range b.fwdB[i : i+5*int(nf)] {
				w.u32(v)
			}
			i += 5 * int(nf)
		}
	}

	// dict, strs, posts: the merged keys, three times over.
	stroff, postoff := 0, 0
	merged(func(old, nw int) {
		var l int
		if old >= 0 {
			_, l = oldKey(old)
		} else {
			l = len(b.keys[nw])
		}
		w.u32(uint32(stroff))
		w.u32(uint32(l))
		stroff += l
		for kind := 0; kind < 3; kind++ {
			cnt := 0
			if old >= 0 {
				_, cnt = oldPosts(old, kind)
			}
			if nw >= 0 {
				cnt += len(b.post[nw][kind])
			}
			w.u32(uint32(postoff))
			w.u32(uint32(cnt))
			postoff += cnt
		}
	})
	merged(func(old, nw int) {
		if old >= 0 {
			so, sl := oldKey(old)
			w.bytes(s.data[s.strs+so : s.strs+so+sl])
		} else {
			w.str(b.keys[nw])
		}
	})
	// An old list is copied as it is, so it is checked as the builder
	// writes one: commit numbers of the old snapshot, ascending.
	postsOK := true
	merged(func(old, nw int) {
		for kind := 0; kind < 3; kind++ {
			if old >= 0 {
				start, cnt := oldPosts(old, kind)
				list := s.data[s.posts+4*start : s.posts+4*(start+cnt)]
				postsOK = postsOK && ascendingBelow(list, s.n)
				w.bytes(list)
			}
			if nw >= 0 {
				for _, num := range b.post[nw][kind] {
					w.u32(uint32(num))
				}
			}
		}
	})

	if !postsOK {
		return errNotStreamable
	}

	// mut: the old sorted table and the new entries, merged.
	var prevID, prevNum uint32
	for i, j := 0, 0; i < s.nmut || j < len(muts); {
		if i < s.nmut {
			id, num := s.u32(s.mut+8*i), s.u32(s.mut+8*i+4)
			if j == len(muts) || id < muts[j].id || (id == muts[j].id && num < muts[j].num) {
				if (i > 0 && (id < prevID || (id == prevID && num <= prevNum))) || int(num) >= s.n {
					return errNotStreamable
				}
				prevID, prevNum = id, num
				w.bytes(s.data[s.mut+8*i : s.mut+8*i+8])
				i++
				continue
			}
		}
		w.u32(muts[j].id)
		w.u32(muts[j].num)
		j++
	}

	w.flush()
	if w.err != nil {
		return w.err
	}
	if w.written != int64(size) {
		return fmt.Errorf("a streamed fold wrote %d bytes of a snapshot laid out as %d", w.written, size)
	}
	var sum [4]byte
	le.PutUint32(sum[:], w.crc)
	if _, err := f.WriteAt(sum[:], 8); err != nil {
		return err
	}
	return nil
}

// ascendingBelow reports whether list, little-endian words, holds numbers
// below n in strictly ascending order.
func ascendingBelow(list []byte, n int) bool {
	prev := -1
	for i := 0; i+4 <= len(list); i += 4 {
		v := int(binary.LittleEndian.Uint32(list[i:]))
		if v <= prev || v >= n {
			return false
		}
		prev = v
	}
	return true
}
