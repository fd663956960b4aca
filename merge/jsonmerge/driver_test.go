package jsonmerge

import (
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

func TestRecordRoundTrip(t *testing.T) {
	recs := []Record{
		{File: "plan.json", Strategy: MergeObjects, Keys: []Conflict{
			{Path: verbiage.MustParsePath("risk.level"), Base: "low", Ours: "high", Theirs: "medium", Reason: "both changed"},
			{Path: verbiage.MustParsePath(`a\.b.0`), BaseMissing: true, Ours: nil, Theirs: map[string]any{"x": true}},
			{Path: verbiage.Path{}, Base: map[string]any{}, OursMissing: true, Theirs: []any{"x"}},
		}},
		{File: "notes.txt", Reason: "not a JSON document", BaseID: "aa", OursID: "bb"},
	}
	for _, r := range recs {
		data, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRecord(data)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		again, _ := back.Encode()
		if string(again) != string(data) {
			t.Fatalf("round trip:\n%s\n%s", data, again)
		}
		if len(back.Keys) != len(r.Keys) || back.File != r.File || back.Reason != r.Reason || back.OursID != r.OursID {
			t.Fatalf("decoded %+v from %s", back, data)
		}
	}
	if strings.Contains(string(mustEncode(t, recs[0])), "<<<<<<<") {
		t.Fatal("markers in a record")
	}
}

func mustEncode(t *testing.T, r Record) []byte {
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDriver(t *testing.T) {
	cases := []struct {
		name, base, ours, theirs string
		opts                     Options
		want                     string
		conflicts                int
	}{
		{"clean", `{"a":1,"b":1}`, `{"a":2,"b":1}`, `{"a":1,"b":2}`, Options{Strategy: Manual}, "{\n  \"a\": 2,\n  \"b\": 2\n}\n", 0},
		{"conflict keeps ours", `{"a":1}`, `{"a":2}`, `{"a":3}`, Options{Strategy: Manual}, "{\n  \"a\": 2\n}\n", 1},
		{"empty base is an addition on both sides", ``, `{"a":[1]}`, `{"a":[2]}`, Options{Strategy: MergeArrays}, "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n", 0},
		{"max", `{"n":1}`, `{"n":4}`, `{"n":3}`, Options{Strategy: Max}, "{\n  \"n\": 4\n}\n", 0},
		{"invalid JSON", `{"a":1}`, `{"a":`, `{"a":3}`, Options{Strategy: LastWriteWins}, `{"a":`, 1},
	}
	for _, c := range cases {
		r, rec := Driver("x.json", []byte(c.base), []byte(c.ours), []byte(c.theirs), [2]Clock{}, c.opts)
		if string(r.Data) != c.want {
			t.Errorf("%s: result %q, want %q", c.name, r.Data, c.want)
		}
		n := 0
		if rec != nil {
			n = max(len(rec.Keys), 1)
		}
		if n != c.conflicts {
			t.Errorf("%s: %d conflicts (%+v), want %d", c.name, n, rec, c.conflicts)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"file":"a.json","strategy":"conflict","keys":[{"path":"a","base":1,"ours":2,"theirs":3}]}`))
	f.Add([]byte(`{"file":"a.json","keys":[{"path":"","base_missing":true,"ours":2,"theirs_missing":true}]}`))
	f.Add([]byte(`{"file":"a.txt","reason":"x","ours_id":"ab"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRecord(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("error %v does not wrap ErrInvalidRecord", err)
			}
			return
		}
		enc, err := r.Encode()
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		back, err := DecodeRecord(enc)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v\n%s", err, enc)
		}
		again, _ := back.Encode()
		if string(again) != string(enc) {
			t.Fatalf("not stable:\n%s\n%s", enc, again)
		}
	})
}
