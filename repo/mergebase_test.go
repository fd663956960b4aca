package repo

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// TestMergeBasesAgreeWithGit builds random histories with merges (criss-
// crosses included, and commit times that are not in topological order)
// and compares MergeBases with `git merge-base --all` for random pairs.
func TestMergeBasesAgreeWithGit(t *testing.T) {
	ctx := context.Background()
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewSource(seed))
		r := newRepo(t)
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var commits []plumbing.Hash
		for i := 0; i < 40; i++ {
			var parents []plumbing.Hash
			if len(commits) > 0 {
				parents = append(parents, commits[rng.Intn(len(commits))])
				if rng.Intn(3) == 0 {
					if p := commits[rng.Intn(len(commits))]; p != parents[0] {
						parents = append(parents, p)
					}
				}
			}
			// Skewed clocks: time goes back now and then.
			when := t0.Add(time.Duration(i*10-rng.Intn(25)) * time.Second)
			ref := fmt.Sprintf("refs/heads/c%d", i)
			c, err := r.Commit(ctx, ref, func(tx *Tx) (*CommitInfo, error) {
				if err := tx.WriteFile("f", []byte(fmt.Sprint(i))); err != nil {
					return nil, err
				}
				sig := NewSignature("t", when)
				return &CommitInfo{Author: sig, Committer: sig, Message: fmt.Sprintf("c%d\n", i), MergeParents: parents}, nil
			}, CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			commits = append(commits, c.Hash)
		}
		for k := 0; k < 60; k++ {
			a, b := commits[rng.Intn(len(commits))], commits[rng.Intn(len(commits))]
			got, err := r.MergeBases(a, b)
			if err != nil {
				t.Fatal(err)
			}
			var gs []string
			for _, h := range got {
				gs = append(gs, h.String())
			}
			sort.Strings(gs)
			// git merge-base exits 1, printing nothing, when there is no base.
			bases, _ := testutil.Git{GitDir: r.Dir()}.Try("merge-base", "--all", a.String(), b.String())
			out := strings.Fields(bases)
			sort.Strings(out)
			if strings.Join(gs, " ") != strings.Join(out, " ") {
				t.Fatalf("seed %d: merge bases of %s %s = %v, git says %v", seed, a, b, gs, out)
			}
			anc, err := r.IsAncestor(a, b)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(out) == 1 && out[0] == a.String(); anc != want {
				t.Fatalf("IsAncestor(%s, %s) = %v", a, b, anc)
			}
		}
	}
}
