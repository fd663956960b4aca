package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"weak"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/sysfile"
)

// commit is one indexed commit as the algorithms see it, numbered in
// topological order (parents before children).
type commit struct {
	hash    plumbing.Hash
	parents []int32 // -1: a parent git does not have (shallow history)
	time    int64
	mutID   string
	files   []string        // files whose blob changed
	blobs   []plumbing.Hash // their new blobs (zero: removed); nil: unknown
	exact   []string        // exact changed keys (see keyOf)
	deep    []string        // those of them that changed keys below them too
	depth   int32           // along first parents; a root is 0
	jump    int32           // a first-parent ancestor for O(log n) level queries
}

func (c *commit) firstParent() int32 {
	if len(c.parents) == 0 {
		return -1
	}
	return c.parents[0]
}

// Snapshot layout, little endian. A fixed header, then sections:
//
//	header   magic[8] crc32(rest)[4] version[4] gen[8] ncommits[4] nkeys[4] nmut[4] nstr[4]
//	         then the byte offsets of: commits hashidx extra fwd dict strs posts mut
//	commits  ncommits x {hash[20] firstParent[4] jump[4] depth[4] extra[4] fwd[4] time[8]}
//	hashidx  ncommits x {hash[20] num[4]}, sorted by hash
//	extra    per merge: count[4] parents[4]... (a commit's extra is 0xffffffff when it has
//	         at most one parent); num -1 is a missing parent
//	fwd      per commit: nfiles[4] nexact[4] ndeep[4] then key ids of the files' roots,
//	         of the exact keys and of the deep ones; when nfiles has its top bit
//	         (hasBlobs) set, the files' new blobs follow, 20 bytes each (version 3)
//	dict     nkeys x {str[4] len[4] sub[4] nsub[4] exact[4] nexact[4] deep[4] ndeep[4]},
//	         sorted by key; sub, exact and deep index posts (in u32 units)
//	strs     key bytes, then mutation ids
//	posts    commit numbers, each list ascending
//	mut      nmut x {id[4] num[4]} sorted: mutation ids of the form mut-xxxxxxxx
const (
	// The first format ("AIWGIX01") had a CRC-32C; such a snapshot reads
	// as corrupt and is replaced (see tryLoad).
	snapMagic      = "AIWGIX02"
	snapVersion    = 3 // 2: no blobs in fwd, still read
	snapHeaderSize = 8 + 4 + 4 + 8 + 4*4 + 8*8
	commitSize     = 48
	hashIdxSize    = 24
	dictSize       = 32
	noExtra        = 0xffffffff
	hasBlobs       = 1 << 31
	rootMark       = -2 // the first parent of a root (-1 is a missing parent)
)

var errCorrupt = errors.New("index snapshot is corrupt")

// snapshot is a snapshot file, mapped read-only. data is unmapped once the
// snapshot is unreachable (see openSnapshot): methods copy what they return
// out of it, and nothing may keep a slice of data beyond the snapshot.
type snapshot struct {
	data                                            []byte
	gen                                             uint64
	version                                         uint32
	mapped                                          bool // data is a mapping of the file, not heap
	n, nkeys, nmut                                  int
	commits, hashidx, extra, fwd, dict, strs, posts int
	mut                                             int
	reads                                           atomic.Uint32 // see touch
}

// snapReleaseEvery is how many reads of a snapshot's tables a process
// makes between releases of the pages they faulted in, once
// ReleaseWhileReading is on.
const snapReleaseEvery = 64

var snapReleaseOn atomic.Bool

// touch counts a read of the snapshot's tables. Each read of a commit
// scattered over the snapshot faults in what the page cache holds around
// it (64 KiB to a whole 2 MiB folio), so in a server a walk over a few
// hundred commits would map most of a large snapshot; every
// snapReleaseEvery reads the process lets go of them (they stay in the
// page cache, and the few pages read again, the top of a binary search,
// fault back in for microseconds).
func (s *snapshot) touch() { s.touchN(1) }

// touchN counts n reads: a binary search of the hash index reads a few
// pages far apart.
func (s *snapshot) touchN(n uint32) {
	if !snapReleaseOn.Load() {
		return
	}
	if r := s.reads.Add(n); r/snapReleaseEvery != (r-n)/snapReleaseEvery {
		_ = syscall.Madvise(s.data, syscall.MADV_DONTNEED)
	}
}

