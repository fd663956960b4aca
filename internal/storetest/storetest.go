// Package storetest makes the stores that tests and benchmarks outside the
// root package start from. It is apart from testutil because it imports
// the root package, which the tests of the packages below it cannot.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/store"
)

// New makes an empty store in a fresh temporary directory, without fsync
// (a test needs no durability), and closes it when the test ends.
func New(t testing.TB) *aiwgstate.Store {
	t.Helper()
	return NewWith(t, store.Options{NoSync: true})
}

// NewWith is New with the store's options o.
func NewWith(t testing.TB, o store.Options) *aiwgstate.Store {
	t.Helper()
	st, err := aiwgstate.Init(context.Background(), filepath.Join(t.TempDir(), "state.git"), store.InitOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Git runs the git CLI against the store, the oracle of the tests, and
// returns its output.
func Git(t testing.TB, st *aiwgstate.Store, args ...string) string {
	t.Helper()
	return testutil.RunGit(t, st.Dir(), args...)
}

// Fsck runs git fsck --strict on the store.
func Fsck(t testing.TB, st *aiwgstate.Store) {
	t.Helper()
	testutil.Fsck(t, st.Dir())
}

// PlainCommit makes, with git plumbing alone, a commit on top of HEAD that
// writes body at path, as a plain git user would; it returns the commit,
// which no ref names yet.
func PlainCommit(t testing.TB, st *aiwgstate.Store, path, body string) string {
	t.Helper()
	return testutil.CommitFile(t, testutil.Git{GitDir: st.Dir()}, "HEAD", path, body, "by hand\n")
}
