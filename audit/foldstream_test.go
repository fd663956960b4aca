package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/verbiage"
)

// history makes random commits as the index numbers them: parents among
// the commits before (several for a merge, -1 for one git lacks), depth
// and jump as view.number sets them, files of names that sort before,
// between and after the keys already known, keys inside them, blobs or
// none, mutation ids shared, malformed or absent.
type history struct {
	rng          *rand.Rand
	depth, jump  []int32
	names        []string
	hashes       []plumbing.Hash
	mutations    []string
	blobsUnknown bool // commits indexed before blobs were kept
	// No parent git lacks: a fold numbers no record with one (a query
	// learns it from git), so the commits of a log hold none.
	noMissing bool
}

func (h *history) name() string {
	if len(h.names) > 0 && h.rng.IntN(3) > 0 {
		return h.names[h.rng.IntN(len(h.names))]
	}
	var b strings.Builder
	for i := 0; i < 1+h.rng.IntN(3); i++ {
		b.WriteByte(byte('a' + h.rng.IntN(26)))
	}
	if h.rng.IntN(4) > 0 {
		b.WriteString(".json")
	}
	n := b.String()
	h.names = append(h.names, n)
	return n
}

func (h *history) commit() *commit {
	rng := h.rng
	n := int32(len(h.depth))
	c := &commit{time: rng.Int64N(1 << 40)}
	c.hash = plumbing.ComputeHash(plumbing.CommitObject, fmt.Appendf(nil, "%d %d", rng.Uint64(), n))
	h.hashes = append(h.hashes, c.hash)
	if n > 0 {
		switch r := rng.IntN(10); {
		case r == 0: // a root
		case r == 1 && !h.noMissing:
			c.parents = []int32{-1}
		case r <= 3:
			for range 2 + rng.IntN(3) {
				c.parents = append(c.parents, rng.Int32N(n))
			}
			if rng.IntN(4) == 0 && !h.noMissing {
				c.parents = append(c.parents, -1)
			}
		default:
			c.parents = []int32{n - 1 - rng.Int32N(min(n, 4))}
		}
	}
	if fp := c.firstParent(); fp >= 0 {
		c.depth = h.depth[fp] + 1
		jp := h.jump[fp]
		if h.depth[fp]-h.depth[jp] == h.depth[jp]-h.depth[h.jump[jp]] {
			c.jump = h.jump[jp]
		} else {
			c.jump = fp
		}
	} else {
		c.jump = n
	}
	h.depth = append(h.depth, c.depth)
	h.jump = append(h.jump, c.jump)
	for range rng.IntN(4) {
		f := h.name()
		c.files = append(c.files, f)
		if !strings.HasSuffix(f, ".json") {
			c.exact = append(c.exact, fileKey(f))
			c.deep = append(c.deep, fileKey(f))
			continue
		}
		for range rng.IntN(4) {
			var p verbiage.Path
			for range rng.IntN(4) {
				p = append(p, verbiage.Segment{Key: string(rune('k' + rng.IntN(5)))})
			}
			k := keyOf(f, p)
			c.exact = append(c.exact, k)
			if rng.IntN(3) == 0 {
				c.deep = append(c.deep, k)
			}
		}
	}
	if !h.blobsUnknown && rng.IntN(5) > 0 {
		c.blobs = make([]plumbing.Hash, len(c.files))
		for i := range c.blobs {
			if rng.IntN(5) > 0 {
				c.blobs[i] = plumbing.ComputeHash(plumbing.BlobObject, fmt.Append(nil, rng.Uint64()))
			}
		}
	}
	switch r := rng.IntN(10); {
	case r < 3:
		if len(h.mutations) == 0 || rng.IntN(3) == 0 {
			h.mutations = append(h.mutations, fmt.Sprintf("mut-%08x", rng.Uint32()))
		}
		c.mutID = h.mutations[rng.IntN(len(h.mutations))]
	case r == 3:
		c.mutID = "mut-xyz"
	}
	return c
}

func (h *history) commits(n int) []*commit {
	out := make([]*commit, n)
	for i := range out {
		out[i] = h.commit()
	}
	return out
}

// sectionAt names the section of a snapshot that offset o falls in.
func sectionAt(data []byte, o int) string {
	names := []string{"header", "commits", "hashidx", "extra", "fwd", "dict", "strs", "posts", "mut"}
	i := 0
	for i < 8 && len(data) >= snapHeaderSize && uint64(o) >= binary.LittleEndian.Uint64(data[40+8*i:]) {
		i++
	}
	return names[i]
}

