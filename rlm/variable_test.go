package rlm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestInlineThreshold: the RLM state specification keeps a value of up to 10,240 bytes of
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

func TestCheckExecutionConfig(t *testing.T) {
	for _, tc := range []struct {
		config map[string]any
		ok     bool
	}{
		{nil, true},
		{map[string]any{"model": "m", "temperature": json.Number("0.7"), "seed": json.Number("42"), "execution_mode": "seeded", "context_window_tokens": json.Number("8000"), "extra": true}, true},
		{map[string]any{"temperature": 2.0, "seed": int64(-1)}, true},
		{map[string]any{"model": 1}, false},
		{map[string]any{"temperature": json.Number("2.5")}, false},
		{map[string]any{"temperature": "hot"}, false},
		{map[string]any{"seed": json.Number("1.5")}, false},
		{map[string]any{"execution_mode": "fast"}, false},
		{map[string]any{"context_window_tokens": json.Number("999")}, false},
	} {
		if err := CheckExecutionConfig(tc.config); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidDocument)) {
			t.Errorf("%v: %v, want ok=%v", tc.config, err, tc.ok)
		}
	}
}