// parseSnapshot checks a whole snapshot in memory against its checksum and
// reads its header.
func parseSnapshot(data []byte) (*snapshot, error) {
	if len(data) < snapHeaderSize || string(data[:8]) != snapMagic {
		return nil, errCorrupt
	}
	if crc32.ChecksumIEEE(data[12:]) != binary.LittleEndian.Uint32(data[8:]) {
		return nil, errCorrupt
	}
	return parseHeader(data)
}

// parseHeader reads the header of a snapshot whose checksum was checked.
func parseHeader(data []byte) (*snapshot, error) {
	s, err := headerOf(data, int64(len(data)))
	if err != nil {
		return nil, err
	}
	s.data = data
	return s, nil
}

// checkHeader checks a snapshot's header (h holds at least its first
// snapHeaderSize bytes) against the file's size.
func checkHeader(h []byte, size int64) error {
	_, err := headerOf(h, size)
	return err
}

// headerOf reads a snapshot's header from h, and checks that its sections
// lie within size bytes.
func headerOf(h []byte, size int64) (*snapshot, error) {
	if len(h) < snapHeaderSize || size < snapHeaderSize || string(h[:8]) != snapMagic {
		return nil, errCorrupt
	}
	v := binary.LittleEndian.Uint32(h[12:])
	if v != snapVersion && v != 2 {
		return nil, errCorrupt
	}
	s := &snapshot{gen: binary.LittleEndian.Uint64(h[16:]), version: v}
	u := func(i int) int64 { return int64(binary.LittleEndian.Uint32(h[24+4*i:])) }
	n, nkeys, nmut := u(0), u(1), u(2)
	var offs [8]int64
	for i := range offs {
		o := binary.LittleEndian.Uint64(h[40+8*i:])
		if o > uint64(size) {
			return nil, errCorrupt
		}
		offs[i] = int64(o)
	}
	if offs[0]+n*commitSize > size || offs[1]+n*hashIdxSize > size ||
		offs[4]+nkeys*dictSize > size || offs[7]+nmut*8 > size {
		return nil, errCorrupt
	}
	s.n, s.nkeys, s.nmut = int(n), int(nkeys), int(nmut)
	s.commits, s.hashidx, s.extra, s.fwd, s.dict, s.strs, s.posts, s.mut =
		int(offs[0]), int(offs[1]), int(offs[2]), int(offs[3]), int(offs[4]), int(offs[5]), int(offs[6]), int(offs[7])
	return s, nil
}

// A process maps the snapshot rather than reading it into its heap: a
// query reads a few pages of it (a binary search in the hash index and the
// dictionary, the postings of one key, the commits it walks), and a
// million commits make a snapshot of about 120 MB, which a server would
// otherwise allocate again for every query. Its checksum is checked once
// per file a process opens (by reading it through a small buffer, so the
// check leaves nothing resident), and queries at once share one mapping.
// Neither the index nor git ever changes a snapshot in place: a fold or a
// reindex writes a new file and renames it over the old, whose mapping
// stays valid, and the old file's space is freed once no view maps it.
var snapFiles struct {
	sync.Mutex
	live     map[string]liveSnap // by path: the mapping of the file there now, while a view holds it
	verified map[snapFileID]bool // files whose checksum this process checked
}

type liveSnap struct {
	id   snapFileID
	snap weak.Pointer[snapshot]
}

