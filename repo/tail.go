package repo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The tail pack. Writing a new pack for every commit would leave one pack
// per mutation: every process that opens the store then loads every pack
// index (go-git decodes them all on the first read), and every commit
// allocates two fresh inodes, the costliest thing a commit does on the file
// systems we measured. So a commit rewrites the newest small pack (the
// tail) with its own objects appended, and removes the old one once the
// branch has moved: pack count grows by one per tailPackMax bytes, and
// the two inodes a commit frees are the ones the next commit reuses. Trees
// and large blobs are stored as deltas against their previous version in
// the tail, so a commit adds hundreds of bytes, not the ~40 KB of a
// 1,000-entry directory. Several writers may extend the same tail at once:
// each new pack holds all of the old one, so whichever survives, no object
// is lost (a duplicate object in two packs is harmless to git).

const (
	// tailPackMax bounds the pack a commit rewrites: every commit hashes
	// and writes it whole.
	tailPackMax = 128 << 10
	// maxDeltaDepth bounds delta chains so reads stay cheap.
	maxDeltaDepth = 20
	// minDeltaBlob: smaller blobs are stored whole.
	minDeltaBlob = 2 << 10
)

// tailPack is a small pack being extended.
type tailPack struct {
	hash    plumbing.Hash
	data    []byte // the pack without its trailing checksum
	entries map[plumbing.Hash]idxEntry
}

type idxEntry struct {
	offset int64
	crc    uint32
}

// findTail picks the newest pack small enough to extend, or nil.
func (r *Repo) findTail() *tailPack {
	dir := filepath.Join(r.dir, "objects", "pack")
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var best os.FileInfo
	for _, e := range es {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".pack") {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.Size() >= tailPackMax {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(n, ".pack")+".keep")); err == nil {
			continue
		}
		if best == nil || fi.ModTime().After(best.ModTime()) {
			best = fi
		}
	}
	if best == nil {
		return nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(best.Name(), "pack-"), ".pack")
	if !plumbing.IsHash(name) {
		return nil
	}
	t, err := readTail(dir, plumbing.NewHash(name))
	if err != nil {
		return nil // being removed, or not ours to understand: start a new tail
	}
	return t
}

func readTail(dir string, h plumbing.Hash) (*tailPack, error) {
	base := filepath.Join(dir, "pack-"+h.String())
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		return nil, err
	}
	pack, err := os.ReadFile(base + ".pack")
	if err != nil {
		return nil, err
	}
	if len(pack) < 32 || string(pack[:4]) != "PACK" || binary.BigEndian.Uint32(pack[4:]) != 2 ||
		!bytes.Equal(pack[len(pack)-20:], h[:]) {
		return nil, errors.New("not a version 2 pack")
	}
	entries, err := parseIdx(idx)
	if err != nil {
		return nil, err
	}
	if uint32(len(entries)) != binary.BigEndian.Uint32(pack[8:]) {
		return nil, errors.New("index and pack disagree")
	}
	return &tailPack{hash: h, data: pack[:len(pack)-20], entries: entries}, nil
}

// parseIdx reads a version 2 pack index of a small pack (no 64-bit
// offsets).
func parseIdx(b []byte) (map[plumbing.Hash]idxEntry, error) {
	if len(b) < 8+1024 || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, errors.New("not a version 2 index")
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	names := 8 + 1024
	crcs := names + 20*n
	offs := crcs + 4*n
	if len(b) < offs+4*n+40 {
		return nil, errors.New("truncated index")
	}
	out := make(map[plumbing.Hash]idxEntry, n)
	for i := 0; i < n; i++ {
		var h plumbing.Hash
		copy(h[:], b[names+20*i:])
		off := binary.BigEndian.Uint32(b[offs+4*i:])
		if off&0x80000000 != 0 {
			return nil, errors.New("large offsets")
		}
		out[h] = idxEntry{offset: int64(off), crc: binary.BigEndian.Uint32(b[crcs+4*i:])}
	}
	return out, nil
}

// entryHeader decodes the pack entry at off: its type and, for an offset
// delta, where its base starts.
func entryHeader(data []byte, off int64) (plumbing.ObjectType, int64, bool) {
	i := off
	if i >= int64(len(data)) {
		return 0, 0, false
	}
	c := data[i]
	t := plumbing.ObjectType((c >> 4) & 7)
	for c&0x80 != 0 {
		i++
		if i >= int64(len(data)) {
			return 0, 0, false
		}
		c = data[i]
	}
	i++
	if t != plumbing.OFSDeltaObject {
		return t, 0, true
	}
	if i >= int64(len(data)) {
		return 0, 0, false
	}
	c = data[i]
	rel := int64(c & 0x7f)
	for c&0x80 != 0 {
		i++
		if i >= int64(len(data)) {
			return 0, 0, false
		}
		c = data[i]
		rel = ((rel + 1) << 7) | int64(c&0x7f)
	}
	return t, off - rel, true
}

// depth is the length of the delta chain of the entry at off.
func (t *tailPack) depth(off int64, memo map[int64]int) int {
	if d, ok := memo[off]; ok {
		return d
	}
	typ, base, ok := entryHeader(t.data, off)
	d := 0
	switch {
	case !ok:
		d = maxDeltaDepth // unknown: never build on it
	case typ == plumbing.OFSDeltaObject:
		d = 1 + t.depth(base, memo)
	case typ == plumbing.REFDeltaObject:
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
