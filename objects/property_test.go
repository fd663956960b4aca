package objects

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

// randomValue builds documents rich in what the canonical check must get
// right: escapes, control characters, non-ASCII, keys that sort closely.
func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(10); {
	case depth > 3 || n < 3:
		return randomScalar(r)
	case n < 7:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	default:
		var a []any
		for range r.IntN(4) {
			a = append(a, randomValue(r, depth+1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	}
}

func randomScalar(r *rand.Rand) any {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number([]string{"0", "-0", "1.0", "1e3", "12345678901234567890", "-1.5E-7"}[r.IntN(6)])
	default:
		return randomString(r)
	}
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab\"\\\n\t\x00\x1f\x7f/<é😀\u2028.*#@"
	runes := []rune(alphabet)
	var b []rune
	for range r.IntN(4) {
		b = append(b, runes[r.IntN(len(runes))])
	}
	return string(b)
}

// The fast path must accept exactly Encode's output: every canonical
// document, and no byte-level mutation of one unless that mutation is
// itself canonical.
func TestCanonicalCheckIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		v := randomValue(r, 0)
		enc, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if !isCanonical(enc) {
			t.Fatalf("Encode output not recognized as canonical: %q", enc)
		}
		mut := bytes.Clone(enc)
		i := r.IntN(len(mut))
		mut[i] = "\"\\ \n,:{}[]0aeu1f-."[r.IntN(18)]
		if !isCanonical(mut) {
			continue
		}
		w, err := Decode(mut)
		if err != nil {
			t.Fatalf("fast path accepted invalid %q: %v", mut, err)
		}
		if again, _ := Encode(w); !bytes.Equal(again, mut) {
			t.Fatalf("fast path accepted %q, which encodes as %q", mut, again)
		}
	}
}

// GetRaw must agree with Get on every path into random documents.
func TestGetRawAgreesWithGet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		v := randomValue(r, 0)
		data, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range Leaves(v) {
			for n := 0; n <= len(m.Path); n++ {
				p := m.Path[:n]
				want, _ := Get(v, p)
				got, err := GetRaw(data, p)
				if err != nil {
					t.Fatalf("GetRaw(%q): %v", p.String(), err)
				}
				if w, _ := Encode(want); !bytes.Equal(got, w) {
					t.Fatalf("GetRaw(%q) = %q, want %q", p.String(), got, w)
				}
			}
			// One step past a leaf, or a sibling that is not there.
			for _, extra := range []string{"x", "0", "-", strconv.Itoa(1 << 20)} {
				p := append(verbiage.Path{}, m.Path...)
				p = append(p, verbiage.Segment{Key: extra})
				_, gerr := Get(v, p)
				_, rerr := GetRaw(data, p)
				if sentinelName(gerr) != sentinelName(rerr) {
					t.Fatalf("GetRaw(%q) error %v, Get error %v", p.String(), rerr, gerr)
				}
			}
		}
	}
}
