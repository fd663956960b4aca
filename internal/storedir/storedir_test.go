package storedir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storedir"
	"github.com/aiwg/aiwg-state/store"
)

// TestNamesAreTheStoresOwn: the client finds the files the store writes.
func TestNamesAreTheStoresOwn(t *testing.T) {
	if storedir.Default != store.DefaultDir || storedir.Manifest != store.ManifestPath {
		t.Fatalf("storedir looks for %s and %s; the store keeps %s and %s",
			storedir.Default, storedir.Manifest, store.DefaultDir, store.ManifestPath)
	}
}

// TestForArgs: the store a command line names, as aiwg-state and
// aiwg-state-client both find it.
func TestForArgs(t *testing.T) {
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
		if got := storedir.ForArgs(tc.args, "/work"); got != tc.want {
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
		if got := storedir.ForArgs([]string{"get", "a.json"}, filepath.Join(root, dir)); got != filepath.Join(root, want) {
			t.Errorf("from %s: %q, want %q", dir, got, filepath.Join(root, want))
		}
	}
	// --store naming a clone's work tree names its .git, as for the CLI.
	if got := storedir.ForArgs([]string{"get", "a.json", "--store", "clone"}, root); got != filepath.Join(root, "clone", ".git") {
		t.Errorf("--store clone: %q", got)
	}
}
