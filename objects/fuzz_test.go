package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Seeds shared by the fuzzers; the checked-in corpora under testdata/fuzz
// hold more, including inputs earlier runs found interesting.
var fuzzDocs = []string{
	sample,
	`{}`, `[]`, `null`, `0`, `-0.0e-0`, `"s"`, `12345678901234567890`,
	`{"a":{"b":[1,{"c":"x"}]},"dot.key":{"#":1,"@x":2}}`,
	`{"a":1,"a":2}`,
	`{"\u00e9":"\ud83d\ude00","\n":"\u0000","\"":"\\"}`,
	"{\n  \"a\": [\n    1\n  ],\n  \"b\": \"<&>\"\n}\n",
	"\"\xff\"", `"\ud800"`, `[1,]`, `{"a" 1}`, "[1] [2]",
}

// nestsDeeply keeps the fuzzers fast: canonical output grows with the square
// of the nesting depth (20 KB of '[' encode to 200 MB), so deep inputs spend
// the fuzzing time in memmove. TestDecodeAcceptsDeepNestingUpToTheLimit
// covers depth.
func nestsDeeply(data []byte) bool {
	return bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > 200
}

func stdDecode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func FuzzCanonical(f *testing.F) {
	for _, s := range fuzzDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if nestsDeeply(data) {
			return
		}
		out, err := Canonical(data)
		v, derr := Decode(data)
		if (err == nil) != (derr == nil) {
			t.Fatalf("Canonical error %v but Decode error %v", err, derr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("error %v does not wrap ErrInvalidJSON", err)
			}
			// We are stricter than encoding/json only where it would lose
			// or alter data.
			if json.Valid(data) {
				msg := err.Error()
				if !strings.Contains(msg, "duplicate object key") && !strings.Contains(msg, "UTF-8") {
					t.Fatalf("encoding/json accepts %q but Decode refused: %v", data, err)
				}
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted %q, which encoding/json refuses", data)
		}
		if !json.Valid(out) {
			t.Fatalf("Canonical output is not valid JSON: %q", out)
		}
		if !isCanonical(out) {
			t.Fatalf("Canonical output not recognized as canonical: %q", out)
		}
		again, err := Canonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Canonical not idempotent:\n%q\n%q (%v)", out, again, err)
		}
		if isCanonical(data) && !bytes.Equal(out, data) {
			t.Fatalf("fast path accepted %q but it encodes as %q", data, out)
		}
		if enc, err := Encode(v); err != nil || !bytes.Equal(enc, out) {
			t.Fatalf("Encode(Decode(x)) = %q, %v; Canonical(x) = %q", enc, err, out)
		}
		// Decode accepted, so the input has no duplicate keys and both
		// codecs must read the same value from input and output.
		stdIn, err := stdDecode(data)
		if err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		stdOut, err := stdDecode(out)
		if err != nil {
			t.Fatalf("encoding/json on output: %v", err)
		}
		if !reflect.DeepEqual(stdIn, stdOut) {
			t.Fatalf("content changed:\nin  %#v\nout %#v", stdIn, stdOut)
		}
		if !reflect.DeepEqual(v, stdIn) {
			t.Fatalf("Decode = %#v, encoding/json = %#v", v, stdIn)
		}
		if w, err := Decode(out); err != nil || !Equal(v, w) {
			t.Fatalf("Decode(Canonical(x)) differs: %v", err)
		}
	})
}

// resolveAppends replaces each "-" that appended to an array with the index
// of the element it created, so the path can be read back.
func resolveAppends(doc any, p verbiage.Path) verbiage.Path {
	out := make(verbiage.Path, len(p))
	cur := doc
	for i, seg := range p {
		out[i] = seg
		switch x := cur.(type) {
		case map[string]any:
			cur = x[seg.Key]
		case []any:
			n, ok := seg.Index()
			if seg.Append() {
				n, ok = len(x)-1, true
				out[i] = verbiage.Segment{Key: strconv.Itoa(n)}
			}
			if !ok || n >= len(x) {
				return out
			}
			cur = x[n]
		}
	}
	return out
}

func FuzzSetGet(f *testing.F) {
	for _, s := range fuzzDocs {
		f.Add([]byte(s), "a.b.1.c", []byte(`{"new":[1]}`))
	}
	f.Add([]byte(sample), "a.b.-", []byte(`7`))
	f.Add([]byte(sample), "a.b.3", []byte(`7`))
	f.Add([]byte(sample), "a.s.x", []byte(`7`))
	f.Add([]byte(sample), "", []byte(`[]`))
	f.Add([]byte(sample), `dot\.key.\*`, []byte(`"x"`))
	f.Fuzz(func(t *testing.T, docData []byte, path string, valueData []byte) {
		if nestsDeeply(docData) || nestsDeeply(valueData) {
			return
		}
		doc, err := Decode(docData)
		if err != nil {
			return
		}
		value, err := Decode(valueData)
		if err != nil {
			return
		}
		p, err := verbiage.ParsePath(path)
		if err != nil {
			return
		}
		before, err := Encode(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Set(doc, p, value)
		if after, _ := Encode(doc); !bytes.Equal(before, after) {
			t.Fatalf("Set mutated its input:\n%s\n%s", before, after)
		}
		if err != nil {
			if sentinelName(err) == "" || strings.HasPrefix(sentinelName(err), "unexpected") {
				t.Fatalf("Set error without a sentinel: %v", err)
			}
			return
		}
		rp := resolveAppends(got, p)
		v, err := Get(got, rp)
		if err != nil {
			t.Fatalf("Get(%q) after Set(%q): %v", rp.String(), p.String(), err)
		}
		if !Equal(v, value) {
			t.Fatalf("Get after Set = %#v, want %#v", v, value)
		}
		if _, err := Encode(got); err != nil {
			t.Fatalf("Set produced an unencodable document: %v", err)
		}
		// Deleting what was just set must succeed, and also leave got as is.
		if len(rp) > 0 {
			setBytes, _ := Encode(got)
			if _, err := Delete(got, rp); err != nil {
				t.Fatalf("Delete(%q) after Set: %v", rp.String(), err)
			}
			if after, _ := Encode(got); !bytes.Equal(setBytes, after) {
				t.Fatal("Delete mutated its input")
			}
		}
	})
}

func FuzzGetRaw(f *testing.F) {
	for _, s := range fuzzDocs {
		f.Add([]byte(s), "a.b.1")
	}
	for _, k := range awkwardKeys {
		doc, err := Encode(map[string]any{k: map[string]any{"x": []any{1}}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc, verbiage.Path{{Key: k}, {Key: "x"}, {Key: "0"}}.String())
	}
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		if nestsDeeply(data) {
			return
		}
		p, err := verbiage.ParsePath(path)
		if err != nil {
			return
		}
		check := func(data []byte) {
			raw, rerr := GetRaw(data, p)
			doc, derr := Decode(data)
			if derr != nil {
				if rerr == nil {
					t.Fatalf("GetRaw succeeded on data Decode refuses: %v", derr)
				}
				return
			}
			v, gerr := Get(doc, p)
			if sentinelName(rerr) != sentinelName(gerr) {
				t.Fatalf("GetRaw(%q) error %v; Get error %v", path, rerr, gerr)
			}
			if gerr != nil {
				return
			}
			want, err := Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, want) {
				t.Fatalf("GetRaw(%q) = %q; Get gives %q", path, raw, want)
			}
		}
		check(data)
		if c, err := Canonical(data); err == nil {
			check(c) // the gjson path
		}
	})
}