func sameSnapshot(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	o := 0
	for o < len(got) && o < len(want) && got[o] == want[o] {
		o++
	}
	if o >= 8 && o < 12 { // the checksum: where else?
		for o = 12; o < len(got) && o < len(want) && got[o] == want[o]; o++ {
		}
	}
	t.Fatalf("%s: the streamed fold wrote %d bytes, the rebuild %d; first difference at %d (%s)",
		what, len(got), len(want), o, sectionAt(want, o))
}

// TestStreamedFoldIsTheRebuild: folds in a row over random histories,
// each streamed from the mapped snapshot the one before wrote, write what
// the rebuild from every commit writes, byte for byte.
func TestStreamedFoldIsTheRebuild(t *testing.T) {
	// Small writes, and the old snapshot's pages let go of after each.
	defer func(buf int, every int64) { snapWriteBuf, foldReleaseEvery = buf, every }(snapWriteBuf, foldReleaseEvery)
	snapWriteBuf, foldReleaseEvery = 1000, 1
	for trial := range 24 {
		h := &history{rng: rand.New(rand.NewPCG(uint64(trial), 7))}
		dir := t.TempDir()
		path := filepath.Join(dir, "snapshot")
		first := []int{0, 1, 5, 200}[trial%4]
		publish(t, path, bytes.Join(foldParts(nil, h.commits(first), 1), nil))
		for round := range 5 {
			s, err := openSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			var tail []*commit
			if (trial+round)%5 != 0 { // else an empty log
				tail = h.commits(1 + h.rng.IntN(300))
			}
			gen := uint64(round + 2)
			want := bytes.Join(foldParts(s, tail, gen), nil)
			next := filepath.Join(dir, "next")
			if err := writeStreamedFold(next, s, tail, gen); err != nil {
				t.Fatalf("trial %d, round %d: %v", trial, round, err)
			}
			got, err := os.ReadFile(next)
			if err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, fmt.Sprintf("trial %d, round %d (%d + %d commits)", trial, round, s.n, len(tail)), got, want)
			if err := os.Rename(next, path); err != nil {
				t.Fatal(err)
			}
		}
		// And the last snapshot reads back every commit.
		s, err := openSnapshot(path)
		if err != nil {
			t.Fatal(err)
		}
		for n, hash := range h.hashes {
			if got, ok := s.find(hash); !ok || got != int32(n) {
				t.Fatalf("trial %d: commit %d found as %d, %v", trial, n, got, ok)
			}
		}
	}
}

// foldIndex is an index with only a directory: fold reads and writes the
// snapshot and the log and nothing of git.
func foldIndex(t *testing.T) *Index {
	dir := t.TempDir()
	return &Index{dir: dir}
}

// appendLog writes commits of h to the index's log as records, parents by
// hash.
func appendLog(t *testing.T, ix *Index, h *history, cs []*commit) {
	t.Helper()
	var recs []*record
	for _, c := range cs {
		r := &record{hash: c.hash, time: c.time, mutID: c.mutID, files: c.files, blobs: c.blobs, keys: c.exact, deep: c.deep}
		for _, p := range c.parents {
			r.parents = append(r.parents, h.hashes[p])
		}
		recs = append(recs, r)
	}
	if err := ix.appendRecords(recs); err != nil {
		t.Fatal(err)
	}
}

// loadedSize is how many commits a fold of ix numbers.
func loadedSize(t *testing.T, ix *Index) int {
	t.Helper()
	v, err := ix.tryLoad()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.pending) > 0 {
		t.Fatalf("%d records wait for parents", len(v.pending))
	}
	return int(v.size())
}

// rebuildOf is the rebuild of the old snapshot and the commits the new
// one numbered after it (a load numbers a log's commits in an order of
// its own each time: the fold's is the one to hold it to).
func rebuildOf(t *testing.T, old *snapshot, newPath string) []byte {
	t.Helper()
	s, err := openSnapshot(newPath)
	if err != nil {
		t.Fatal(err)
	}
	var tail []*commit
	s.each(func(c *commit) {
		if c.hash != (plumbing.Hash{}) && len(tail)+old.n < s.n {
			if _, known := old.find(c.hash); !known {
				cp := *c
				tail = append(tail, &cp)
			}
		}
	})
	if old.n+len(tail) != s.n {
		t.Fatalf("the fold holds %d commits, the old snapshot %d and %d new", s.n, old.n, len(tail))
	}
	return bytes.Join(foldParts(old, tail, s.gen), nil)
}

