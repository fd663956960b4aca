package repo

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/sysfile"
)

// The object reader. go-git's storage decodes every pack index of the store
// into memory on the first read of a process: at ~50,000 objects that is
// most of a CLI command's time, paid again by every process. This reader
// does what git does instead: it maps an index into memory (so a process
// touches only the pages its lookups need, not the whole file: 1.6 MB at
// 10,000 commits) and binary-searches it for the one object asked, reads that entry from the pack, and
// resolves deltas; loose objects are read directly. Anything it does not
// find at first (a pack being replaced under it) is retried by the caller
// after a rescan.

// packIndex is one pack: its index and, once needed, its pack file, both
// mapped read-only. Neither file is ever changed in place (git and we write
// new ones and rename them), and a mapping outlives the file's removal.
// Mapping the pack rather than reading it makes an entry one slice, not two
// reads: a fresh process resolving a tree's delta chain (up to 20 deep)
// otherwise spent a pair of system calls per link.
type packIndex struct {
	name   string // pack-<hash>, without extension
	idx    []byte // nil until the first lookup in this pack
	n      int
	broken bool // the index is unreadable or truncated: skipped
	// damage says why an index that is there was skipped (bad header,
	// truncated): a miss then reads as corruption, not as absence.
	damage string
	// verified: the index's checksums were checked (see damaged).
	verified bool
	pack     []byte
	// heapIdx: idx is the index this process wrote, kept in memory, not
	// a mapping (see objReader.wrote).
	heapIdx bool
}

func (p *packIndex) close() {
	if p.pack != nil {
		syscall.Munmap(p.pack)
	}
	if p.idx != nil && !p.heapIdx {
		syscall.Munmap(p.idx)
	}
}

