package rlm

import (
	"strings"
	"testing"
)

// TestInlineThreshold: seed 000 keeps a value of up to 10,240 bytes of
// canonical JSON inline and moves a larger one to a .data file; the
// newline that ends a canonical file is not part of the value.
func TestInlineThreshold(t *testing.T) {
	for _, c := range []struct {
		chars  int // a string of this many characters is chars+2 bytes of JSON
		inline bool
	}{{MaxInlineBytes - 2, true}, {MaxInlineBytes - 1, false}} {
		v := &Variable{Name: "v", Type: TypeText, Value: strings.Repeat("x", c.chars)}
		_, data, err := v.Encode("states/x/variables/v.data")
		if err != nil {
			t.Fatal(err)
		}
		if inline := data == nil; inline != c.inline {
			t.Errorf("a %d-byte value: inline = %v, want %v", c.chars+2, inline, c.inline)
		}
	}
}
