package store_test

import (
	"bytes"
	"testing"

	"github.com/aiwg/aiwg-state/store"
)

// FuzzReadOps: whatever the input, ReadOps returns operations or an error,
// never panics, and an operation it returns is one Apply can be given.
func FuzzReadOps(f *testing.F) {
	for _, s := range []string{
		`{"op":"set","file":"a.json","path":"x","value":1}`,
		`{"op":"incr","file":"c.json","path":"n","value":-2.5}`,
		`{"op":"set","file":"a.json","path":"k","value":"v","if_absent":true,"ttl":"15m"}`,
		`{"op":"put","file":"a.json","value":{},"ttl":"1h"}`,
		"# comment\n\n{\"op\":\"del\",\"file\":\"a.json\"}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := store.ReadOps(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(ops) == 0 {
			t.Fatal("no operations and no error")
		}
	})
}
