package jsondiff

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/verbiage"
)

// summary renders a change compactly for table tests.
func summary(c Change) string {
	switch c.Kind {
	case Added:
		return "added " + c.Path.String() + " = " + canonical(c.New)
	case Removed:
		return "removed " + c.Path.String() + " = " + canonical(c.Old)
	case Moved:
		return "moved " + c.From.String() + " → " + c.Path.String()
	default:
		return "changed " + c.Path.String() + ": " + canonical(c.Old) + " → " + canonical(c.New)
	}
}

func summaries(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, summary(c))
	}
	return out
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []string
	}{
		{"equal", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, nil},
		{"scalar changed", `{"risk":{"level":"low"}}`, `{"risk":{"level":"high"}}`,
			[]string{`changed risk.level: "low" → "high"`}},
		{"number literal is the value", `{"n":1.0}`, `{"n":1}`, []string{`changed n: 1.0 → 1`}},
		{"key added and removed", `{"owner":"alice","a":1}`, `{"a":1,"b":true}`,
			[]string{`added b = true`, `removed owner = "alice"`}},
		{"type change is one change", `{"a":{"x":1}}`, `{"a":[1]}`, []string{`changed a: {"x":1} → [1]`}},
		{"null to value is a change", `{"a":null}`, `{"a":0}`, []string{`changed a: null → 0`}},
		{"nested objects in path order", `{"b":{"y":1,"x":1},"a":{"z":1}}`, `{"b":{"y":2,"x":2},"a":{"z":2}}`,
			[]string{`changed a.z: 1 → 2`, `changed b.x: 1 → 2`, `changed b.y: 1 → 2`}},
		{"insert in the middle is one add", `{"l":["a","b","c","d"]}`, `{"l":["a","b","X","c","d"]}`,
			[]string{`added l.2 = "X"`}},
		{"delete in the middle is one remove", `{"l":["a","b","c","d"]}`, `{"l":["a","c","d"]}`,
			[]string{`removed l.1 = "b"`}},
		{"edit in place pairs up", `{"l":[1,2,3]}`, `{"l":[1,5,3]}`, []string{`changed l.1: 2 → 5`}},
		{"object element without id edited in place", `{"l":[{"a":1,"b":2},{"a":3}]}`, `{"l":[{"a":1,"b":9},{"a":3}]}`,
			[]string{`changed l.0.b: 2 → 9`}},
		{"reorder is a move", `{"l":["a","b","c","d"]}`, `{"l":["d","a","b","c"]}`,
			[]string{`moved l.3 → l.0`}},
		{"records matched by id", `{"tasks":[{"id":"t1","s":"todo"},{"id":"t2","s":"todo"}]}`,
			`{"tasks":[{"id":"t0","s":"new"},{"id":"t1","s":"todo"},{"id":"t2","s":"done"}]}`,
			[]string{`added tasks.0 = {"id":"t0","s":"new"}`, `changed tasks.2.s: "todo" → "done"`}},
		{"records with different ids are not paired", `{"t":[{"id":1,"v":"a"}]}`, `{"t":[{"id":2,"v":"a"}]}`,
			[]string{`removed t.0 = {"id":1,"v":"a"}`, `added t.0 = {"id":2,"v":"a"}`}},
		{"record moved and edited", `{"t":[{"ID":"a","n":1},{"ID":"b","n":1},{"ID":"c","n":1}]}`,
			`{"t":[{"ID":"c","n":2},{"ID":"a","n":1},{"ID":"b","n":1}]}`,
			[]string{`moved t.2 → t.0`, `changed t.0.n: 1 → 2`}},
		{"unique *_id chosen over a shared parent_id", `{"t":[{"parent_id":"p","task_id":"a","n":1},{"parent_id":"p","task_id":"b","n":1}]}`,
			`{"t":[{"parent_id":"p","task_id":"b","n":2},{"parent_id":"p","task_id":"a","n":1}]}`,
			[]string{`changed t.0.n: 1 → 2`, `moved t.0 → t.1`}},
		{"subtree moved between keys", `{"a":{"b":{"x":1,"y":[2]}},"c":{}}`, `{"a":{},"c":{"d":{"x":1,"y":[2]}}}`,
			[]string{`moved a.b → c.d`}},
		{"string renamed key", `{"owner":"alice"}`, `{"assignee":"alice"}`, []string{`moved owner → assignee`}},
		{"equal numbers elsewhere are not a move", `{"a":1,"f":true}`, `{"b":1,"g":true}`,
			[]string{`removed a = 1`, `added b = 1`, `removed f = true`, `added g = true`}},
		{"array element moved to another array", `{"a":[{"k":1},{"k":2}],"b":[]}`, `{"a":[{"k":2}],"b":[{"k":1}]}`,
			[]string{`moved a.0 → b.0`}},
		{"keys with separators", `{"a/b":{"~":1,"x.y":2}}`, `{"a/b":{"~":2,"x.y":3}}`,
			[]string{`changed a\/b.x\.y: 2 → 3`, `changed a\/b.~: 1 → 2`}},
		{"root type change", `{"a":1}`, `[1]`, []string{`changed : {"a":1} → [1]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summaries(Diff(testutil.DecodeJSON(t, []byte(tt.old)), testutil.DecodeJSON(t, []byte(tt.new)), Options{}))
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Diff\n got: %q\nwant: %q", got, want)
			}
		})
	}
}

func TestDiffMissingAndPrefix(t *testing.T) {
	doc := testutil.DecodeJSON(t, []byte(`{"a":{"x":1,"y":2},"b":[{"id":1,"v":"p"},{"id":2,"v":"q"}],"c":"s"}`))
	doc2 := testutil.DecodeJSON(t, []byte(`{"a":{"x":1,"y":3},"b":[{"id":1,"v":"p"},{"id":2,"v":"r"}],"d":{"n":1}}`))
	tests := []struct {
		name     string
		old, new any
		opts     Options
		want     []string
	}{
		{"file created", nil, doc, Options{OldMissing: true}, []string{"added  = " + canonical(doc)}},
		{"file deleted", doc, nil, Options{NewMissing: true}, []string{"removed  = " + canonical(doc)}},
		{"created null is not missing", nil, doc, Options{}, []string{"changed : null → " + canonical(doc)}},
		{"both missing", nil, nil, Options{OldMissing: true, NewMissing: true}, []string{}},
		{"prefix", doc, doc2, Options{Prefix: verbiage.MustParsePath("a")}, []string{"changed a.y: 2 → 3"}},
		{"prefix into array", doc, doc2, Options{Prefix: verbiage.MustParsePath("b.1.v")}, []string{`changed b.1.v: "q" → "r"`}},
		{"prefix gone on new side", doc, doc2, Options{Prefix: verbiage.MustParsePath("c")}, []string{`removed c = "s"`}},
		{"prefix new on new side", doc, doc2, Options{Prefix: verbiage.MustParsePath("d.n")}, []string{`added d.n = 1`}},
		{"prefix absent on both", doc, doc2, Options{Prefix: verbiage.MustParsePath("zz")}, []string{}},
		{"prefix through a scalar", doc, doc2, Options{Prefix: verbiage.MustParsePath("a.x.deeper")}, []string{}},
		{"prefix in created file", nil, doc2, Options{OldMissing: true, Prefix: verbiage.MustParsePath("a.y")}, []string{`added a.y = 3`}},
		{"wildcard prefix", doc, doc2, Options{Prefix: verbiage.MustParsePath("*.y")}, []string{"changed a.y: 2 → 3"}},
		{"wildcard over array", doc, doc2, Options{Prefix: verbiage.MustParsePath("b.*.v")}, []string{`changed b.1.v: "q" → "r"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summaries(Diff(tt.old, tt.new, tt.opts))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff\n got: %q\nwant: %q", got, tt.want)
			}
		})
	}
}

