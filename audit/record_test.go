package audit

import (
	"bytes"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func sampleRecords() []*record {
	return []*record{
		{hash: plumbing.NewHash("1111111111111111111111111111111111111111"), time: 1700000000, mutID: "mut-0123abcd",
			files: []string{"a.json"}, keys: []string{keyOf("a.json", nil)}, deep: []string{keyOf("a.json", nil)}},
		{hash: plumbing.NewHash("2222222222222222222222222222222222222222"), parents: []plumbing.Hash{plumbing.NewHash("1111111111111111111111111111111111111111")},
			time: -5, files: []string{"a.json", "b.txt"}, keys: []string{keyOf("a.json", nil) + "\x01x"},
			blobs: []plumbing.Hash{plumbing.NewHash("3333333333333333333333333333333333333333"), plumbing.ZeroHash}},
	}
}

// TestTornLogRecords: a record cut short by a crash or overwritten with
// garbage is skipped, and the records after it are still read.
func TestTornLogRecords(t *testing.T) {
	recs := sampleRecords()
	var whole []byte
	for _, r := range recs {
		whole = r.appendFrame(whole)
	}
	first := recs[0].appendFrame(nil)
	cases := map[string][]byte{
		"whole":          whole,
		"torn tail":      whole[:len(whole)-3],
		"torn middle":    append(append([]byte{}, first[:len(first)-5]...), recs[1].appendFrame(nil)...),
		"garbage before": append([]byte("\xa1WG garbage"), whole...),
		"flipped byte": func() []byte {
			b := bytes.Clone(whole)
			b[frameHeader+3] ^= 0xff
			return b
		}(),
	}
	want := map[string]int{"whole": 2, "torn tail": 1, "torn middle": 1, "garbage before": 2, "flipped byte": 1}
	for name, data := range cases {
		got := readFrames(data)
		if len(got) != want[name] {
			t.Errorf("%s: %d records, want %d", name, len(got), want[name])
		}
		for _, r := range got {
			if r.hash != recs[0].hash && r.hash != recs[1].hash {
				t.Errorf("%s: a record that was never written: %v", name, r.hash)
			}
		}
	}
	back := readFrames(whole)
	if back[1].time != -5 || back[0].mutID != "mut-0123abcd" || len(back[1].files) != 2 || back[1].parents[0] != recs[0].hash {
		t.Fatalf("round trip: %+v", back[1])
	}
	// A record without blobs (the format before them) reads as one whose
	// blobs are unknown; one with them gets them back in files' order.
	if back[0].blobs != nil || len(back[1].blobs) != 2 || back[1].blobs[0] != recs[1].blobs[0] || !back[1].blobs[1].IsZero() {
		t.Fatalf("blobs round trip: %v, %v", back[0].blobs, back[1].blobs)
	}
}

func FuzzReadFrames(f *testing.F) {
	var whole []byte
	for _, r := range sampleRecords() {
		whole = r.appendFrame(whole)
	}
	f.Add(whole)
	f.Add(whole[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range readFrames(data) {
			// Whatever was read re-encodes to a frame that reads back the same.
			again := readFrames(r.appendFrame(nil))
			if len(again) != 1 || again[0].hash != r.hash || len(again[0].keys) != len(r.keys) || !slices.Equal(again[0].blobs, r.blobs) {
				t.Fatalf("record does not round-trip")
			}
		}
	})
}
