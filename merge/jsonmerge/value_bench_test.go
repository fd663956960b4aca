package jsonmerge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
)

// diverged builds a base of n variables and two sides that each changed
// `changed` of them, overlapping by half, so the merge has clean changes on
// both sides and clashes that last-write-wins settles by updated_at.
func diverged(n, changed int) (base, ours, theirs map[string]any) {
	variable := func(i int, value string, minute int) map[string]any {
		return map[string]any{
			"type":       "string",
			"value":      value,
			"updated_at": fmt.Sprintf("2024-11-22T10:%02d:00Z", minute),
			"meta":       map[string]any{"index": json.Number(strconv.Itoa(i)), "tags": []any{"a", "b"}},
		}
	}
	base, ours, theirs = map[string]any{}, map[string]any{}, map[string]any{}
	for i := range n {
		k := fmt.Sprintf("var-%05d", i)
		base[k] = variable(i, "v0", 0)
		ours[k], theirs[k] = base[k], base[k]
	}
	for i := range changed {
		ok := fmt.Sprintf("var-%05d", i)
		tk := fmt.Sprintf("var-%05d", i+changed/2)
		ours[ok] = variable(i, "ours", 1)
		theirs[tk] = variable(i+changed/2, "theirs", 2)
	}
	return
}

func BenchmarkValues(b *testing.B) {
	base, ours, theirs := diverged(10000, 1000)
	doc := func(m map[string]any) any { return map[string]any{"variables": m} }
	bs, os, ts := Side{Value: doc(base)}, Side{Value: doc(ours), Clock: Clock{Wall: 1, Agent: "a"}}, Side{Value: doc(theirs), Clock: Clock{Wall: 2, Agent: "b"}}
	for _, s := range []Strategy{LastWriteWins, MergeObjects, Manual} {
		b.Run(string(s), func(b *testing.B) {
			opts := Options{Strategy: s}
			b.ReportAllocs()
			for b.Loop() {
				Values(bs, os, ts, opts)
			}
		})
	}
	b.Run("events-merge-arrays", func(b *testing.B) {
		// One append-only log of 10,000 events, 1,000 appended per side.
		var be, oe, te []any
		for i := range 10000 {
			be = append(be, map[string]any{"ID": fmt.Sprintf("e%d", i), "SEEN": false})
		}
		oe, te = append([]any(nil), be...), append([]any(nil), be...)
		for i := range 1000 {
			oe = append(oe, map[string]any{"ID": fmt.Sprintf("o%d", i), "CREATED-AT": fmt.Sprintf("2024-11-22T10:00:%02dZ", i%60)})
			te = append(te, map[string]any{"ID": fmt.Sprintf("t%d", i), "CREATED-AT": fmt.Sprintf("2024-11-22T10:00:%02dZ", (i+30)%60)})
		}
		opts := Options{Strategy: MergeArrays}
		b.ReportAllocs()
		for b.Loop() {
			Values(Side{Value: be}, Side{Value: oe}, Side{Value: te, Clock: Clock{Wall: 1}}, opts)
		}
	})
}

func TestBenchmarkDocuments(t *testing.T) {
	// The benchmark measures what it claims: 1,000 changed keys per side,
	// 500 of them clashing, settled without conflicts by last-write-wins.
	base, ours, theirs := diverged(10000, 1000)
	got, _, cs := Values(Side{Value: base}, Side{Value: ours}, Side{Value: theirs}, Options{Strategy: LastWriteWins})
	if len(cs) != 0 {
		t.Fatalf("%d conflicts", len(cs))
	}
	counts := map[string]int{}
	for _, v := range got.(map[string]any) {
		counts[v.(map[string]any)["value"].(string)]++
	}
	if counts["ours"] != 500 || counts["theirs"] != 1000 || counts["v0"] != 8500 {
		t.Errorf("values %v, want ours 500, theirs 1000 (500 won by a later updated_at), v0 8500", counts)
	}
	_, _, cs = Values(Side{Value: base}, Side{Value: ours}, Side{Value: theirs}, Options{Strategy: Manual})
	if len(cs) != 1000 { // value and updated_at of 500 variables
		t.Errorf("%d conflicts under conflict, want 1000", len(cs))
	}
}
