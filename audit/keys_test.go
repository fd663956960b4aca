package audit

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(7); {
	case depth > 2 || n < 3:
		return [...]any{json.Number("1"), json.Number("2"), "a", true, nil}[r.IntN(5)]
	case n < 5:
		m := map[string]any{}
		for i := r.IntN(3); i > 0; i-- {
			m[[...]string{"a", "b", "", "0"}[r.IntN(4)]] = randomValue(r, depth+1)
		}
		return m
	default:
		var a []any
		for i := r.IntN(3); i > 0; i-- {
			a = append(a, randomValue(r, depth+1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	}
}

// allPaths lists every key path of a document, containers included.
func allPaths(v any, at verbiage.Path, out *[]verbiage.Path) {
	*out = append(*out, clonePath(at))
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			allPaths(c, append(at, verbiage.Segment{Key: k}), out)
		}
	case []any:
		for i, c := range x {
			allPaths(c, append(at, verbiage.Segment{Key: string(rune('0' + i))}), out)
		}
	}
}

// TestChangedKeysProperty: for random pairs of documents, a key path's value
// differs exactly when ChangedKeys's rule says so.
func TestChangedKeysProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 3000; n++ {
		old, new := randomValue(r, 0), randomValue(r, 0)
		oldOK, newOK := r.IntN(8) > 0, r.IntN(8) > 0
		changes := ChangedKeys(old, oldOK, new, newOK)
		var paths []verbiage.Path
		if oldOK {
			allPaths(old, verbiage.Path{}, &paths)
		}
		if newOK {
			allPaths(new, verbiage.Path{}, &paths)
		}
		for _, p := range paths {
			ov, oerr := objects.Get(old, p)
			nv, nerr := objects.Get(new, p)
			if !oldOK {
				oerr = objects.ErrNotFound
			}
			if !newOK {
				nerr = objects.ErrNotFound
			}
			want := (oerr == nil) != (nerr == nil) || (oerr == nil && !objects.Equal(ov, nv))
			got := false
			for _, c := range changes {
				if c.Path.HasPrefix(p) || (c.Deep && p.HasPrefix(c.Path)) {
					got = true
				}
			}
			if got && !want && kindSwap(old, new, p) {
				continue // documented: an array that became an object (or back)
			}
			if got != want {
				t.Fatalf("old %v (%v) new %v (%v): key %q changed = %v, rule says %v (changes %v)", old, oldOK, new, newOK, p, want, got, changes)
			}
		}
	}
}

var errBadKey = errors.New("malformed index key")

// splitKey is the inverse of keyOf.
func splitKey(k string) (string, verbiage.Path, error) {
	i := 0
	for i < len(k) && k[i] != 0 {
		i++
	}
	if i == len(k) {
		return "", nil, errBadKey
	}
	file, rest := k[:i], []byte(k[i+1:])
	p := verbiage.Path{}
	for len(rest) > 0 {
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return "", nil, errBadKey
		}
		p = append(p, verbiage.Segment{Key: string(rest[w : w+int(n)])})
		rest = rest[w+int(n):]
	}
	return file, p, nil
}

func TestKeyEncodingRoundTrip(t *testing.T) {
	for _, p := range []verbiage.Path{{}, {{Key: ""}}, {{Key: "a"}, {Key: ""}, {Key: "\x00b"}}, {{Key: "0"}, {Key: "é.x"}}} {
		file, back, err := splitKey(keyOf("dir/a.json", p))
		if err != nil || file != "dir/a.json" || len(back) != len(p) || !back.HasPrefix(p) {
			t.Fatalf("%q: %q %q %v", p, file, back, err)
		}
	}
}

// kindSwap reports whether, above p, an array on one side is an object on
// the other: "0" then names an index on one side and a key on the other.
func kindSwap(old, new any, p verbiage.Path) bool {
	for i := 0; i < len(p); i++ {
		ov, oerr := objects.Get(old, p[:i])
		nv, nerr := objects.Get(new, p[:i])
		if oerr != nil || nerr != nil {
			return false
		}
		_, oa := ov.([]any)
		_, na := nv.([]any)
		_, oo := ov.(map[string]any)
		_, no := nv.(map[string]any)
		if (oa && no) || (oo && na) {
			return true
		}
	}
	return false
}
