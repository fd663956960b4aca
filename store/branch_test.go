package store_test

import (
	"errors"
	"testing"

	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func TestCheckBranchName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"main", true}, {"agents/planner/try-1", true}, {"v1.2", true},
		{"", false}, {"-x", false}, {"a..b", false}, {"a b", false}, {"a~1", false}, {"a^", false},
		{"a:b", false}, {"a?", false}, {"a*", false}, {"a[", false}, {`a\b`, false}, {"a/", false},
		{"a.", false}, {"a.lock", false}, {"a//b", false}, {".a", false}, {"a/.b", false}, {"a@{1}", false},
		{"@", false}, {"HEAD", false}, {"refs/heads/x", false}, {"a\x01", false},
	} {
		err := store.CheckBranchName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("CheckBranchName(%q) = %v", c.name, err)
		}
		if err != nil && !errors.Is(err, verbiage.ErrInvalidName) {
			t.Errorf("CheckBranchName(%q): %v does not wrap ErrInvalidName", c.name, err)
		}
	}
}
