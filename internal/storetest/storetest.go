// Package storetest makes the stores that tests and benchmarks outside the
// root package start from. It is apart from testutil because it imports
// the root package, which the tests of the packages below it cannot.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
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