// snapFileID tells one file from another: renaming a new snapshot into
// place changes the inode, and no writer of ours rewrites one in place.
type snapFileID struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// openSnapshot maps the snapshot at path: fs.ErrNotExist when there is
// none, errCorrupt when it fails its checksum or its header.
func openSnapshot(path string) (*snapshot, error) {
	fd, st, err := sysfile.OpenStat(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	id := snapFileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	snapFiles.Lock()
	if l, ok := snapFiles.live[path]; ok && l.id == id {
		if s := l.snap.Value(); s != nil {
			snapFiles.Unlock()
			return s, nil
		}
	}
	verified := snapFiles.verified[id]
	snapFiles.Unlock()
	if st.Size < snapHeaderSize || st.Size != int64(int(st.Size)) {
		return nil, errCorrupt
	}
	if !verified {
		if err := checkSnapshotFile(fd, st.Size); err != nil {
			return nil, err
		}
	}
	data, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	s, err := parseHeader(data)
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	s.mapped = true
	runtime.AddCleanup(s, func(data []byte) { syscall.Munmap(data) }, data)
	snapFiles.Lock()
	defer snapFiles.Unlock()
	if snapFiles.verified == nil || len(snapFiles.verified) >= 64 {
		snapFiles.verified = map[snapFileID]bool{}
	}
	snapFiles.verified[id] = true
	if snapFiles.live == nil || len(snapFiles.live) >= 64 {
		// Stores this process no longer reads (tests open hundreds).
		for p, l := range snapFiles.live {
			if l.snap.Value() == nil {
				delete(snapFiles.live, p)
			}
		}
		if snapFiles.live == nil {
			snapFiles.live = map[string]liveSnap{}
		}
	}
	snapFiles.live[path] = liveSnap{id, weak.Make(s)}
	return s, nil
}

// checkSnapshotFile checks a snapshot file against its checksum, reading
// it through a small buffer.
func checkSnapshotFile(fd int, size int64) error {
	buf := make([]byte, 256<<10)
	var want uint32
	sum := uint32(0)
	for off := int64(0); off < size; {
		n, err := syscall.Pread(fd, buf[:min(int64(len(buf)), size-off)], off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("index snapshot: %w", err)
		}
		if n == 0 {
			return errCorrupt // shorter than it was a moment ago
		}
		b := buf[:n]
		if off == 0 {
			if n < 12 || string(b[:8]) != snapMagic {
				return errCorrupt
			}
			want = binary.LittleEndian.Uint32(b[8:])
			b = b[12:]
		}
		sum = crc32.Update(sum, crc32.IEEETable, b)
		off += int64(n)
	}
	if sum != want {
		return errCorrupt
	}
	return nil
}

// releaseMapped drops this process's resident pages of the snapshots it
// maps: they stay in the page cache, and a later query faults back the
// few it reads.
func releaseMapped() {
	snapFiles.Lock()
	defer snapFiles.Unlock()
	for _, l := range snapFiles.live {
		if s := l.snap.Value(); s != nil {
			_ = syscall.Madvise(s.data, syscall.MADV_DONTNEED)
			runtime.KeepAlive(s)
		}
	}
}

func (s *snapshot) u32(off int) uint32 { return binary.LittleEndian.Uint32(s.data[off:]) }

func (s *snapshot) commitAt(num int32) []byte {
	s.touch()
	o := s.commits + int(num)*commitSize
	return s.data[o : o+commitSize]
}

func (s *snapshot) hash(num int32) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], s.commitAt(num))
	return h
}

// firstParent is -1 for a root or a parent git does not have.
func (s *snapshot) firstParent(num int32) int32 {
	return max(int32(binary.LittleEndian.Uint32(s.commitAt(num)[20:])), -1)
}
func (s *snapshot) jump(num int32) int32 {
	return int32(binary.LittleEndian.Uint32(s.commitAt(num)[24:]))
}
func (s *snapshot) depth(num int32) int32 {
	return int32(binary.LittleEndian.Uint32(s.commitAt(num)[28:]))
}
func (s *snapshot) time(num int32) int64 {
	return int64(binary.LittleEndian.Uint64(s.commitAt(num)[40:]))
}

func (s *snapshot) parents(num int32) []int32 {
	c := s.commitAt(num)
	fp := int32(binary.LittleEndian.Uint32(c[20:]))
	ex := binary.LittleEndian.Uint32(c[32:])
	if ex == noExtra {
		if fp == rootMark {
			return nil
		}
		return []int32{fp}
	}
	o := s.extra + int(ex)
	n := int(s.u32(o))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(s.u32(o + 4 + 4*i))
	}
	return out
}

// find returns the number of a commit.
func (s *snapshot) find(h plumbing.Hash) (int32, bool) {
	s.touchN(8)
	i := sort.Search(s.n, func(i int) bool {
		o := s.hashidx + i*hashIdxSize
		return bytes.Compare(s.data[o:o+20], h[:]) >= 0
	})
	if i == s.n {
		return 0, false
	}
	o := s.hashidx + i*hashIdxSize
	if !bytes.Equal(s.data[o:o+20], h[:]) {
		return 0, false
	}
	return int32(s.u32(o + 20)), true
}

func (s *snapshot) keyString(id int) string {
	o := s.dict + id*dictSize
	so, sl := int(s.u32(o)), int(s.u32(o+4))
	return string(s.data[s.strs+so : s.strs+so+sl])
}

func (s *snapshot) keyBytes(id int) []byte {
	o := s.dict + id*dictSize
	so, sl := int(s.u32(o)), int(s.u32(o+4))
	return s.data[s.strs+so : s.strs+so+sl]
}

