package objects

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("Decode(%q): %v", s, err)
	}
	return v
}

func mustEncode(t testing.TB, v any) string {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return string(b)
}

// compact renders a value on one line so expectations stay readable.
func compact(t testing.TB, v any) string {
	t.Helper()
	s := mustEncode(t, v)
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString(strings.TrimLeft(line, " "))
	}
	return b.String()
}

const sample = `{
  "a": {"b": [10, {"c": "x"}, []], "s": "str", "n": null},
  "dot.key": {"#": 1, "@x": 2, "*": 3, "é": 4, "0": "zero", "-": "dash"},
  "list": []
}`

func TestGet(t *testing.T) {
	doc := mustDecode(t, sample)
	tests := []struct {
		path string
		want string // compact encoding, or the sentinel's name
	}{
		{"", compact(t, doc)},
		{"a.b.0", "10"},
		{"a/b/1/c", `"x"`},
		{"a.b.2", "[]"},
		{"a.n", "null"},
		{`dot\.key.#`, "1"},
		{`dot\.key.@x`, "2"},
		{`dot\.key.\*`, "3"},
		{`dot\.key.é`, "4"},
		{`dot\.key.0`, `"zero"`}, // an index-like key on an object is a key
		{`dot\.key.-`, `"dash"`},
		{"a.b.3", "ErrNotFound"},
		{"a.b.-", "ErrNotFound"},
		{"a.b.01", "ErrNotFound"},
		{"a.b.x", "ErrNotFound"},
		{"a.missing", "ErrNotFound"},
		{"list.0", "ErrNotFound"},
		{"a.s.x", "ErrNotContainer"},
		{"a.n.x", "ErrNotContainer"},
		{"a.b.0.x", "ErrNotContainer"},
		{"a.*", "ErrInvalidPath"},
	}
	for _, tt := range tests {
		got, err := Get(doc, verbiage.MustParsePath(tt.path))
		if name := sentinelName(err); name != "" || err != nil {
			if name != tt.want {
				t.Errorf("Get(%q) error %v, want %s", tt.path, err, tt.want)
			}
			continue
		}
		if c := compact(t, got); c != tt.want {
			t.Errorf("Get(%q) = %s, want %s", tt.path, c, tt.want)
		}
	}
}

func sentinelName(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNotFound):
		return "ErrNotFound"
	case errors.Is(err, ErrNotContainer):
		return "ErrNotContainer"
	case errors.Is(err, verbiage.ErrInvalidPath):
		return "ErrInvalidPath"
	case errors.Is(err, ErrInvalidJSON):
		return "ErrInvalidJSON"
	}
	return "unexpected: " + err.Error()
}