// load maps the index. A store between roll-ups has dozens of packs and a
// command usually finds all it reads in the newest few, so indexes are
// mapped when a lookup reaches them, not when the directory is listed.
func (p *packIndex) load(dir string) bool {
	if p.idx != nil || p.broken {
		return !p.broken
	}
	p.broken = true
	data, err := mapFile(filepath.Join(dir, "pack", p.name+".idx"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.damage = err.Error()
		}
		return false
	}
	if len(data) >= 4 && !bytes.Equal(data[:4], []byte{0xff, 't', 'O', 'c'}) {
		// A version 1 index (`pack.indexVersion=1`): read whole and
		// rendered in memory as version 2, which the lookups read.
		idx, err := v1AsV2(data)
		syscall.Munmap(data)
		if err != nil {
			p.damage = err.Error()
			return false
		}
		p.idx, p.n, p.broken, p.heapIdx, p.verified = idx, int(binary.BigEndian.Uint32(idx[8+255*4:])), false, true, true
		return true
	}
	if len(data) < 8+1024+40 || !bytes.Equal(data[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		syscall.Munmap(data)
		p.damage = "not a pack index of version 1 or 2"
		return false
	}
	count := int(binary.BigEndian.Uint32(data[8+255*4:]))
	if count < 0 || len(data) < 8+1024+28*count+40 {
		syscall.Munmap(data)
		p.damage = "truncated"
		return false // skipped, as git skips a bad index
	}
	p.idx, p.n, p.broken = data, count, false
	return true
}

// v1AsV2 checks a version 1 index against its checksum and renders it
// as version 2 (without CRCs: only lookups read it). A store of one is
// rare (git writes version 2 unless told), so it pays this per process
// rather than every lookup a second layout.
func v1AsV2(data []byte) ([]byte, error) {
	if err := checkIdxSum(data); err != nil {
		return nil, err
	}
	objs, _, err := parseIdx(data)
	if err != nil {
		return nil, err
	}
	var pack plumbing.Hash
	copy(pack[:], data[len(data)-40:])
	return encodeIdx(objs, pack), nil
}

// mapFile maps a whole file read-only. It uses the system calls directly:
// an os.File would set and reset non-blocking mode and try the poller
// (seven more calls per file), and a command may map dozens of indexes.
func mapFile(path string) ([]byte, error) {
	fd, st, err := sysfile.OpenStat(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if st.Size <= 0 || st.Size != int64(int(st.Size)) {
		return nil, fmt.Errorf("%s: cannot map %d bytes", path, st.Size)
	}
	data, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return data, nil
}

// objReader finds and reads objects; it is used under Repo.mu.
type objReader struct {
	dir    string // objects/
	packs  []*packIndex
	loaded bool
	listed int  // packs the directory held when last read
	bases  *lru // recently inflated delta bases, by pack offset
	zr     io.ReadCloser
	delta  []byte // scratch for a delta's instructions
	// retired are packs a rescan dropped in the middle of a read: an
	// outer frame resolving a delta chain may still hold one, so they
	// are unmapped when the read returns.
	retired []*packIndex
	// alts read the object directories objects/info/alternates names
	// (a clone made with --shared or --reference borrows objects so);
	// nil until the first miss here. nesting is how deep in such a
	// chain this reader is: git follows five levels.
	alts    []*objReader
	altsSet bool
	nesting int
	// sharedSeen: the packs other Repos of the process shared up to
	// this number are listed here (see catchUp).
	sharedSeen int64
	// scans counts the listings of the pack directory (for tests).
	scans int
	// touched estimates the bytes of mapped pages reads faulted in since
	// the last release (see touch).
	touched int64
}

func newObjReader(gitDir string) *objReader {
	return newObjDirReader(filepath.Join(gitDir, "objects"), 0)
}

func newObjDirReader(objectsDir string, nesting int) *objReader {
	return &objReader{dir: objectsDir, bases: newLRU(256, 32<<20), nesting: nesting}
}

func (o *objReader) close() {
	for _, p := range o.packs {
		p.close()
	}
	o.releaseRetired()
	o.packs, o.loaded = nil, false
	for _, a := range o.alts {
		a.close()
	}
	o.alts, o.altsSet = nil, false
}

func (o *objReader) releaseRetired() {
	for _, p := range o.retired {
		p.close()
	}
	o.retired = nil
	for _, a := range o.alts {
		a.releaseRetired()
	}
}

// scan (re)lists the packs, newest first as git orders them (recent
// objects are the ones read most), keeping the ones already open.
func (o *objReader) scan() {
	old := map[string]*packIndex{}
	for _, p := range o.packs {
		old[p.name] = p
	}
	o.scans++
	seen := sharedSeq() // before the listing: what it may miss comes after
	es, _ := os.ReadDir(filepath.Join(o.dir, "pack"))
	var packs []*packIndex
	mtime := map[*packIndex]int64{}
	for _, e := range es {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
			continue
		}
		name := strings.TrimSuffix(n, ".idx")
		p, ok := old[name]
		if ok && !p.broken {
			delete(old, name)
		} else {
			p = &packIndex{name: name} // a broken index gets another try
		}
		if fi, err := e.Info(); err == nil {
			mtime[p] = fi.ModTime().UnixNano()
			if marked, _ := isSuperseded(fi); marked {
				mtime[p] = -1 // a copy of what a newer pack holds: tried last
			}
		}
		packs = append(packs, p)
	}
	sort.SliceStable(packs, func(i, j int) bool { return mtime[packs[i]] > mtime[packs[j]] })
	for _, p := range old {
		o.retired = append(o.retired, p)
	}
	o.packs, o.loaded, o.listed, o.sharedSeen = packs, true, len(packs), seen
}

// wrote records a pack this process just put in place, the newest, with
// the index it wrote (idx, which no one changes afterwards), and the tail
// pack it replaces (empty if none). A writer's own objects come from its
// cache until the cache lets them go; then a read would miss in the packs
// of the last listing and list the pack directory again, which after
// thousands of commits costs up to a millisecond. With the index in hand,
// a lookup that misses in the new tail (most do: a writer's recent objects
// are cached) maps nothing: mapping and unmapping a tail's index on every
// commit cost more than the rest of a read.
func (o *objReader) wrote(name string, idx []byte, replaced string) {
	if !o.loaded {
		return // the first read lists the directory anyway
	}
	packs := make([]*packIndex, 0, len(o.packs)+1)
	packs = append(packs, &packIndex{name: name, idx: idx, n: int(binary.BigEndian.Uint32(idx[8+255*4:])), heapIdx: true})
	for _, p := range o.packs {
		switch p.name {
		case name:
		case replaced:
			// No read is under way (the object database is read under
			// the lock a commit holds), so nothing holds the replaced
			// tail: it goes now. Left for the next read to release, a
			// writer whose reads all come from its cache kept every
			// tail it replaced, one index a commit.
			p.close()
		default:
			packs = append(packs, p)
		}
	}
	o.packs = packs
	// Packs a roll-up removed stay listed until a lookup misses, which a
	// writer served by its cache may never do: once the list has doubled
	// since the directory was last read, read it again.
	if len(o.packs) > max(2*o.listed, 64) {
		o.scan()
		o.releaseRetired()
	}
}

// packNames identifies the pack set of the last scan.
func (o *objReader) packNames() string {
	var b strings.Builder
	for _, p := range o.packs {
		b.WriteString(p.name)
	}
	return b.String()
}

// find returns the offset of h in the pack.
func (p *packIndex) find(h plumbing.Hash) (int64, bool) {
	fan := 8
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(p.idx[fan+4*(int(h[0])-1):]))
	}
	hi := int(binary.BigEndian.Uint32(p.idx[fan+4*int(h[0]):]))
	names := 8 + 1024
	for lo < hi {
		mid := (lo + hi) / 2
		c := bytes.Compare(p.idx[names+20*mid:names+20*mid+20], h[:])
		switch {
		case c == 0:
			offs := names + 24*p.n
			off := binary.BigEndian.Uint32(p.idx[offs+4*mid:])
			if off&0x80000000 == 0 {
				return int64(off), true
			}
			big := offs + 4*p.n + 8*int(off&0x7fffffff)
			if big+8 > len(p.idx)-40 {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(p.idx[big:])), true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

var errNotHere = errors.New("not found by the object reader")

const (
	// maxChain bounds delta chains: git's packs go to 50 deep by
	// default, and pack.depth to 4095.
	maxChain = 4095
	// maxObjectSize bounds what one entry header may ask to allocate;
	// larger ones are reported as such. (A document is far smaller: the
	// store refuses oversize values.)
	maxObjectSize = 1 << 30
)

// read returns an object's type and body, or errNotHere.
func (o *objReader) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	defer o.releaseRetired()
	return o.readDepth(h, 0)
}

func (o *objReader) readDepth(h plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxChain {
		return 0, nil, errors.New("delta chain too long")
	}
	// broken is why an object that is here could not be read: reported
	// if no other copy reads, so a corrupt pack is an error, not a miss.
	var broken error
	var t plumbing.ObjectType
	var body []byte
	found := o.lookup(h, func(p *packIndex, off int64) bool {
		var err error
		if t, body, err = o.readAt(p, off, depth); err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrCorrupt) || errors.Is(err, errNotHere) {
				broken = fmt.Errorf("%s: %w", p.name, err) // removed meanwhile, or a base's damage
			} else {
				broken = &CorruptError{File: "objects/pack/" + p.name + ".pack", Reason: fmt.Sprintf("object %s: %v", h, err)}
			}
			return false
		}
		return true
	}, func() bool {
		var err error
		if t, body, err = o.readLoose(h); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s := h.String()
			broken = &CorruptError{File: "objects/" + s[:2] + "/" + s[2:], Reason: err.Error()}
		}
		return err == nil
	})
	if found {
		return t, body, nil
	}
	for _, a := range o.alternates() {
		t, body, err := a.readDepth(h, depth)
		if err == nil {
			return t, body, nil
		}
		if !errors.Is(err, errNotHere) {
			broken = err
		}
	}
	if broken != nil {
		return 0, nil, broken
	}
	return 0, nil, errNotHere
}

