package jsonmerge

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMerge merges three arbitrary JSON documents under the strategy setup
// the mode selects (see fuzzOptions) and checks the properties of
// checkMerge plus the identities of merging with the base or with itself.
func FuzzMerge(f *testing.F) {
	f.Add([]byte(`{"a": 1}`), []byte(`{"a": 2}`), []byte(`{"a": 3}`), uint16(0))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte, mode uint16) {
		b, ok1 := fuzzDecode(base)
		o, ok2 := fuzzDecode(ours)
		th, ok3 := fuzzDecode(theirs)
		if !ok1 || !ok2 || !ok3 {
			return
		}
		opts := fuzzOptions(mode)
		clocks := []Clock{{Wall: 10, Agent: "a"}, {Wall: 20, Agent: "b"}, {Wall: 10, Agent: "a"}, {Wall: 10, Logical: 1, Agent: "a"}}
		bs := Side{Value: b, Missing: mode&(1<<12) != 0}
		os := Side{Value: o, Clock: clocks[(mode>>8)&3], Missing: mode&(1<<13) != 0}
		ts := Side{Value: th, Clock: clocks[(mode>>10)&3], Missing: mode&(1<<14) != 0}
		checkMerge(t, bs, os, ts, opts)
		pairs := [][2]Side{{bs, ts}, {ts, bs}, {ts, ts}}
		if usesSum(opts) {
			pairs = pairs[:2] // the same change twice is counted twice
		}
		for _, pair := range pairs {
			got, missing, cs := Values(bs, pair[0], pair[1], opts)
			if missing != ts.Missing || len(cs) != 0 || (!missing && !equal(got, th)) {
				t.Fatalf("Values(b, %s, %s) = %s missing=%v conflicts=%v; want the other side",
					canonSide(pair[0]), canonSide(pair[1]), canon(got), missing, cs)
			}
		}
	})
}

// fuzzOptions reads a strategy setup from mode: bits 0-2 the strategy and
// 3-5 the fallback (bit 15 shifts both, so that every strategy, "" and
// "bogus" are reached in each), 6-7 the key overrides. Bits 8-11 pick the
// clocks, 12-14 delete whole sides.
func fuzzOptions(mode uint16) Options {
	all := append(Strategies(), "", "bogus")
	shift := int(mode>>15) * 8
	o := Options{Strategy: all[(int(mode&7)+shift)%len(all)], Fallback: all[(int(mode>>3&7)+1+shift)%len(all)]}
	switch mode >> 6 & 3 {
	case 1:
		o.Keys = map[string]Strategy{"EVENTS": MergeArrays, "SEEN": Max, "LAST-SEEN-IDX": Max}
	case 2:
		o.Keys = map[string]Strategy{"a": LastWriteWins, "b": Manual, "c": HigherPriorityWins}
	case 3:
		o.Keys = map[string]Strategy{"a": MergeArrays, "b": FirstWriteWins, "c": Max, "n": Sum}
	}
	return o
}

func fuzzDecode(data []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return nil, false
	}
	return v, true
}