func TestErrorsNameThePath(t *testing.T) {
	doc := mustDecode(t, sample)
	_, err := Get(doc, verbiage.MustParsePath("a.s.x.y"))
	if err == nil || !strings.Contains(err.Error(), `"a.s.x.y"`) || !strings.Contains(err.Error(), `"a.s" is a string`) {
		t.Errorf("error %v does not say which path and why", err)
	}
	// A document that is itself a scalar is named as such, not as a key "".
	if _, err := Get(float64(1), verbiage.MustParsePath("k")); err == nil || !strings.Contains(err.Error(), `the document is a number`) {
		t.Errorf("error %v does not say the document is a number", err)
	}
	if _, err := Set([]any{}, verbiage.MustParsePath("k"), true); err == nil || !strings.Contains(err.Error(), `the document is an array and "k" is not an index`) {
		t.Errorf("error %v does not say the document is an array", err)
	}
	_, err = Get(doc, verbiage.MustParsePath(`dot\.key.nope`))
	if err == nil || !strings.Contains(err.Error(), `"dot\\.key.nope"`) {
		t.Errorf("error %v does not name the escaped path", err)
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		doc, path, value string
		want             string // compact result, or the sentinel's name
	}{
		{`{}`, "a", `1`, `{"a": 1}`},
		{`{"a":1}`, "a", `2`, `{"a": 2}`},
		{`{}`, "a.b.c", `true`, `{"a": {"b": {"c": true}}}`},
		{`{}`, "a.0", `1`, `{"a": {"0": 1}}`}, // created intermediates are objects
		{`{"a":{}}`, "a.-", `1`, `{"a": {"-": 1}}`},
		{`{"a":[1,2]}`, "a.0", `9`, `{"a": [9,2]}`},
		{`{"a":[1,2]}`, "a.2", `3`, `{"a": [1,2,3]}`},
		{`{"a":[1,2]}`, "a.-", `3`, `{"a": [1,2,3]}`},
		{`{"a":[1,2]}`, "a.-.b", `3`, `{"a": [1,2,{"b": 3}]}`},
		{`{"a":[{"x":1}]}`, "a.0.y", `2`, `{"a": [{"x": 1,"y": 2}]}`},
		{`{"a":[1,2]}`, "a.3", `3`, "ErrNotFound"},
		{`{"a":[1,2]}`, "a.x", `3`, "ErrNotContainer"},
		{`{"a":[1,2]}`, "a.01", `3`, "ErrNotContainer"},
		{`{"a":"s"}`, "a.b", `1`, "ErrNotContainer"},
		{`{"a":null}`, "a.b", `1`, "ErrNotContainer"},
		{`{"a":5}`, "a.0", `1`, "ErrNotContainer"},
		{`"root"`, "a", `1`, "ErrNotContainer"},
		{`{"a":1}`, "", `[1]`, `[1]`},
		{`{"a":{"b":1}}`, "a.*", `1`, "ErrInvalidPath"},
	}
	for _, tt := range tests {
		doc := mustDecode(t, tt.doc)
		before := mustEncode(t, doc)
		got, err := Set(doc, verbiage.MustParsePath(tt.path), mustDecode(t, tt.value))
		if after := mustEncode(t, doc); after != before {
			t.Errorf("Set(%s, %q) mutated its input: %q -> %q", tt.doc, tt.path, before, after)
		}
		if err != nil {
			if name := sentinelName(err); name != tt.want {
				t.Errorf("Set(%s, %q) error %v, want %s", tt.doc, tt.path, err, tt.want)
			}
			continue
		}
		if c := compact(t, got); c != tt.want {
			t.Errorf("Set(%s, %q) = %s, want %s", tt.doc, tt.path, c, tt.want)
		}
	}
}

func TestSetNilDocStartsADocument(t *testing.T) {
	got, err := Set(nil, verbiage.MustParsePath("a.b"), "v")
	if err != nil {
		t.Fatal(err)
	}
	if c := compact(t, got); c != `{"a": {"b": "v"}}` {
		t.Errorf("Set(nil) = %s", c)
	}
}

// Set shares what it does not change, so old versions stay cheap; it must
// copy every container on the way to the change.
func TestSetCopiesOnlyTheSpine(t *testing.T) {
	doc := mustDecode(t, `{"a":{"b":{"c":1}},"other":{"x":[1]}}`).(map[string]any)
	got, err := Set(doc, verbiage.MustParsePath("a.b.c"), 2)
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	if sameMap(m["other"], doc["other"]) == false {
		t.Error("unchanged sibling was copied")
	}
	if sameMap(m["a"], doc["a"]) {
		t.Error("container on the spine was shared, so the input would change")
	}
}

func sameMap(a, b any) bool {
	am, bm := a.(map[string]any), b.(map[string]any)
	am["__probe"] = true
	defer delete(am, "__probe")
	_, ok := bm["__probe"]
	return ok
}