// TestFoldOfTheLogStreams: folds of an index's log, as a query makes them,
// write the rebuild's snapshot; a snapshot of the format before blobs is
// rebuilt whole into the current one, and the folds after it stream.
func TestFoldOfTheLogStreams(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		ix := foldIndex(t)
		h := &history{rng: rand.New(rand.NewPCG(3, 4)), blobsUnknown: v2, noMissing: true}
		data := bytes.Join(foldParts(nil, h.commits(150), 1), nil)
		if v2 {
			binary.LittleEndian.PutUint32(data[12:], 2)
			binary.LittleEndian.PutUint32(data[8:], crc32.ChecksumIEEE(data[12:]))
		}
		if err := os.MkdirAll(ix.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		publish(t, ix.snapshotPath(), data)
		h.blobsUnknown = false
		for round := range 4 {
			appendLog(t, ix, h, h.commits(100+round))
			n := loadedSize(t, ix)
			old, err := openSnapshot(ix.snapshotPath())
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.fold(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(ix.snapshotPath())
			if err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, fmt.Sprintf("v2 %v, round %d", v2, round), got, rebuildOf(t, old, ix.snapshotPath()))
			s, err := openSnapshot(ix.snapshotPath())
			if err != nil {
				t.Fatal(err)
			}
			if s.n != n || s.version != snapVersion {
				t.Fatalf("round %d: %d commits of version %d, want %d of %d", round, s.n, s.version, n, snapVersion)
			}
		}
	}
}

