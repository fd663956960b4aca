package rlm_test

import (
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
)

func newStore(t testing.TB) *aiwgstate.Store {
	t.Helper()
	return storetest.New(t)
}

// git runs the git CLI against the store: the oracle of these tests.
func git(t testing.TB, st *aiwgstate.Store, args ...string) string {
	t.Helper()
	return testutil.RunGit(t, st.Dir(), args...)
}

func fsck(t testing.TB, st *aiwgstate.Store) {
	t.Helper()
	testutil.Fsck(t, st.Dir())
}