func TestDelete(t *testing.T) {
	tests := []struct {
		doc, path string
		want      string
	}{
		{`{"a":1,"b":2}`, "a", `{"b": 2}`},
		{`{"a":{"b":1,"c":2}}`, "a.b", `{"a": {"c": 2}}`},
		{`{"a":[1,2,3]}`, "a.1", `{"a": [1,3]}`},
		{`{"a":[1,2,3]}`, "a.2", `{"a": [1,2]}`},
		{`{"a":[{"x":1}]}`, "a.0.x", `{"a": [{}]}`},
		{`{"a":[1]}`, "a.1", "ErrNotFound"},
		{`{"a":[1]}`, "a.-", "ErrNotFound"},
		{`{"a":1}`, "b", "ErrNotFound"},
		{`{"a":1}`, "a.b", "ErrNotContainer"},
		{`{"a":1}`, "", "ErrInvalidPath"},
		{`{"a":1}`, "*", "ErrInvalidPath"},
	}
	for _, tt := range tests {
		doc := mustDecode(t, tt.doc)
		before := mustEncode(t, doc)
		got, err := Delete(doc, verbiage.MustParsePath(tt.path))
		if after := mustEncode(t, doc); after != before {
			t.Errorf("Delete(%s, %q) mutated its input", tt.doc, tt.path)
		}
		if err != nil {
			if name := sentinelName(err); name != tt.want {
				t.Errorf("Delete(%s, %q) error %v, want %s", tt.doc, tt.path, err, tt.want)
			}
			continue
		}
		if c := compact(t, got); c != tt.want {
			t.Errorf("Delete(%s, %q) = %s, want %s", tt.doc, tt.path, c, tt.want)
		}
	}
}

func TestSelect(t *testing.T) {
	doc := mustDecode(t, `{"u":{"bob":{"age":3,"tags":["x"]},"al":{"age":5},"cy":"scalar"},"l":[{"v":1},{"v":2},{}]}`)
	tests := []struct {
		path string
		want string // "path=value; ..." or a sentinel name
	}{
		{"u.*.age", "u.al.age=5; u.bob.age=3"},
		{"l.*.v", "l.0.v=1; l.1.v=2"},
		{"u.*", `u.al={"age": 5}; u.bob={"age": 3,"tags": ["x"]}; u.cy="scalar"`},
		{"*.bob.tags.0", `u.bob.tags.0="x"`},
		{"u.*.missing", ""},
		{"u.cy.*", ""},
		{"u.bob.age", "u.bob.age=3"},
		{"u.nobody", "ErrNotFound"},
		{`u.\*`, "ErrNotFound"},
	}
	for _, tt := range tests {
		ms, err := Select(doc, verbiage.MustParsePath(tt.path))
		if err != nil {
			if name := sentinelName(err); name != tt.want {
				t.Errorf("Select(%q) error %v, want %s", tt.path, err, tt.want)
			}
			continue
		}
		var parts []string
		for _, m := range ms {
			parts = append(parts, m.Path.String()+"="+compact(t, m.Value))
		}
		if got := strings.Join(parts, "; "); got != tt.want {
			t.Errorf("Select(%q) = %s, want %s", tt.path, got, tt.want)
		}
	}
}

func TestLeaves(t *testing.T) {
	doc := mustDecode(t, `{"b":[1,{},[]],"a":{"y":null,"x":"s"},"c.d":{"e":true}}`)
	var parts []string
	for _, m := range Leaves(doc) {
		parts = append(parts, m.Path.String()+"="+compact(t, m.Value))
	}
	want := `a.x="s"; a.y=null; b.0=1; b.1={}; b.2=[]; c\.d.e=true`
	if got := strings.Join(parts, "; "); got != want {
		t.Errorf("Leaves = %s\nwant     %s", got, want)
	}
	if ls := Leaves(mustDecode(t, `7`)); len(ls) != 1 || len(ls[0].Path) != 0 {
		t.Errorf("Leaves of a scalar root = %v", ls)
	}
	// Paths must not share storage: callers keep and extend them.
	ls := Leaves(mustDecode(t, `{"a":{"x":1,"y":2}}`))
	if ls[0].Path.String() != "a.x" || ls[1].Path.String() != "a.y" {
		t.Errorf("leaf paths overwritten: %v, %v", ls[0].Path, ls[1].Path)
	}
}

func TestSetRefusesKeysThatCannotBeStored(t *testing.T) {
	_, err := Set(map[string]any{}, verbiage.Path{{Key: "a\xff"}}, 1)
	if !errors.Is(err, verbiage.ErrInvalidPath) {
		t.Errorf("Set with an invalid UTF-8 key: %v", err)
	}
}

func TestSetAppendCreatesAnArray(t *testing.T) {
	doc, err := Set(map[string]any{}, verbiage.MustParsePath("items.-"), json.Number("7"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Encode(doc)
	if string(got) != "{\n  \"items\": [\n    7\n  ]\n}\n" {
		t.Fatalf("got %s", got)
	}
}