// TestFailedStreamedFoldKeepsTheSnapshot: a streamed fold whose write
// fails, at any point, publishes nothing and leaves no file behind; the
// old snapshot and the log answer as before, and the next fold succeeds.
// A temporary snapshot a killed fold left is removed by the next.
func TestFailedStreamedFoldKeepsTheSnapshot(t *testing.T) {
	ix := foldIndex(t)
	h := &history{rng: rand.New(rand.NewPCG(5, 6)), noMissing: true}
	if err := os.MkdirAll(ix.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	publish(t, ix.snapshotPath(), bytes.Join(foldParts(nil, h.commits(3000), 1), nil))
	before, err := os.ReadFile(ix.snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	appendLog(t, ix, h, h.commits(50))
	n := loadedSize(t, ix)
	old, err := openSnapshot(ix.snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	defer func() { streamFault = nil }()
	defer func(buf int) { snapWriteBuf = buf }(snapWriteBuf)
	snapWriteBuf = 1000
	for _, at := range []int64{0, snapHeaderSize, int64(len(before)) / 2, int64(len(before)) - 1} {
		streamFault = func(written int64) error {
			if written >= at {
				return boom
			}
			return nil
		}
		if err := ix.fold(); !errors.Is(err, boom) {
			t.Fatalf("a fold failing at %d: %v", at, err)
		}
		streamFault = nil
		if now, err := os.ReadFile(ix.snapshotPath()); err != nil || !bytes.Equal(now, before) {
			t.Fatalf("a failed fold changed the snapshot (%v)", err)
		}
		names, _ := os.ReadDir(ix.dir)
		for _, e := range names {
			if strings.Contains(e.Name(), ".tmp") {
				t.Fatalf("a failed fold left %s", e.Name())
			}
		}
		v, err := ix.tryLoad()
		if err != nil {
			t.Fatal(err)
		}
		if int(v.n0) != 3000 {
			t.Fatalf("after a failed fold the snapshot holds %d commits", v.n0)
		}
		if _, ok := v.find(h.hashes[len(h.hashes)-1]); !ok {
			t.Fatal("after a failed fold the log's commits are lost")
		}
	}
	left := ix.snapshotPath() + ".tmp-999999999"
	if err := os.WriteFile(left, before[:len(before)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ix.fold(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(ix.snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after the failures", got, rebuildOf(t, old, ix.snapshotPath()))
	if s, err := openSnapshot(ix.snapshotPath()); err != nil || s.n != n {
		t.Fatalf("the fold after the failures: %v", err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("a killed fold's temporary snapshot is still there (%v)", err)
	}
}

// TestStreamedFoldRefusesOtherLayouts: a snapshot whose tables are not
// laid out as the builder lays them out is not streamed (the fold rebuilds
// it whole), nor is one of the format before blobs.
func TestStreamedFoldRefusesOtherLayouts(t *testing.T) {
	h := &history{rng: rand.New(rand.NewPCG(8, 9))}
	good := bytes.Join(foldParts(nil, h.commits(40), 1), nil)
	tail := h.commits(3)
	le := binary.LittleEndian
	for _, c := range []struct {
		what   string
		damage func(d []byte, s *snapshot)
	}{
		{"version 2", func(d []byte, s *snapshot) { le.PutUint32(d[12:], 2) }},
		{"a gap before the mutations", func(d []byte, s *snapshot) { le.PutUint64(d[40+8*7:], uint64(s.mut-4)) }},
		{"keys out of order", func(d []byte, s *snapshot) {
			copy(d[s.dict:s.dict+dictSize], d[s.dict+dictSize:s.dict+2*dictSize])
		}},
		{"a forward entry elsewhere", func(d []byte, s *snapshot) {
			le.PutUint32(d[s.commits+5*commitSize+36:], le.Uint32(d[s.commits+4*commitSize+36:]))
		}},
		{"a posting past the last commit", func(d []byte, s *snapshot) { le.PutUint32(d[s.posts:], uint32(s.n)) }},
		{"a posting list out of order", func(d []byte, s *snapshot) {
			// The longest list: a key every commit wrote.
			best, at := 0, 0
			for id := 0; id < s.nkeys; id++ {
				for kind := 0; kind < 3; kind++ {
					o := s.dict + id*dictSize + 8 + 8*kind
					if cnt := int(le.Uint32(d[o+4:])); cnt > best {
						best, at = cnt, s.posts+4*int(le.Uint32(d[o:]))
					}
				}
			}
			if best < 2 {
				t.Fatal("no posting list of two")
			}
			a, b := le.Uint32(d[at:]), le.Uint32(d[at+4:])
			le.PutUint32(d[at:], b)
			le.PutUint32(d[at+4:], a)
		}},
		{"hashes out of order", func(d []byte, s *snapshot) {
			e := slices.Clone(d[s.hashidx : s.hashidx+hashIdxSize])
			copy(d[s.hashidx:], d[s.hashidx+hashIdxSize:s.hashidx+2*hashIdxSize])
			copy(d[s.hashidx+hashIdxSize:], e)
		}},
	} {
		d := slices.Clone(good)
		s, err := parseSnapshot(d)
		if err != nil {
			t.Fatal(err)
		}
		c.damage(d, s)
		le.PutUint32(d[8:], crc32.ChecksumIEEE(d[12:]))
		path := filepath.Join(t.TempDir(), "snapshot")
		publish(t, path, d)
		if s, err = openSnapshot(path); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		out := filepath.Join(t.TempDir(), "out")
		if err := writeStreamedFold(out, s, tail, 2); !errors.Is(err, errNotStreamable) {
			t.Errorf("%s: streamed (%v)", c.what, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: a refused fold published a file", c.what)
		}
	}
}

// FuzzStreamedFold: whatever a snapshot that passes its checksum holds,
// the streamed fold neither panics nor publishes a snapshot that does not
// read back; it streams it, or says it must be rebuilt.
func FuzzStreamedFold(f *testing.F) {
	h := &history{rng: rand.New(rand.NewPCG(1, 2))}
	f.Add(bytes.Join(foldParts(nil, h.commits(6), 1), nil))
	f.Add(bytes.Join(foldParts(nil, nil, 1), nil))
	tail := h.commits(3)
	defer func(buf int) { f.Cleanup(func() { snapWriteBuf = buf }) }(snapWriteBuf)
	snapWriteBuf = 4096 // a megabyte's buffer would be most of each run
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 12 || string(data[:8]) != snapMagic {
			return
		}
		data = slices.Clone(data)
		binary.LittleEndian.PutUint32(data[8:], crc32.ChecksumIEEE(data[12:]))
		s, err := parseSnapshot(data)
		if err != nil {
			return
		}
		if !s.streamable() {
			return
		}
		var out memFile
		err = streamFold(&out, s, tail, 2)
		if errors.Is(err, errNotStreamable) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseSnapshot(out.b)
		if err != nil || got.n != s.n+len(tail) || !got.streamable() {
			t.Fatalf("the streamed fold wrote a snapshot that reads back as %v (%v)", got, err)
		}
	})
}

// memFile is a file in memory, for the fuzz test.
type memFile struct{ b []byte }

func (m *memFile) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, errors.New("write past the end")
	}
	return copy(m.b[off:], p), nil
}