// lookup offers each pack listing h (newest first) to inPack, then the
// loose object to loose, listing the pack directory again once if none
// took it: a pack may have been replaced since the last listing. It
// reports whether one did.
func (o *objReader) lookup(h plumbing.Hash, inPack func(p *packIndex, off int64) bool, loose func() bool) bool {
	for attempt := 0; attempt < 2; attempt++ {
		if !o.loaded || attempt == 1 {
			o.scan()
		}
		for _, p := range o.packs {
			if !p.load(o.dir) {
				continue
			}
			o.touch(0)
			if off, ok := p.find(h); ok && inPack(p, off) {
				return true
			}
		}
		if loose() {
			return true
		}
		if attempt == 0 && o.catchUp() {
			// Packs the process's other Repos wrote since the listing:
			// most misses are there, and listing the directory again
			// is the costlier way to find them.
			for _, p := range o.packs {
				if !p.heapIdx || !p.load(o.dir) {
					continue
				}
				if off, ok := p.find(h); ok && inPack(p, off) {
					return true
				}
			}
		}
	}
	return false
}

func (o *objReader) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	s := h.String()
	f, err := os.Open(filepath.Join(o.dir, s[:2], s[2:]))
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return 0, nil, err
	}
	defer zr.Close()
	data, err := io.ReadAll(zr)
	if err != nil {
		return 0, nil, err
	}
	nul := bytes.IndexByte(data, 0)
	sp := bytes.IndexByte(data, ' ')
	if nul < 0 || sp < 0 || sp > nul {
		return 0, nil, fmt.Errorf("loose object %s: bad header", s)
	}
	t, err := plumbing.ParseObjectType(string(data[:sp]))
	if err != nil {
		return 0, nil, err
	}
	if n, err := strconv.Atoi(string(data[sp+1 : nul])); err != nil || n != len(data)-nul-1 {
		return 0, nil, fmt.Errorf("loose object %s: bad size", s)
	}
	return t, data[nul+1:], nil
}

