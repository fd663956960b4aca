package repo

import (
	"bytes"
	"cmp"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/sysfile"
)

// The tail pack. Writing a new pack for every commit would leave one pack
// per mutation: every process that opens the store then loads every pack
// index (go-git decodes them all on the first read), and every commit
// allocates two fresh inodes, the costliest thing a commit does on the file
// systems we measured. So a commit rewrites the newest small pack (the
// tail) with its own objects appended, and removes the old one once the
// branch has moved: pack count grows by one per full tail (see full), and
// the two inodes a commit frees are the ones the next commit reuses. Trees
// and large blobs are stored as deltas against their previous version in
// the tail, so a commit adds hundreds of bytes, not the ~40 KB of a
// 1,000-entry directory. Several writers may extend the same tail at once:
// each new pack holds all of the old one, so whichever survives, no object
// is lost (a duplicate object in two packs is harmless to git).
//
// Rewriting the tail is the price of git's formats: a pack is named and
// indexed by the checksum of all of it, so nothing can be appended to one
// in place, and a pack on disk must hold the bases of its own deltas, so a
// commit's objects in a pack of their own are whole (the 42 KB tree). A
// commit therefore writes either its objects whole, in a new pack (a pack
// per commit), or the tail with its deltas appended. The tail stops
// growing tailGrowth past its first commit's objects, which bounds what a
// commit writes to about 1.25 times its own objects (measured by
// bench/mutations) while a pack still begins only every fifty commits or so.

const (
	// tailPackMax bounds the pack a commit rewrites: every commit hashes
	// and writes it whole.
	tailPackMax = 128 << 10
	// tailGrowth bounds, further, how far a tail grows past its first
	// commit's objects (see tailPack.full): a commit writes the whole
	// tail, so a tail that starts with a 42 KB directory tree and grows
	// to 128 KB writes twice the commit's own objects a commit on average,
	// where one that stops at 66 KB writes 1.25 times as much, and still
	// takes fifty commits of a few hundred bytes of deltas each before
	// the next pack begins.
	tailGrowth = 24 << 10
	// maxDeltaDepth bounds delta chains so reads stay cheap.
	maxDeltaDepth = 20
	// minDeltaBlob: smaller blobs are stored whole.
	minDeltaBlob = 2 << 10
)

// tailPack is a small pack being extended. The next commit extends its
// data and objs in place when their capacity allows, rather than copying
// ~100 KB per commit, so a tailPack is read and written only under
// Repo.packMu, and is dropped (setTail(nil)) when a pack write fails or
// the commit that extended it is not published.
type tailPack struct {
	hash plumbing.Hash
	data []byte      // the pack without its trailing checksum
	objs []packEntry // its objects in hash order, as its index lists them
	// kept: the pack has our .keep. A .keep is only ever written before
	// its pack appears and removed later, so a tail remembered as kept
	// may have lost it since, never the reverse.
	kept bool
	// first is where the tail's first commit ends: what the pack held
	// when it began (see full).
	first int64
}

// full reports whether the tail is done growing: past tailGrowth beyond
// its first commit, or past tailPackMax.
func (t *tailPack) full() bool {
	return int64(len(t.data)) >= min(tailPackMax, t.first+tailGrowth)
}

// firstCommitEnd is where the first commit of pack data (without its
// checksum) ends, objs being its entries: the pack's size when a commit
// began it. A pack without a commit (objects alone) counts whole.
func firstCommitEnd(data []byte, objs []packEntry) int64 {
	offs := make([]int64, len(objs))
	for i, e := range objs {
		offs[i] = e.offset
	}
	slices.Sort(offs)
	for i, off := range offs {
		if e, err := decodeEntryHeader(data, off); err == nil && e.typ == plumbing.CommitObject {
			if i+1 < len(offs) {
				return offs[i+1]
			}
			break
		}
	}
	return int64(len(data))
}

// packEntry is one object of a pack, as its index records it.
type packEntry struct {
	hash   plumbing.Hash
	offset int64
	crc    uint32
}

// find looks an object up by hash.
func (t *tailPack) find(h plumbing.Hash) (packEntry, bool) {
	i, ok := slices.BinarySearchFunc(t.objs, h, func(e packEntry, h plumbing.Hash) int { return bytes.Compare(e.hash[:], h[:]) })
	if !ok {
		return packEntry{}, false
	}
	return t.objs[i], true
}