// findKey returns the dictionary id of a key.
func (s *snapshot) findKey(k string) (int, bool) {
	s.touch()
	i := sort.Search(s.nkeys, func(i int) bool { return string(s.keyBytes(i)) >= k })
	if i < s.nkeys && string(s.keyBytes(i)) == k {
		return i, true
	}
	return 0, false
}

func (s *snapshot) postings(id int, kind int) []int32 {
	s.touch()
	o := s.dict + id*dictSize + 8 + 8*kind
	start, n := int(s.u32(o)), int(s.u32(o+4))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(s.u32(s.posts + 4*(start+i)))
	}
	return out
}

// forward returns the files, the exact keys and the deep keys of a commit.
func (s *snapshot) forward(num int32) (files, exact, deep []string) {
	o := s.fwd + int(binary.LittleEndian.Uint32(s.commitAt(num)[36:]))
	nf, ne, nd := int(s.u32(o)&^hasBlobs), int(s.u32(o+4)), int(s.u32(o+8))
	for i := 0; i < nf+ne+nd; i++ {
		k := s.keyString(int(s.u32(o + 12 + 4*i)))
		switch {
		case i < nf:
			files = append(files, k[:len(k)-1])
		case i < nf+ne:
			exact = append(exact, k)
		default:
			deep = append(deep, k)
		}
	}
	return files, exact, deep
}

// blobs returns the new blobs of the files forward lists, in its order;
// nil when the snapshot does not know them (written before they were
// kept).
func (s *snapshot) blobs(num int32) []plumbing.Hash {
	s.touch()
	o := s.fwd + int(binary.LittleEndian.Uint32(s.commitAt(num)[36:]))
	nf := s.u32(o)
	if nf&hasBlobs == 0 {
		return nil
	}
	nf &^= hasBlobs
	o += 4 * (3 + int(nf) + int(s.u32(o+4)) + int(s.u32(o+8)))
	if o < 0 || o+20*int(nf) > len(s.data) {
		return nil // not what a builder writes: the trees answer
	}
	out := make([]plumbing.Hash, nf)
	for i := range out {
		copy(out[i][:], s.data[o+20*i:])
	}
	return out
}

func mutNumber(id string) (uint32, bool) {
	if len(id) != 12 || id[:4] != "mut-" {
		return 0, false
	}
	v, err := strconv.ParseUint(id[4:], 16, 32)
	return uint32(v), err == nil
}

// findMutation returns the commits carrying a mutation id.
func (s *snapshot) findMutation(id string) []int32 {
	s.touch()
	v, ok := mutNumber(id)
	if !ok {
		return nil
	}
	i := sort.Search(s.nmut, func(i int) bool { return s.u32(s.mut+8*i) >= v })
	var out []int32
	for ; i < s.nmut && s.u32(s.mut+8*i) == v; i++ {
		out = append(out, int32(s.u32(s.mut+8*i+4)))
	}
	return out
}

// each hands every commit of the snapshot to fn in order, decoded into
// one reused value (fn must not keep it), so a fold that rebuilds the
// snapshot (see foldParts) never decodes it whole.
func (s *snapshot) each(fn func(*commit)) {
	type mut struct{ num, id uint32 }
	muts := make([]mut, s.nmut)
	for i := range muts {
		muts[i] = mut{s.u32(s.mut + 8*i + 4), s.u32(s.mut + 8*i)}
	}
	sort.Slice(muts, func(a, b int) bool { return muts[a].num < muts[b].num })
	c := &commit{}
	for i := 0; i < s.n; i++ {
		n := int32(i)
		*c = commit{hash: s.hash(n), parents: s.parents(n), time: s.time(n), depth: s.depth(n), jump: s.jump(n)}
		c.files, c.exact, c.deep = s.forward(n)
		c.blobs = s.blobs(n)
		for len(muts) > 0 && muts[0].num < uint32(i) {
			muts = muts[1:]
		}
		if len(muts) > 0 && muts[0].num == uint32(i) {
			c.mutID = "mut-" + leftPad(strconv.FormatUint(uint64(muts[0].id), 16))
		}
		fn(c)
	}
}

func leftPad(h string) string {
	for len(h) < 8 {
		h = "0" + h
	}
	return h
}