// readAt reads the pack entry at off, resolving deltas. A chain of offset
// deltas is walked down to its whole base (or a result cached earlier) and
// applied upwards between two buffers, and only the base and the result
// are cached. Caching every link made a cold process (every CLI command)
// allocate and fault in a fresh buffer per link: for a 1,000-entry
// directory, a 40 KB tree per link of a chain up to 20 deep, the largest
// part of a CLI write's reads. A later read of a nearby version of the
// tree applies its deltas again instead, a few microseconds each.
func (o *objReader) readAt(p *packIndex, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxChain {
		return 0, nil, errors.New("delta chain too long")
	}
	if v, ok := o.bases.get(hashOfBase(p.name, off)); ok {
		raw := v.(rawObject)
		return raw.typ, raw.body, nil
	}
	if err := p.mapPack(o.dir); err != nil {
		return 0, nil, err
	}
	var chain []packHeader // the offset deltas above the base, top first
	var t plumbing.ObjectType
	var base []byte
	for cur := off; ; {
		if len(chain) > 0 {
			if v, ok := o.bases.get(hashOfBase(p.name, cur)); ok {
				raw := v.(rawObject)
				t, base = raw.typ, raw.body
				break
			}
		}
		e, err := p.entry(cur)
		if err != nil {
			return 0, nil, err
		}
		o.touch(e.size)
		if e.size > maxObjectSize {
			return 0, nil, fmt.Errorf("object of %d bytes: larger than the reader takes", e.size)
		}
		if e.typ == plumbing.OFSDeltaObject {
			if depth+len(chain) >= maxChain {
				return 0, nil, errors.New("delta chain too long")
			}
			chain = append(chain, e)
			cur = e.baseOff
			continue
		}
		body := make([]byte, e.size)
		if err := o.inflate(bytes.NewReader(p.pack[e.data:]), body); err != nil {
			return 0, nil, err
		}
		t, base = e.typ, body
		if e.typ == plumbing.REFDeltaObject {
			// The base is named, perhaps in another pack.
			bt, b, err := o.readDepth(e.baseHash, depth+len(chain)+1)
			if err != nil {
				return 0, nil, err
			}
			if base, err = applyDelta(nil, b, body); err != nil {
				return 0, nil, err
			}
			t = bt
		}
		if len(chain) > 0 && len(base) <= maxCachedBlob*4 {
			o.bases.put(hashOfBase(p.name, cur), rawObject{typ: t, body: base})
		}
		break
	}
	var spare []byte // the link before last, free to reuse
	for i := len(chain) - 1; i >= 0; i-- {
		e := chain[i]
		if cap(o.delta) < int(e.size) {
			o.delta = make([]byte, e.size)
		}
		d := o.delta[:e.size]
		if err := o.inflate(bytes.NewReader(p.pack[e.data:]), d); err != nil {
			return 0, nil, err
		}
		out, err := applyDelta(spare[:0], base, d)
		if err != nil {
			return 0, nil, err
		}
		if i < len(chain)-1 {
			spare = base // an intermediate link: no one else holds it
		}
		base = out
	}
	if len(base) <= maxCachedBlob*4 {
		o.bases.put(hashOfBase(p.name, off), rawObject{typ: t, body: base})
	}
	return t, base, nil
}