// findTail picks the newest pack small enough to extend, or nil. A
// candidate that fails its checksums is an error (ErrCorrupt): rewriting
// it would copy the damage into a pack under a new name and remove the
// only other evidence of what it held.
//
// Superseded tails past their grace that the tail holds are removed on
// the way; locked says the caller holds the maintenance lock (see
// removeSuperseded).
func (r *Repo) findTail(locked bool) (*tailPack, error) {
	dir := filepath.Join(r.dir, "objects", "pack")
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	names := make(map[string]bool, len(es))
	midx := false
	for _, e := range es {
		names[e.Name()] = true
		midx = midx || strings.HasPrefix(e.Name(), "multi-pack-index")
	}
	var cover midxCover
	if midx {
		cover = readMidxCover(dir)
	}
	var best os.FileInfo
	bestKept := false
	packs := 0
	var stale []plumbing.Hash            // superseded tails past their grace
	gitFiles := map[plumbing.Hash]bool{} // those of them with git's files beside
	var holders []packFile               // packs that may hold a stale one whole (see sweepStale)
	staleTimes := map[plumbing.Hash]time.Time{}
	defer func() { r.packsSeen.Store(int64(packs)) }()
	for _, e := range es {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".pack") {
			continue
		}
		packs++
		fi, err := e.Info()
		if err != nil || fi.Size() >= tailPackMax {
			continue
		}
		stem := strings.TrimSuffix(n, ".pack")
		base := filepath.Join(dir, stem)
		if !names[stem+".idx"] {
			continue // its index is not in place yet, or was lost (see RecoverPacks)
		}
		// A superseded tail (always small) holds only what a newer
		// pack holds: not counted, not extended, and removed below once
		// its grace is over (the process that marked it may be gone).
		if ifi, err := os.Lstat(base + ".idx"); err == nil {
			if marked, age := isSuperseded(ifi); marked {
				packs--
				if h := strings.TrimPrefix(stem, "pack-"); age >= supersededGrace && plumbing.IsHash(h) && !cover.covers(stem) {
					stale = append(stale, plumbing.NewHash(h))
					gitFiles[plumbing.NewHash(h)] = names[stem+".bitmap"] || names[stem+".rev"]
					staleTimes[plumbing.NewHash(h)] = fi.ModTime()
				}
				continue
			}
		}
		if cover.covers(stem) {
			continue // a multi-pack-index names it: it must stay as it is
		}
		kept, ours := false, false
		if names[stem+".keep"] {
			if kept, ours = readKeep(base + ".keep"); kept && !ours {
				continue // kept by someone else
			}
		}
		if names[stem+".mtimes"] || names[stem+".promisor"] {
			continue // git's cruft pack, or a partial clone's: not ours to extend
		}
		if h := strings.TrimPrefix(stem, "pack-"); plumbing.IsHash(h) {
			holders = append(holders, packFile{plumbing.NewHash(h), fi.ModTime()})
		}
		if best == nil || fi.ModTime().After(best.ModTime()) {
			best, bestKept = fi, ours
		}
	}
	if best == nil {
		return nil, nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(best.Name(), "pack-"), ".pack")
	if !plumbing.IsHash(name) {
		return nil, nil
	}
	t, err := readTail(dir, plumbing.NewHash(name))
	if errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if err != nil {
		return nil, nil // being removed, or not ours to understand: start a new tail
	}
	t.kept = bestKept
	r.sweepStale(dir, t, stale, staleTimes, holders, gitFiles, cover, locked)
	if t.full() {
		return nil, nil // grown as far as a tail grows: start a new one
	}
	return t, nil
}

