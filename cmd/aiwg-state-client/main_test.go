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

func TestFindStore(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"set", "a.json", "k", "1", "--store", "/s.git"}, "", "/s.git"},
		{[]string{"--store=rel.git", "get", "a.json"}, "", "/work/rel.git"},
		{[]string{"get", "a.json"}, "/env.git", "/env.git"},
		{[]string{"get", "--store=", "a.json"}, "/env.git", "/env.git"},
		{[]string{"set", "a.json", "k", "--", "--store", "/not-a-flag.git"}, "/env.git", "/env.git"},
	} {
		t.Setenv("AIWG_STATE_STORE", tc.env)
		if got := findStore(tc.args, "/work"); got != tc.want {
			t.Errorf("%v with AIWG_STATE_STORE=%q: %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