// mapPack maps the pack file on its first use.
func (p *packIndex) mapPack(dir string) error {
	if p.pack != nil {
		return nil
	}
	data, err := mapFile(filepath.Join(dir, "pack", p.name+".pack"))
	if err != nil {
		return err
	}
	p.pack = data
	return nil
}

// packHeader is the header of an entry in a pack being read.
type packHeader struct {
	typ      plumbing.ObjectType
	size     int64 // of the inflated data: for a delta, the delta's size
	data     int64 // offset of the zlib stream
	baseOff  int64 // an offset delta's base
	baseHash plumbing.Hash
}

// entry parses the header of the entry at off; the pack must be mapped.
func (p *packIndex) entry(off int64) (packHeader, error) {
	// 12 bytes of pack header before the first entry, 20 of checksum after
	// the last.
	if off < 12 || off >= int64(len(p.pack))-20 {
		return packHeader{}, fmt.Errorf("entry offset %d outside pack %s", off, p.name)
	}
	return decodeEntryHeader(p.pack[:len(p.pack)-20], off)
}

// decodeEntryHeader parses the header of the pack entry at off in data.
func decodeEntryHeader(data []byte, off int64) (packHeader, error) {
	var e packHeader
	if off < 0 || off >= int64(len(data)) {
		return e, fmt.Errorf("entry offset %d outside the pack", off)
	}
	hdr := data[off:min(off+32, int64(len(data)))]
	n := len(hdr)
	i := 0
	c := hdr[i]
	e.typ = plumbing.ObjectType((c >> 4) & 7)
	e.size = int64(c & 0x0f)
	shift := 4
	for c&0x80 != 0 {
		i++
		if i >= n || shift > 56 {
			return e, errors.New("corrupt entry header")
		}
		c = hdr[i]
		e.size |= int64(c&0x7f) << shift
		shift += 7
	}
	i++
	switch e.typ {
	case plumbing.OFSDeltaObject:
		if i >= n {
			return e, errors.New("corrupt delta header")
		}
		c = hdr[i]
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			i++
			if i >= n {
				return e, errors.New("corrupt delta offset")
			}
			c = hdr[i]
			rel = ((rel + 1) << 7) | int64(c&0x7f)
		}
		i++
		if rel <= 0 || rel > off {
			return e, errors.New("corrupt delta offset")
		}
		e.baseOff = off - rel
	case plumbing.REFDeltaObject:
		if n < i+20 {
			return e, errors.New("corrupt ref delta")
		}
		copy(e.baseHash[:], hdr[i:i+20])
		i += 20
	}
	e.data = off + int64(i)
	return e, nil
}