// sweepStale removes the superseded tails in stale that the tail t, or
// another pack, holds whole. The mark is only a hint: a clone made by `git
// clone` of a local path shares the store's pack files by hard link, mode
// bits and all, so a pack this store superseded reads as superseded in the
// clone too, where nothing may hold its objects. Checked against the tail
// (read and verified anyway), or against the packs in holders written
// since it (their indexes read, the oldest of them first, at most
// maxHolderReads a call), a mark never removes the only copy of an object.
//
// The other packs matter once a tail has filled: the tails superseded in
// its last second are held by the full pack that ended its chain, not by
// the tail a new chain extends. Left to the next roll-up, which the pack
// count (superseded tails left out) starts only every fifty full tails,
// they piled up by the hundred under writers that each made one commit
// (the CLI, a server's surplus stores), and every process opening the
// store then listed and mapped them all.
func (r *Repo) sweepStale(dir string, t *tailPack, stale []plumbing.Hash, staleTimes map[plumbing.Hash]time.Time, holders []packFile, gitFiles map[plumbing.Hash]bool, cover midxCover, locked bool) {
	if len(stale) == 0 {
		return
	}
	// Oldest first: the pack that holds a stale tail is most often the
	// first pack written after it that is not itself superseded, the
	// full tail that ended its chain, which holds the chain's others
	// too (its index, once read, serves them all).
	slices.SortFunc(holders, func(a, b packFile) int { return a.mtime.Compare(b.mtime) })
	read := map[plumbing.Hash][]packEntry{} // holders' entries, nil when unreadable
	reads := 0
	holds := func(objs, in []packEntry) bool {
		if len(objs) > len(in) {
			return false
		}
		for _, e := range objs {
			if _, ok := slices.BinarySearchFunc(in, e.hash, func(e packEntry, h plumbing.Hash) int { return bytes.Compare(e.hash[:], h[:]) }); !ok {
				return false
			}
		}
		return true
	}
	for _, h := range stale {
		idx, err := sysfile.ReadFile(filepath.Join(dir, "pack-"+h.String()+".idx"), 0)
		if err != nil {
			continue
		}
		objs, _, err := parseIdx(idx)
		if err != nil {
			continue
		}
		held := holds(objs, t.objs)
		for _, p := range holders {
			if held {
				break
			}
			// The pack that superseded it was written before the mark,
			// and after the pack it supersedes.
			if p.hash == t.hash || p.hash == h || p.mtime.Before(staleTimes[h]) {
				continue
			}
			in, ok := read[p.hash]
			if !ok {
				if reads >= maxHolderReads {
					continue
				}
				reads++
				if b, err := sysfile.ReadFile(filepath.Join(dir, "pack-"+p.hash.String()+".idx"), 0); err == nil && checkIdxSum(b) == nil {
					in, _, _ = parseIdx(b)
				}
				read[p.hash] = in
			}
			held = in != nil && holds(objs, in)
		}
		if held {
			r.removeSuperseded(h, cover, locked, gitFiles[h])
		}
	}
}

// maxHolderReads bounds the indexes of other packs one search for a tail
// reads to sweep superseded tails (see sweepStale): a few kilobytes each.
const maxHolderReads = 8

// packFile is a pack of the directory and when it was written.
type packFile struct {
	hash  plumbing.Hash
	mtime time.Time
}

func readTail(dir string, h plumbing.Hash) (*tailPack, error) {
	base := filepath.Join(dir, "pack-"+h.String())
	idx, err := sysfile.ReadFile(base+".idx", 0)
	if err != nil {
		return nil, err
	}
	pack, err := sysfile.ReadFile(base+".pack", tailRoom)
	if err != nil {
		return nil, err
	}
	if len(pack) < 32 || string(pack[:4]) != "PACK" || binary.BigEndian.Uint32(pack[4:]) != 2 ||
		!bytes.Equal(pack[len(pack)-20:], h[:]) {
		return nil, errors.New("not a version 2 pack")
	}
	// The checksums, before the pack is trusted for a rewrite: a flipped
	// bit in an object name of the index would otherwise be copied into
	// the new pack's index, and the old pack, the only intact record,
	// removed. Read once per process (a writer then extends its tail in
	// memory), so a commit pays this only when it starts cold.
	if err := checkPackSums(base, idx, pack); err != nil {
		return nil, err
	}
	objs, v1, err := parseIdx(idx)
	if err != nil {
		return nil, &CorruptError{File: "objects/pack/" + filepath.Base(base) + ".idx", Reason: err.Error()}
	}
	if v1 {
		if err := fillCRCs(objs, pack[:len(pack)-20]); err != nil {
			return nil, &CorruptError{File: "objects/pack/" + filepath.Base(base) + ".idx", Reason: err.Error()}
		}
	}
	if uint32(len(objs)) != binary.BigEndian.Uint32(pack[8:]) {
		return nil, &CorruptError{File: "objects/pack/" + filepath.Base(base) + ".idx", Reason: "its object count differs from the pack's"}
	}
	data := pack[:len(pack)-20]
	return &tailPack{hash: h, data: data, objs: objs, first: firstCommitEnd(data, objs)}, nil
}

