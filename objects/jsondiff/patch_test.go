package jsondiff

import (
	"encoding/json"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"equal", `{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2}]}`, `[]`},
		{"replace scalar", `{"a":{"b":1}}`, `{"a":{"b":2}}`, `[{"op":"replace","path":"/a/b","value":2}]`},
		{"add null keeps its value", `{}`, `{"a":null}`, `[{"op":"add","path":"/a","value":null}]`},
		{"replace with null", `{"a":1}`, `{"a":null}`, `[{"op":"replace","path":"/a","value":null}]`},
		{"remove", `{"a":1,"b":2}`, `{"b":2}`, `[{"op":"remove","path":"/a"}]`},
		{"escaped pointer", `{"a/b":{"~":1}}`, `{"a/b":{"~":2}}`, `[{"op":"replace","path":"/a~1b/~0","value":2}]`},
		{"empty key", `{"":{"":1}}`, `{"":{"":2}}`, `[{"op":"replace","path":"//","value":2}]`},
		{"root type change", `{"a":1}`, `[1]`, `[{"op":"replace","path":"","value":[1]}]`},
		{"insert in the middle", `{"l":["a","b","c"]}`, `{"l":["a","X","b","c"]}`,
			`[{"op":"add","path":"/l/1","value":"X"}]`},
		{"removals from the highest index down", `{"l":["a","b","c","d"]}`, `{"l":["a","d"]}`,
			`[{"op":"remove","path":"/l/2"},{"op":"remove","path":"/l/1"}]`},
		{"edit in place", `{"l":[1,2,3]}`, `{"l":[1,5,3]}`, `[{"op":"replace","path":"/l/1","value":5}]`},
		{"move back", `{"l":["a","b","c","d"]}`, `{"l":["d","a","b","c"]}`,
			`[{"op":"move","from":"/l/3","path":"/l/0"}]`},
		{"move forward", `{"l":["a","b","c","d"]}`, `{"l":["b","c","d","a"]}`,
			`[{"op":"move","from":"/l/0","path":"/l/3"}]`},
		{"records by id", `{"t":[{"id":"t1","s":"todo"},{"id":"t2","s":"todo"}]}`,
			`{"t":[{"id":"t0","s":"new"},{"id":"t1","s":"todo"},{"id":"t2","s":"done"}]}`,
			`[{"op":"add","path":"/t/0","value":{"id":"t0","s":"new"}},{"op":"replace","path":"/t/2/s","value":"done"}]`},
		{"record moved and edited", `{"t":[{"ID":"a","n":1},{"ID":"b","n":1},{"ID":"c","n":1}]}`,
			`{"t":[{"ID":"c","n":2},{"ID":"a","n":1},{"ID":"b","n":1}]}`,
			`[{"op":"move","from":"/t/2","path":"/t/0"},{"op":"replace","path":"/t/0/n","value":2}]`},
		{"move between object members", `{"a":{"b":{"x":1}},"c":{}}`, `{"a":{},"c":{"d":{"x":1}}}`,
			`[{"op":"move","from":"/a/b","path":"/c/d"}]`},
		{"no move across arrays", `{"a":[{"k":1},{"k":2}],"b":[]}`, `{"a":[{"k":2}],"b":[{"k":1}]}`,
			`[{"op":"remove","path":"/a/0"},{"op":"add","path":"/b/0","value":{"k":1}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := testutil.DecodeJSON(t, []byte(tt.old)), testutil.DecodeJSON(t, []byte(tt.new))
			got, err := json.Marshal(Patch(old, new))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Patch\n got: %s\nwant: %s", got, tt.want)
			}
			checkPatch(t, old, new)
		})
	}
}