// snapBuilder builds a snapshot one commit at a time, so that a full
// rebuild streams: what it keeps per commit is the snapshot's own compact
// form (48 bytes of commit table and the forward key ids), never the
// commit's strings. Keys are interned as they come, with provisional ids
// in order of first sight, and renumbered in sorted order by finish.
type snapBuilder struct {
	keyID            map[string]uint32
	keys             []string
	post             [][3][]int32 // by provisional id: sub, exact, deep
	commitsB, extraB []byte
	fwdB             []uint32 // provisional key ids
	muts             []mutEntry
	n                int32
	// A builder of the commits after a snapshot's (see newTailBuilder):
	// where its extra and fwd sections will start in the new snapshot.
	extraBase, fwdBase uint32
}

type mutEntry struct{ id, num uint32 }

// newSnapBuilder sizes the commit table for n commits up front: growing
// it by doubling would hold two copies at once.
func newSnapBuilder(n int) *snapBuilder {
	return &snapBuilder{keyID: map[string]uint32{}, commitsB: make([]byte, 0, n*commitSize)}
}

func (b *snapBuilder) id(k string) uint32 {
	if id, ok := b.keyID[k]; ok {
		return id
	}
	id := uint32(len(b.keys))
	k = strings.Clone(k) // the caller's string may pin a whole record
	b.keyID[k] = id
	b.keys = append(b.keys, k)
	b.post = append(b.post, [3][]int32{})
	return id
}

func (b *snapBuilder) post1(id uint32, kind int, n int32) {
	l := b.post[id][kind]
	if len(l) == 0 || l[len(l)-1] != n {
		b.post[id][kind] = append(l, n)
	}
}

// add appends the next commit; its parents, depth and jump are numbers of
// commits added before it.
func (b *snapBuilder) add(c *commit) {
	n := b.n
	b.n++
	le := binary.LittleEndian
	b.commitsB = append(b.commitsB, c.hash[:]...)
	fp := c.firstParent()
	if len(c.parents) == 0 {
		fp = rootMark
	}
	b.commitsB = le.AppendUint32(b.commitsB, uint32(fp))
	b.commitsB = le.AppendUint32(b.commitsB, uint32(c.jump))
	b.commitsB = le.AppendUint32(b.commitsB, uint32(c.depth))
	if len(c.parents) > 1 {
		b.commitsB = le.AppendUint32(b.commitsB, b.extraBase+uint32(len(b.extraB)))
		b.extraB = le.AppendUint32(b.extraB, uint32(len(c.parents)))
		for _, p := range c.parents {
			b.extraB = le.AppendUint32(b.extraB, uint32(p))
		}
	} else {
		b.commitsB = le.AppendUint32(b.commitsB, noExtra)
	}
	b.commitsB = le.AppendUint32(b.commitsB, b.fwdBase+uint32(4*len(b.fwdB)))
	b.commitsB = le.AppendUint64(b.commitsB, uint64(c.time))
	nf := uint32(len(c.files))
	withBlobs := len(c.blobs) == len(c.files) && c.blobs != nil
	if withBlobs {
		nf |= hasBlobs
	}
	b.fwdB = append(b.fwdB, nf, uint32(len(c.exact)), uint32(len(c.deep)))
	for _, f := range c.files {
		id := b.id(fileKey(f))
		b.post1(id, 0, n)
		b.fwdB = append(b.fwdB, id)
	}
	for _, k := range c.exact {
		id := b.id(k)
		b.post1(id, 1, n)
		b.fwdB = append(b.fwdB, id)
		for _, p := range keyPrefixBytes(k) {
			b.post1(b.id(k[:p]), 0, n)
		}
	}
	for _, k := range c.deep {
		id := b.id(k)
		b.post1(id, 2, n)
		b.fwdB = append(b.fwdB, id)
	}
	if withBlobs {
		// As five words each, copied through finish's renumbering as
		// they are.
		for _, h := range c.blobs {
			for w := 0; w < 20; w += 4 {
				b.fwdB = append(b.fwdB, binary.LittleEndian.Uint32(h[w:]))
			}
		}
	}
	if v, ok := mutNumber(c.mutID); ok {
		b.muts = append(b.muts, mutEntry{v, uint32(n)})
	}
}

