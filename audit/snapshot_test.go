package audit

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestSnapshotBlobs: the files' blobs a commit records survive the
// snapshot and a fold into the next one; a commit indexed before blobs
// were kept reads as unknown (the trees answer), and a snapshot of the
// format without them still loads.
func TestSnapshotBlobs(t *testing.T) {
	blob := plumbing.NewHash("5555555555555555555555555555555555555555")
	cs := []*commit{
		{hash: plumbing.NewHash("1111111111111111111111111111111111111111"), time: 1,
			files: []string{"a.json", "b.json"}, blobs: []plumbing.Hash{blob, plumbing.ZeroHash},
			exact: []string{keyOf("a.json", nil)}},
		{hash: plumbing.NewHash("2222222222222222222222222222222222222222"), parents: []int32{0}, depth: 1, time: 2,
			files: []string{"a.json"}, exact: []string{keyOf("a.json", nil)}, deep: []string{keyOf("a.json", nil)}},
	}
	build := func(cs []*commit) *snapshot {
		b := newSnapBuilder(len(cs))
		for _, c := range cs {
			b.add(c)
		}
		s, err := parseSnapshot(b.finish(1))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(when string, s *snapshot) {
		t.Helper()
		if got := s.blobs(0); !slices.Equal(got, cs[0].blobs) {
			t.Fatalf("%s: blobs of the first commit %v, want %v", when, got, cs[0].blobs)
		}
		if got := s.blobs(1); got != nil {
			t.Fatalf("%s: a commit without blobs reads %v", when, got)
		}
		for n, c := range cs {
			files, exact, deep := s.forward(int32(n))
			if !slices.Equal(files, c.files) || !slices.Equal(exact, c.exact) || len(deep) != len(c.deep) {
				t.Fatalf("%s: forward(%d) = %v %v %v", when, n, files, exact, deep)
			}
		}
	}
	s := build(cs)
	check("built", s)
	var again []*commit
	s.each(func(c *commit) {
		cp := *c
		again = append(again, &cp)
	})
	check("folded", build(again))

	// The format before blobs: version 2, no blob in any commit.
	b := newSnapBuilder(1)
	b.add(cs[1])
	data := b.finish(1)
	binary.LittleEndian.PutUint32(data[12:], 2)
	binary.LittleEndian.PutUint32(data[8:], crc32.ChecksumIEEE(data[12:]))
	old, err := parseSnapshot(data)
	if err != nil {
		t.Fatalf("a version 2 snapshot: %v", err)
	}
	if old.blobs(0) != nil {
		t.Fatal("a version 2 snapshot has blobs")
	}
}
