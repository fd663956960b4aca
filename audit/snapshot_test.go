package audit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// testSnapshot builds a snapshot of n commits in a chain, each changing
// one file of tag's.
func testSnapshot(tag string, n int, gen uint64) []byte {
	b := newSnapBuilder(n)
	for i := 0; i < n; i++ {
		c := &commit{hash: plumbing.ComputeHash(plumbing.CommitObject, []byte(fmt.Sprint(tag, i))), time: int64(i),
			files: []string{fmt.Sprintf("%s%d.json", tag, i%3)}, depth: int32(i), jump: max(int32(i)-1, 0)}
		if i > 0 {
			c.parents = []int32{int32(i - 1)}
		}
		b.add(c)
	}
	return b.finish(gen)
}

func publish(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

type snapSummary struct {
	gen   uint64
	files []string
	found []int32
}

func summarize(s *snapshot, tag string) snapSummary {
	sum := snapSummary{gen: s.gen}
	for i := 0; i < s.n; i++ {
		files, _, _ := s.forward(int32(i))
		sum.files = append(sum.files, files...)
		num, _ := s.find(plumbing.ComputeHash(plumbing.CommitObject, []byte(fmt.Sprint(tag, i))))
		sum.found = append(sum.found, num)
	}
	return sum
}

// TestSnapshotReplacedWhileMapped: a fold renames a new snapshot over the
// one a view maps; the view keeps reading the old one, whole and right,
// through collections, and the next open maps the new one.
func TestSnapshotReplacedWhileMapped(t *testing.T) {
	ReleaseWhileReading(true) // pages let go of in the middle of reads too
	defer ReleaseWhileReading(false)
	path := filepath.Join(t.TempDir(), "snapshot")
	publish(t, path, testSnapshot("a", 500, 1))
	old, err := openSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(old, "a")
	if again, _ := openSnapshot(path); again != old {
		t.Fatal("a second open of the same file did not share the mapping")
	}
	publish(t, path, testSnapshot("b", 700, 2))
	releaseMapped() // as a server does between commands
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	if got := summarize(old, "a"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the replaced snapshot reads differently: %v, was %v", got.gen, want.gen)
	}
	cur, err := openSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if cur == old || cur.gen != 2 || cur.n != 700 {
		t.Fatalf("the new snapshot was not mapped: gen %d, %d commits", cur.gen, cur.n)
	}
	if got := summarize(cur, "b"); got.found[699] != 699 || got.files[4] != "b1.json" {
		t.Fatalf("the new snapshot reads wrong: %v", got.files[:5])
	}
	runtime.KeepAlive(old)
}

// TestSnapshotCorruptFile: a snapshot that fails its checksum, is cut
// short or is not one is refused as corrupt (and re-derived by the
// index), whether it replaced a good one or not.
func TestSnapshotCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snapshot")
	good := testSnapshot("a", 50, 1)
	publish(t, path, good)
	if _, err := openSnapshot(path); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"flipped": func() []byte { d := append([]byte(nil), good...); d[len(d)/2] ^= 1; return d }(),
		"short":   good[:len(good)-7],
		"header":  good[:snapHeaderSize-1],
		"empty":   nil,
		"other":   []byte("AIWGIX01 not a snapshot of this format at all, but long enough to hold a header of one........................"),
	} {
		publish(t, path, data)
		if _, err := openSnapshot(path); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: open = %v, want corrupt", name, err)
		}
		ix := &Index{dir: filepath.Dir(path)}
		if err := ix.Verify(); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: Verify = %v, want corrupt", name, err)
		}
	}
}

// FuzzSnapshotHeader: no header, whatever its offsets and counts, makes a
// snapshot whose sections reach past its end, checksum right or wrong.
func FuzzSnapshotHeader(f *testing.F) {
	f.Add(testSnapshot("a", 3, 1))
	f.Add(testSnapshot("b", 0, 7))
	f.Add([]byte(snapMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := parseSnapshot(data); err == nil {
			checkSections(t, s, len(data))
		}
		if len(data) >= 12 && string(data[:8]) == snapMagic {
			fixed := append([]byte(nil), data...)
			binary.LittleEndian.PutUint32(fixed[8:], crc32.ChecksumIEEE(fixed[12:]))
			if s, err := parseSnapshot(fixed); err == nil {
				checkSections(t, s, len(fixed))
			}
		}
	})
}

func checkSections(t *testing.T, s *snapshot, size int) {
	for _, end := range []int{s.commits + s.n*commitSize, s.hashidx + s.n*hashIdxSize, s.dict + s.nkeys*dictSize, s.mut + s.nmut*8,
		s.extra, s.fwd, s.strs, s.posts} {
		if end < 0 || end > size {
			t.Fatalf("a section ends at %d of %d bytes", end, size)
		}
	}
}