func TestDiffAcceptsPlainDecodedValues(t *testing.T) {
	// Callers that decoded without UseNumber (float64) or built values by
	// hand must get the same answer.
	var plainOld, plainNew any
	if err := json.Unmarshal([]byte(`{"n":1.5,"l":[1,2]}`), &plainOld); err != nil {
		t.Fatal(err)
	}
	plainNew = map[string]any{"n": 2, "l": []int{1, 2, 3}, "m": map[string]string{"k": "v"}}
	got := summaries(Diff(plainOld, plainNew, Options{}))
	want := []string{`added l.2 = 3`, `added m = {"k":"v"}`, `changed n: 1.5 → 2`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestChangeMarshalJSON(t *testing.T) {
	changes := Diff(
		testutil.DecodeJSON(t, []byte(`{"a/b":{"~k":"x"},"gone":null,"m":{"deep":[1,2]}}`)),
		testutil.DecodeJSON(t, []byte(`{"a/b":{"~k":"y"},"new":null,"n":{"deep":[1,2]}}`)),
		Options{})
	got, err := json.Marshal(changes)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"kind":"changed","path":"a\\/b.~k","pointer":"/a~1b/~0k","old":"x","new":"y"},` +
		`{"kind":"removed","path":"gone","pointer":"/gone","old":null},` +
		`{"kind":"moved","path":"n","pointer":"/n","from":"m","from_pointer":"/m","old":{"deep":[1,2]},"new":{"deep":[1,2]}},` +
		`{"kind":"added","path":"new","pointer":"/new","new":null}]`
	if string(got) != want {
		t.Errorf("json\n got: %s\nwant: %s", got, want)
	}
}

func TestAlignIdentityKey(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"id", `[{"id":1},{"id":2}]`, `[{"id":3}]`, "id"},
		{"ID", `[{"ID":"a"}]`, `[{"ID":"b"}]`, "ID"},
		{"suffix", `[{"task_id":"a","x_id":1},{"task_id":"b","x_id":1}]`, `[]`, "task_id"},
		{"missing on one element", `[{"id":1},{"name":"x"}]`, `[]`, ""},
		{"duplicate", `[{"id":1},{"id":1}]`, `[]`, ""},
		{"not scalar", `[{"id":[1]}]`, `[]`, ""},
		{"no objects", `[1,2]`, `[3]`, ""},
		{"non-objects ignored", `[{"id":1},"loose"]`, `[{"id":2}]`, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testutil.DecodeJSON(t, []byte(tt.old)).([]any)
			n := testutil.DecodeJSON(t, []byte(tt.new)).([]any)
			if got := identityKey(o, n); got != tt.want {
				t.Errorf("identityKey = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAlignLargeArrayInsertion(t *testing.T) {
	// One insertion in a long list stays one insertion, even when the list
	// repeats its values (50 distinct numbers over 5,000 elements).
	var old, new []any
	for i := range 5000 {
		old = append(old, json.Number(strconv.Itoa(i%50)))
	}
	new = append(new, old[:2500]...)
	new = append(new, "inserted")
	new = append(new, old[2500:]...)
	got := summaries(Diff(map[string]any{"l": old}, map[string]any{"l": new}, Options{}))
	if want := []string{`added l.2500 = "inserted"`}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNoChangesMarshalAsEmptyArrays(t *testing.T) {
	doc := map[string]any{"a": []any{"x"}}
	for name, v := range map[string]any{"Diff": Diff(doc, doc, Options{}), "Patch": Patch(doc, doc)} {
		if b, err := json.Marshal(v); err != nil || string(b) != "[]" {
			t.Errorf("%s of equal documents marshals as %s (%v), want []", name, b, err)
		}
	}
}
