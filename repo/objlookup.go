package repo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// What the object reader answers besides whole objects: sizes, objects by
// abbreviated name, and objects borrowed from alternate object directories.

// maxAlternateNesting is git's limit on chains of alternates: it follows
// them from the store itself (0) down to depth 5. Quoted paths (git's
// C-style quoting, for names with unusual characters) are not read.
const maxAlternateNesting = 5

// alternates returns readers of the directories objects/info/alternates
// lists, read once: one path a line, relative paths against this objects
// directory, '#' starting a comment.
func (o *objReader) alternates() []*objReader {
	if o.altsSet {
		return o.alts
	}
	o.altsSet = true
	if o.nesting > maxAlternateNesting {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(o.dir, "info", "alternates"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(o.dir, line)
		}
		if fi, err := os.Stat(line); err == nil && fi.IsDir() && filepath.Clean(line) != filepath.Clean(o.dir) {
			o.alts = append(o.alts, newObjDirReader(line, o.nesting+1))
		}
	}
	return o.alts
}

// size returns an object's size without inflating its body: a packed
// entry's header says it, a delta's first bytes give the size of what it
// makes, a loose object's header says it.
func (o *objReader) size(h plumbing.Hash) (int64, error) {
	defer o.releaseRetired()
	var n int64
	found := o.lookup(h, func(p *packIndex, off int64) bool {
		var err error
		n, err = o.sizeAt(p, off)
		return err == nil
	}, func() bool {
		var err error
		n, err = o.looseSize(h)
		return err == nil
	})
	if found {
		return n, nil
	}
	for _, a := range o.alternates() {
		if n, err := a.size(h); err == nil {
			return n, nil
		}
	}
	return 0, errNotHere
}

func (o *objReader) sizeAt(p *packIndex, off int64) (int64, error) {
	if err := p.mapPack(o.dir); err != nil {
		return 0, err
	}
	e, err := p.entry(off)
	if err != nil {
		return 0, err
	}
	if e.typ != plumbing.OFSDeltaObject && e.typ != plumbing.REFDeltaObject {
		return e.size, nil
	}
	// A delta starts with two sizes, its base's and its result's, in the
	// encoding binary.Uvarint reads, each at most ten bytes.
	// Only those bytes are inflated: inflate reads a whole object (it
	// checks the stream ends there), which would refuse a longer delta.
	head := make([]byte, min(e.size, 20))
	zr, err := zlib.NewReader(bytes.NewReader(p.pack[e.data:]))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	if _, err := io.ReadFull(zr, head); err != nil {
		return 0, err
	}
	if _, w := binary.Uvarint(head); w > 0 {
		if n, w2 := binary.Uvarint(head[w:]); w2 > 0 {
			return int64(n), nil
		}
	}
	return 0, errors.New("corrupt delta header")
}

func (o *objReader) looseSize(h plumbing.Hash) (int64, error) {
	s := h.String()
	f, err := os.Open(filepath.Join(o.dir, s[:2], s[2:]))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	hdr, err := bufio.NewReaderSize(zr, 64).ReadSlice(0)
	if err != nil {
		return 0, fmt.Errorf("loose object %s: bad header: %w", s, err)
	}
	_, n, ok := strings.Cut(string(hdr[:len(hdr)-1]), " ")
	size, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || size < 0 {
		return 0, fmt.Errorf("loose object %s: bad header", s)
	}
	return size, nil
}

// withPrefix returns the objects whose hex names start with prefix (at
// least two hex digits), from every pack, the loose objects and the
// alternates, each once and sorted.
func (o *objReader) withPrefix(prefix string) []plumbing.Hash {
	defer o.releaseRetired()
	o.scan()
	seen := map[plumbing.Hash]bool{}
	o.collectPrefix(prefix, seen)
	out := make([]plumbing.Hash, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

func (o *objReader) collectPrefix(prefix string, seen map[plumbing.Hash]bool) {
	if len(prefix) < 2 || len(prefix) > 40 {
		return
	}
	// The whole bytes of the prefix bound the search; an odd last digit
	// is checked on the hex names.
	raw, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return
	}
	for _, p := range o.packs {
		if !p.load(o.dir) {
			continue
		}
		names := 8 + 1024
		lo := 0
		if raw[0] > 0 {
			lo = int(binary.BigEndian.Uint32(p.idx[8+4*(int(raw[0])-1):]))
		}
		hi := int(binary.BigEndian.Uint32(p.idx[8+4*int(raw[0]):]))
		i := lo + sort.Search(hi-lo, func(k int) bool {
			at := names + 20*(lo+k)
			return bytes.Compare(p.idx[at:at+len(raw)], raw) >= 0
		})
		for ; i < hi; i++ {
			var h plumbing.Hash
			copy(h[:], p.idx[names+20*i:])
			if !bytes.HasPrefix(h[:], raw) {
				break
			}
			if strings.HasPrefix(h.String(), prefix) {
				seen[h] = true
			}
		}
	}
	es, _ := os.ReadDir(filepath.Join(o.dir, prefix[:2]))
	for _, e := range es {
		name := prefix[:2] + e.Name()
		if len(name) == 40 && isHex(name) && strings.HasPrefix(name, prefix) {
			seen[plumbing.NewHash(name)] = true
		}
	}
	for _, a := range o.alternates() {
		a.scan()
		a.collectPrefix(prefix, seen)
	}
}
