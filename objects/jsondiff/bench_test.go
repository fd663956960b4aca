package jsondiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"testing"
)

// benchDocs builds two documents of about 1,000 keys (each a small record)
// that differ in 10 of them: edits, an added and a removed key, an array
// insertion.
func benchDocs() (old, new map[string]any) {
	old = make(map[string]any, 1000)
	new = make(map[string]any, 1000)
	for i := range 1000 {
		k := fmt.Sprintf("key%04d", i)
		rec := func() map[string]any {
			return map[string]any{
				"title":   "record " + strconv.Itoa(i),
				"count":   json.Number(strconv.Itoa(i)),
				"enabled": i%2 == 0,
				"tags":    []any{"a", "b", "c"},
			}
		}
		old[k], new[k] = rec(), rec()
	}
	for i := 0; i < 100; i += 12 { // 9 edits of different kinds
		r := new[fmt.Sprintf("key%04d", i)].(map[string]any)
		switch i % 3 {
		case 0:
			r["title"] = "renamed"
		case 1:
			r["tags"] = []any{"a", "x", "b", "c"}
		default:
			r["count"] = json.Number("-1")
		}
	}
	delete(new, "key0500")
	new["key1000"] = map[string]any{"title": "new"}
	return old, new
}

func BenchmarkDiff(b *testing.B) {
	old, new := benchDocs()
	b.ReportAllocs()
	for b.Loop() {
		if len(Diff(old, new, Options{})) == 0 {
			b.Fatal("no changes")
		}
	}
}

func BenchmarkPatch(b *testing.B) {
	old, new := benchDocs()
	b.ReportAllocs()
	for b.Loop() {
		if len(Patch(old, new)) == 0 {
			b.Fatal("no ops")
		}
	}
}

func BenchmarkWriteText(b *testing.B) {
	old, new := benchDocs()
	changes := Diff(old, new, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteText(io.Discard, "f.json", changes, TextOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffArrays measures the alignment on a long list: one with a few
// edits, and the worst case of two lists with nothing in common.
func BenchmarkDiffArrays(b *testing.B) {
	var old, edited, disjoint []any
	for i := range 5000 {
		old = append(old, map[string]any{"id": json.Number(strconv.Itoa(i)), "v": "x"})
		disjoint = append(disjoint, "other"+strconv.Itoa(i))
	}
	edited = append(edited, old[:100]...)
	edited = append(edited, "new")
	edited = append(edited, old[101:4000]...)
	edited = append(edited, old[4100:]...)
	for name, new := range map[string][]any{"edited": edited, "disjoint": disjoint} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Diff(map[string]any{"l": old}, map[string]any{"l": new}, Options{})
			}
		})
	}
}