// checkPackSums verifies a pack and its index, given whole: the pack's
// trailing SHA-1 of its contents, the index's own, and the index's copy of
// the pack's. base is the path without extension.
func checkPackSums(base string, idx, pack []byte) error {
	name := "objects/pack/" + filepath.Base(base)
	if len(pack) < 32 {
		return &CorruptError{File: name + ".pack", Reason: "truncated"}
	}
	if sum := sha1.Sum(pack[:len(pack)-20]); !bytes.Equal(sum[:], pack[len(pack)-20:]) {
		return &CorruptError{File: name + ".pack", Reason: "its checksum does not match its contents"}
	}
	if err := checkIdxSum(idx); err != nil {
		return &CorruptError{File: name + ".idx", Reason: err.Error()}
	}
	if !bytes.Equal(idx[len(idx)-40:len(idx)-20], pack[len(pack)-20:]) {
		return &CorruptError{File: name + ".idx", Reason: "it indexes another pack (its copy of the pack's checksum differs)"}
	}
	return nil
}

// checkIdxSum verifies an index's trailing SHA-1 of its contents.
func checkIdxSum(idx []byte) error {
	if len(idx) < 1024+40 { // a version 1 index of no object
		return errors.New("truncated")
	}
	if sum := sha1.Sum(idx[:len(idx)-20]); !bytes.Equal(sum[:], idx[len(idx)-20:]) {
		return errors.New("its checksum does not match its contents")
	}
	return nil
}

// tailRoom is the spare capacity a tail read from disk gets: most commits
// add a few hundred bytes, a whole directory tree tens of kilobytes. Without
// it the first append copies the tail into a buffer twice its size, in a
// CLI process the largest memory it touches.
const tailRoom = 48 << 10

// parseIdx reads a pack index: version 2, git's default, with its table
// of 64-bit offsets, or version 1 (`pack.indexVersion=1`), which records
// no CRCs (v1 is then set, and every crc is zero).
func parseIdx(b []byte) (objs []packEntry, v1 bool, err error) {
	if len(b) >= 4 && bytes.Equal(b[:4], []byte{0xff, 't', 'O', 'c'}) {
		objs, err = parseIdxV2(b)
		return objs, false, err
	}
	objs, err = parseIdxV1(b)
	return objs, true, err
}

func parseIdxV2(b []byte) ([]packEntry, error) {
	if len(b) < 8+1024 || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, errors.New("not a pack index of version 1 or 2")
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	names := 8 + 1024
	crcs := names + 20*n
	offs := crcs + 4*n
	large := offs + 4*n
	if n < 0 || len(b) < large+40 {
		return nil, errors.New("truncated index")
	}
	out := make([]packEntry, n)
	for i := range out {
		e := &out[i]
		copy(e.hash[:], b[names+20*i:])
		if i > 0 && bytes.Compare(out[i-1].hash[:], e.hash[:]) >= 0 {
			return nil, errors.New("index out of order")
		}
		off := int64(binary.BigEndian.Uint32(b[offs+4*i:]))
		if off&0x80000000 != 0 {
			// An entry of the table of 64-bit offsets: git puts offsets
			// past 2 GiB there, or any past the limit
			// --index-version=2,<limit> sets.
			at := large + 8*int(off&0x7fffffff)
			if at+8 > len(b)-40 {
				return nil, errors.New("a large offset outside the index")
			}
			if off = int64(binary.BigEndian.Uint64(b[at:])); off < 0 {
				return nil, errors.New("a large offset out of range")
			}
		}
		e.offset, e.crc = off, binary.BigEndian.Uint32(b[crcs+4*i:])
	}
	return out, nil
}

