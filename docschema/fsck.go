package docschema

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/store"
)

// Fsck is the schemas' check in the store's Fsck (store.Options.Fsck):
// the rules read, every schema they name compiles, and every document
// they rule meets its schema. What it finds is reported; it never fails.
var Fsck = store.FsckCheck{Name: "schemas", Run: fsck}

func fsck(ctx context.Context, s *store.Store, _ plumbing.Hash, read func(string) ([]byte, error)) ([]store.FsckProblem, error) {
	if _, err := rulesIn(read); err != nil {
		return []store.FsckProblem{{Check: "schemas", File: Path, Problem: err.Error(),
			Repair: "`aiwg-state schema remove NAME` and `schema add` again, or commit a fixed " + Path}}, nil
	}
	violations, err := New(s).Check(ctx, store.ReadOptions{})
	if err != nil {
		return []store.FsckProblem{{Check: "schemas", Problem: err.Error(), Repair: "fix the schema named, with `aiwg-state schema add`"}}, nil
	}
	var out []store.FsckProblem
	for _, v := range violations {
		out = append(out, store.FsckProblem{Check: "schemas", File: v.File, Problem: fmt.Sprintf("breaks schema %s at %s: %s", v.Schema, v.Field, v.Reason),
			Repair: "correct the document with `aiwg-state set " + v.File + " " + v.Field + " VALUE`"})
	}
	return out, nil
}
