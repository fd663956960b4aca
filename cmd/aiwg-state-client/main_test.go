package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

	// Discovery, as aiwgstate.FindStore: the nearest store, or git clone
	// of one (a work tree with the store's manifest checked out).
	t.Setenv("AIWG_STATE_STORE", "")
	root := t.TempDir()
	for _, f := range []string{
		".aiwg/state.git/HEAD",          // a project's store
		"clone/.git/HEAD",               // a git clone of a store
		"clone/.aiwg/store.json",        // its checked-out manifest
		"clone/sub/x",                   //
		"plain/.git/HEAD",               // a git repository, not a store
		"plain/sub/x",                   //
		"clone/nested/.aiwg/store.json", // a manifest without .git
	} {
		path := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]string{
		"clone/sub":    "clone/.git",
		"clone/nested": "clone/.git",
		"plain/sub":    ".aiwg/state.git",
		".":            ".aiwg/state.git",
	} {
		if got := findStore([]string{"get", "a.json"}, filepath.Join(root, dir)); got != filepath.Join(root, want) {
			t.Errorf("from %s: %q, want %q", dir, got, filepath.Join(root, want))
		}
	}
	// --store naming a clone's work tree names its .git, as for the CLI.
	if got := findStore([]string{"get", "a.json", "--store", "clone"}, root); got != filepath.Join(root, "clone", ".git") {
		t.Errorf("--store clone: %q", got)
	}
}
