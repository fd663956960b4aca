package cache

import (
	"bytes"
	"testing"
	"time"
)

// FuzzDecode: an entry file of any content (damaged, foreign, written by
// hand) decodes or is refused; what decodes encodes back to itself.
func FuzzDecode(f *testing.F) {
	f.Add(encode(Entry{Key: "k", Set: time.Unix(1, 0).UTC(), Size: 2}, []byte("1")))
	f.Add([]byte("{\"key\":\"a\"}\n"))
	f.Add([]byte("no header"))
	f.Add([]byte("{\"key\":\"\"}\n1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, v, ok := decode(data)
		if !ok {
			return
		}
		if e.Key == "" {
			t.Fatal("an entry without a key decoded")
		}
		e2, v2, ok := decode(encode(e, v))
		if !ok || e2.Key != e.Key || !bytes.Equal(v, v2) || !e2.Expires.Equal(e.Expires) {
			t.Fatalf("round trip: %+v %q -> %+v %q", e, v, e2, v2)
		}
	})
}