// parseIdxV1 reads a version 1 index: the fan-out table, then per object
// its 4-byte offset and its name.
func parseIdxV1(b []byte) ([]packEntry, error) {
	if len(b) < 1024+40 {
		return nil, errors.New("not a pack index of version 1 or 2")
	}
	n := int(binary.BigEndian.Uint32(b[255*4:]))
	if n < 0 || len(b) != 1024+24*n+40 {
		return nil, errors.New("not a pack index of version 1 or 2 (or a truncated one)")
	}
	prev := uint32(0)
	for i := range 256 {
		f := binary.BigEndian.Uint32(b[4*i:])
		if f < prev {
			return nil, errors.New("not a pack index of version 1 or 2 (its fan-out table decreases)")
		}
		prev = f
	}
	out := make([]packEntry, n)
	for i := range out {
		e := &out[i]
		at := 1024 + 24*i
		e.offset = int64(binary.BigEndian.Uint32(b[at:]))
		copy(e.hash[:], b[at+4:])
		if i > 0 && bytes.Compare(out[i-1].hash[:], e.hash[:]) >= 0 {
			return nil, errors.New("index out of order")
		}
	}
	return out, nil
}

// fillCRCs computes the CRC-32 of each entry's bytes in pack (its data
// without the trailing checksum), which a version 1 index does not
// record and the version 2 index of a tail's copy must.
func fillCRCs(objs []packEntry, pack []byte) error {
	byOff := make([]int, len(objs))
	for i := range byOff {
		byOff[i] = i
	}
	slices.SortFunc(byOff, func(a, b int) int { return cmp.Compare(objs[a].offset, objs[b].offset) })
	for k, i := range byOff {
		start, end := objs[i].offset, int64(len(pack))
		if k+1 < len(byOff) {
			end = objs[byOff[k+1]].offset
		}
		if start < 12 || end <= start || end > int64(len(pack)) {
			return errors.New("an offset outside the pack")
		}
		objs[i].crc = crc32.ChecksumIEEE(pack[start:end])
	}
	return nil
}

// encodeIdx renders a version 2 pack index of objs, which are in hash
// order. go-git's idxfile.Writer takes the objects one by one and sorts
// them on every pack; a commit extending the tail adds a handful to a
// thousand already in order.
func encodeIdx(objs []packEntry, pack plumbing.Hash) []byte {
	var large []int64
	n := len(objs)
	b := make([]byte, 0, 8+1024+n*28+40)
	b = append(b, 0xff, 't', 'O', 'c', 0, 0, 0, 2)
	var fanout [256]uint32
	for _, e := range objs {
		fanout[e.hash[0]]++
	}
	total := uint32(0)
	for i := range fanout {
		total += fanout[i]
		b = binary.BigEndian.AppendUint32(b, total)
	}
	for _, e := range objs {
		b = append(b, e.hash[:]...)
	}
	for _, e := range objs {
		b = binary.BigEndian.AppendUint32(b, e.crc)
	}
	for _, e := range objs {
		if e.offset < 0x80000000 {
			b = binary.BigEndian.AppendUint32(b, uint32(e.offset))
			continue
		}
		b = binary.BigEndian.AppendUint32(b, 0x80000000|uint32(len(large)))
		large = append(large, e.offset)
	}
	for _, off := range large {
		b = binary.BigEndian.AppendUint64(b, uint64(off))
	}
	b = append(b, pack[:]...)
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// depth is the length of the delta chain of the entry at off.
func (t *tailPack) depth(off int64, memo map[int64]int) int {
	if d, ok := memo[off]; ok {
		return d
	}
	e, err := decodeEntryHeader(t.data, off)
	d := 0
	switch {
	case err != nil:
		d = maxDeltaDepth // unknown: never build on it
	case e.typ == plumbing.OFSDeltaObject:
		d = 1 + t.depth(e.baseOff, memo)
	case e.typ == plumbing.REFDeltaObject:
		d = maxDeltaDepth
	}
	memo[off] = d
	return d
}

// writeOfsDeltaHeader writes an offset-delta entry header: type 6 with the
// delta's size, then the distance back to the base in git's encoding.
func writeOfsDeltaHeader(buf *bytes.Buffer, size int, rel int64) {
	writeObjHeader(buf, plumbing.OFSDeltaObject, size)
	var tmp [16]byte
	pos := len(tmp) - 1
	tmp[pos] = byte(rel & 0x7f)
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		pos--
		tmp[pos] = 0x80 | byte(rel&0x7f)
	}
	buf.Write(tmp[pos:])
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