// inflate fills body from the zlib stream at r, reusing one decompressor:
// a new one allocates tens of kilobytes, more than most objects it reads.
// r is read byte by byte as flate needs (a bytes.Reader over the mapped
// pack), so the stream's end is found without reading past it.
func (o *objReader) inflate(r *bytes.Reader, body []byte) error {
	if o.zr == nil {
		zr, err := zlib.NewReader(r)
		if err != nil {
			return err
		}
		o.zr = zr
	} else if err := o.zr.(zlib.Resetter).Reset(r, nil); err != nil {
		return err
	}
	if _, err := io.ReadFull(o.zr, body); err != nil {
		return err
	}
	// One more read reaches the stream's end, where zlib checks its
	// Adler-32: without it a flipped byte in a stored (uncompressed)
	// block, the level the store writes, would read as the object.
	var one [1]byte
	switch n, err := o.zr.Read(one[:]); {
	case n > 0:
		return errors.New("object longer than its header says")
	case err != io.EOF:
		if err == nil {
			err = errors.New("stream does not end")
		}
		return err
	}
	return nil
}

// damaged returns the first damage found in the listed packs' indexes
// (one that could not be loaded, or whose checksums fail), or nil. It is
// asked when an object was found nowhere: a flipped bit in an object name
// of an index hides that object, and the miss must then read as the
// damage it is, not as absence. Each index is checked once per process.
func (o *objReader) damaged() error {
	for _, p := range o.packs {
		if !p.load(o.dir) {
			if p.damage != "" {
				return &CorruptError{File: "objects/pack/" + p.name + ".idx", Reason: p.damage}
			}
			continue
		}
		if p.verified || p.heapIdx {
			continue
		}
		if err := checkIdxSum(p.idx); err != nil {
			return &CorruptError{File: "objects/pack/" + p.name + ".idx", Reason: err.Error()}
		}
		if err := checkPackTrailer(filepath.Join(o.dir, "pack", p.name+".pack"), p.idx[len(p.idx)-40:len(p.idx)-20]); err != nil {
			return err
		}
		p.verified = true
	}
	return nil
}

// checkPackTrailer compares a pack's trailing checksum with its index's
// copy of it (want), reading only the pack's last 20 bytes.
func checkPackTrailer(path string, want []byte) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile: not damage
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	rel := "objects/pack/" + filepath.Base(path)
	if fi.Size() < 32 {
		return &CorruptError{File: rel, Reason: "truncated"}
	}
	var got [20]byte
	if _, err := f.ReadAt(got[:], fi.Size()-20); err != nil {
		return err
	}
	if !bytes.Equal(got[:], want) {
		return &CorruptError{File: rel, Reason: "truncated or rewritten: its checksum is not the one its index names"}
	}
	return nil
}

// hashOfBase makes a cache key for a pack offset.
func hashOfBase(pack string, off int64) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], pack[5:])
	binary.BigEndian.PutUint64(h[12:], uint64(off))
	return h
}

// applyDelta is git's patch-delta. It appends the result to dst, which
// must not share memory with src.
func applyDelta(dst, src, d []byte) ([]byte, error) {
	bad := errors.New("corrupt delta")
	varint := func() (int, bool) {
		n, shift := 0, 0
		for len(d) > 0 {
			c := d[0]
			d = d[1:]
			n |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return n, true
			}
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	size, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(src) || size > maxObjectSize {
		return nil, bad
	}
	out := dst[:0]
	if cap(out) < size {
		out = make([]byte, 0, size)
	}
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		if op&0x80 == 0 {
			if op == 0 || int(op) > len(d) {
				return nil, bad
			}
			out = append(out, d[:op]...)
			d = d[op:]
			continue
		}
		off, n := 0, 0
		for i := 0; i < 4; i++ {
			if op&(1<<i) != 0 {
				if len(d) == 0 {
					return nil, bad
				}
				off |= int(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		for i := 0; i < 3; i++ {
			if op&(0x10<<i) != 0 {
				if len(d) == 0 {
					return nil, bad
				}
				n |= int(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		if n == 0 {
			n = 0x10000
		}
		if off+n > len(src) || off < 0 {
			return nil, bad
		}
		out = append(out, src[off:off+n]...)
	}
	if len(out) != size {
		return nil, bad
	}
	return out, nil
}
