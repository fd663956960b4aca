package main

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzJSONString: what jsonString quotes, encoding/json reads back as the
// same string (invalid UTF-8 as U+FFFD, as encoding/json does).
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnewline\n\x00\x1f", "ünïcødé ✓", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if err := json.Unmarshal([]byte(jsonString(s)), &got); err != nil {
			t.Fatalf("%q quotes as %s, not JSON: %v", s, jsonString(s), err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD
		}
		if got != want {
			t.Fatalf("%q quotes as %s, read back as %q", s, jsonString(s), got)
		}
	})
}