// finishParts renumbers the keys in sorted order and lays the sections
// out: the snapshot is the header and the sections in turn, written one
// after the other rather than copied into one buffer (at a million commits
// that copy would be 120 MB more at once). The builder is spent.
func (b *snapBuilder) finishParts(gen uint64) [][]byte {
	le := binary.LittleEndian
	order := make([]uint32, len(b.keys)) // sorted position -> provisional id
	for i := range order {
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return b.keys[order[i]] < b.keys[order[j]] })
	remap := make([]uint32, len(b.keys)) // provisional id -> sorted position
	for i, id := range order {
		remap[id] = uint32(i)
	}
	fwdB := make([]byte, 0, 4*len(b.fwdB))
	for i := 0; i < len(b.fwdB); {
		withBlobs := b.fwdB[i]&hasBlobs != 0
		nf := b.fwdB[i] &^ hasBlobs
		cnt := int(nf + b.fwdB[i+1] + b.fwdB[i+2])
		fwdB = le.AppendUint32(fwdB, b.fwdB[i])
		fwdB = le.AppendUint32(fwdB, b.fwdB[i+1])
		fwdB = le.AppendUint32(fwdB, b.fwdB[i+2])
		for _, id := range b.fwdB[i+3 : i+3+cnt] {
			fwdB = le.AppendUint32(fwdB, remap[id])
		}
		i += 3 + cnt
		if withBlobs {
			for _, w := range b.fwdB[i : i+5*int(nf)] {
				fwdB = le.AppendUint32(fwdB, w)
			}
			i += 5 * int(nf)
		}
	}
	b.fwdB = nil

	n := int(b.n)
	hashes := make([]int32, n)
	for i := range hashes {
		hashes[i] = int32(i)
	}
	hashAt := func(i int32) []byte { return b.commitsB[int(i)*commitSize : int(i)*commitSize+20] }
	sort.Slice(hashes, func(x, y int) bool { return bytes.Compare(hashAt(hashes[x]), hashAt(hashes[y])) < 0 })
	hashB := make([]byte, 0, n*hashIdxSize)
	for _, i := range hashes {
		hashB = append(hashB, hashAt(i)...)
		hashB = le.AppendUint32(hashB, uint32(i))
	}
	hashes = nil

	var dictB, strsB, postsB, mutB []byte
	for _, id := range order {
		k := b.keys[id]
		dictB = le.AppendUint32(dictB, uint32(len(strsB)))
		dictB = le.AppendUint32(dictB, uint32(len(k)))
		strsB = append(strsB, k...)
		for _, list := range b.post[id] {
			dictB = le.AppendUint32(dictB, uint32(len(postsB)/4))
			dictB = le.AppendUint32(dictB, uint32(len(list)))
			for _, n := range list {
				postsB = le.AppendUint32(postsB, uint32(n))
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
	for _, m := range muts {
		mutB = le.AppendUint32(mutB, m.id)
		mutB = le.AppendUint32(mutB, m.num)
	}

	nkeys := len(b.keys)
	b.keyID, b.keys, b.post = nil, nil, nil // garbage before the sections are written
	secs := [][]byte{b.commitsB, hashB, b.extraB, fwdB, dictB, strsB, postsB, mutB}
	head := make([]byte, snapHeaderSize)
	copy(head, snapMagic)
	le.PutUint32(head[12:], snapVersion)
	le.PutUint64(head[16:], gen)
	le.PutUint32(head[24:], uint32(n))
	le.PutUint32(head[28:], uint32(nkeys))
	le.PutUint32(head[32:], uint32(len(muts)))
	off := snapHeaderSize
	for i, sec := range secs {
		le.PutUint64(head[40+8*i:], uint64(off))
		off += len(sec)
	}
	sum := crc32.ChecksumIEEE(head[12:])
	for _, sec := range secs {
		sum = crc32.Update(sum, crc32.IEEETable, sec)
	}
	le.PutUint32(head[8:], sum)
	return append([][]byte{head}, secs...)
}

// finish is finishParts in one piece.
func (b *snapBuilder) finish(gen uint64) []byte {
	return bytes.Join(b.finishParts(gen), nil)
}

// keyPrefixBytes returns the lengths of the keys of every prefix of k's
// path, the file's root first and k itself last.
func keyPrefixBytes(k string) []int {
	i := 0
	for i < len(k) && k[i] != 0 {
		i++
	}
	if i == len(k) {
		return nil
	}
	i++
	out := []int{i}
	for i < len(k) {
		n, w := binary.Uvarint([]byte(k[i:min(len(k), i+binary.MaxVarintLen64)]))
		if w <= 0 || uint64(len(k)-i-w) < n {
			return out
		}
		i += w + int(n)
		out = append(out, i)
	}
	return out
}
