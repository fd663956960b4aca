package merge_test

import (
	"context"

	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// randomOps edits a few documents of an object-only store: sets, deletes
// of keys and files, new files, type changes.
func randomOps(rng *rand.Rand, files []string) []store.Op {
	var ops []store.Op
	for i := 0; i < 1+rng.Intn(6); i++ {
		f := files[rng.Intn(len(files))]
		key := fmt.Sprintf("k%d", rng.Intn(4))
		if rng.Intn(2) == 0 {
			key += fmt.Sprintf(".n%d", rng.Intn(2))
		}
		switch rng.Intn(10) {
		case 0:
			ops = append(ops, store.Op{Op: "del", File: f})
		case 1, 2:
			ops = append(ops, store.Op{Op: "del", File: f, Path: key})
		case 3:
			ops = append(ops, store.Op{Op: "set", File: f, Path: key, Value: []byte(`"s"`)})
		default:
			ops = append(ops, store.Op{Op: "set", File: f, Path: key, Value: []byte(fmt.Sprint(rng.Intn(5)))})
		}
	}
	return ops
}

// applySome applies ops one by one, skipping those that do not apply
// (deleting what is gone, setting through a scalar).
func applySome(t *testing.T, st *aiwgstate.Store, ops []store.Op, wo store.WriteOptions) {
	t.Helper()
	for _, op := range ops {
		_, err := st.Apply(context.Background(), []store.Op{op}, wo)
		if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, objects.ErrNotFound) &&
			!errors.Is(err, objects.ErrNotContainer) && !errors.Is(err, store.ErrNoChange) {
			t.Fatalf("%+v: %v", op, err)
		}
	}
}

// snapshot reads every document of a revision.
func snapshot(t *testing.T, st *aiwgstate.Store, rev string) map[string]any {
	t.Helper()
	out := map[string]any{}
	h, err := st.Resolve(rev, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Repo().ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Repo().Walk(c.Tree, "", func(p string, h plumbing.Hash) error {
		if !strings.HasSuffix(p, ".json") || strings.HasPrefix(p, ".aiwg/") {
			return nil
		}
		data, err := st.Repo().ReadBlob(h)
		if err != nil {
			return err
		}
		canon, err := objects.Canonical(data)
		if err != nil || string(canon) != string(data) {
			return fmt.Errorf("%s at %s is not canonical JSON: %v\n%s", p, rev, err, data)
		}
		v, err := objects.Decode(data)
		if err != nil {
			return err
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// leaves flattens documents to FILE#KEY -> canonical value.
func leaves(docs map[string]any) map[string]string {
	out := map[string]string{}
	for f, d := range docs {
		for _, m := range objects.Leaves(d) {
			b, _ := objects.Encode(m.Value)
			out[f+"#"+m.Path.String()] = string(b)
		}
	}
	return out
}

// TestMergeProperties runs random divergent histories through every
// strategy and checks, at the tree level: merging an ancestor or a branch
// with itself changes nothing; the result does not depend on which side is
// ours; every merged document is canonical JSON; and every leaf of a clean
// merge's inputs is in the result unless the other side changed or deleted
// it (or the strategy chose the other side's value there).
func TestMergeProperties(t *testing.T) {
	runs := 12
	if testing.Short() {
		runs = 4
	}
	ctx := context.Background()
	files := []string{"a.json", "b.json", "d/c.json"}
	for run := 0; run < runs; run++ {
		for _, strategy := range jsonmerge.Strategies() {
			seed := int64(run*100 + len(strategy))
			rng := rand.New(rand.NewSource(seed))
			st := storetest.New(t)
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			seedOps := []store.Op{}
			for _, f := range files {
				seedOps = append(seedOps, store.Op{Op: "put", File: f, Value: []byte(`{"k0":0,"k1":{"n0":0},"k2":"x"}`)})
			}
			if _, err := st.Apply(ctx, seedOps, store.WriteOptions{Agent: "seed", Time: base}); err != nil {
				t.Fatal(err)
			}
			for _, b := range []string{"ours", "theirs", "swap-ours", "swap-theirs"} {
				if _, err := st.CreateBranch(ctx, b, "main"); err != nil {
					t.Fatal(err)
				}
			}
			oursOps, theirsOps := randomOps(rng, files), randomOps(rng, files)
			applySome(t, st, oursOps, store.WriteOptions{Agent: "a", Branch: "ours", Time: base.Add(time.Second)})
			applySome(t, st, theirsOps, store.WriteOptions{Agent: "b", Branch: "theirs", Time: base.Add(2 * time.Second)})
			// The swapped pair holds the same commits.
			for _, p := range [][2]string{{"swap-ours", "theirs"}, {"swap-theirs", "ours"}} {
				h, _ := st.Resolve(p[1], "")
				old, _ := st.Resolve(p[0], "")
				if err := st.Repo().UpdateRef(ctx, "refs/heads/"+p[0], old, h); err != nil {
					t.Fatal(err)
				}
			}
			name := fmt.Sprintf("run %d %s (seed %d)", run, strategy, seed)

			// Ancestor and self merges change nothing.
			for _, from := range []string{"main", "ours"} {
				res, err := st.Merges().Merge(ctx, from, merge.MergeOptions{Into: "ours", Strategy: strategy})
				if err != nil || res.Status != merge.MergeUpToDate {
					t.Fatalf("%s: merging %s into ours: %v %+v", name, from, err, res)
				}
			}

			before := map[string]map[string]any{"main": snapshot(t, st, "main"), "ours": snapshot(t, st, "ours"), "theirs": snapshot(t, st, "theirs")}
			r1, err1 := st.Merges().Merge(ctx, "theirs", merge.MergeOptions{Into: "ours", Strategy: strategy, NoFF: true, Write: store.WriteOptions{Agent: "m", Time: base.Add(3 * time.Second)}})
			r2, err2 := st.Merges().Merge(ctx, "swap-theirs", merge.MergeOptions{Into: "swap-ours", Strategy: strategy, NoFF: true, Write: store.WriteOptions{Agent: "m", Time: base.Add(3 * time.Second)}})
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s: asymmetric outcome: %v vs %v", name, err1, err2)
			}
			if err1 != nil {
				if !errors.Is(err1, store.ErrConflict) {
					t.Fatalf("%s: %v", name, err1)
				}
				if got, want := conflictKeys(r1.Conflicts), conflictKeys(r2.Conflicts); got != want {
					t.Fatalf("%s: conflicts differ by side:\n%s\n%s", name, got, want)
				}
				continue
			}
			merged := snapshot(t, st, "ours")
			if fmt.Sprint(leaves(merged)) != fmt.Sprint(leaves(snapshot(t, st, "swap-ours"))) {
				t.Fatalf("%s: result depends on the side:\n%v\n%v", name, leaves(merged), leaves(snapshot(t, st, "swap-ours")))
			}
			// Nothing lost unexplained.
			baseL, result := leaves(before["main"]), leaves(merged)
			for _, sides := range [][2]string{{"ours", "theirs"}, {"theirs", "ours"}} {
				mine, other := leaves(before[sides[0]]), leaves(before[sides[1]])
				for k, v := range mine {
					if result[k] == v {
						continue
					}
					if other[k] != baseL[k] || otherTouched(k, before[sides[1]], before["main"]) {
						continue // the other side changed or deleted it
					}
					t.Fatalf("%s: %s=%s of %s is lost; base %q, %s %q, result %q", name, k, v, sides[0], baseL[k], sides[1], other[k], result[k])
				}
			}
			storetest.Fsck(t, st)
		}
	}
}

// otherTouched reports whether the other side changed the document or an
// enclosing key of leaf k (FILE#KEY) since the base, which explains a
// leaf that is gone.
func otherTouched(k string, other, base map[string]any) bool {
	file, key, _ := strings.Cut(k, "#")
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return true
	}
	od, ook := other[file]
	bd, bok := base[file]
	if ook != bok {
		return true
	}
	for i := 0; i <= len(p); i++ {
		ov, oerr := objects.Get(od, p[:i])
		bv, berr := objects.Get(bd, p[:i])
		if (oerr == nil) != (berr == nil) {
			return true
		}
		if oerr == nil && i < len(p) {
			_, om := ov.(map[string]any)
			_, bm := bv.(map[string]any)
			if om != bm {
				return true
			}
		}
	}
	return false
}

func conflictKeys(cs []merge.ConflictEntry) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.File+"#"+c.Key+" "+string(c.Base))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestLastWriteWinsFollowsTheFilesLastWrite: the clock of a side is that of
// the last commit that changed the file there, not of the branch head, and
// the Clock trailer beats commit times.
func TestLastWriteWinsFollowsTheFilesLastWrite(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	// After the store's first commit (made now): a hybrid logical clock
	// never runs behind its parent's, so earlier times would all tie.
	t0 := time.Now().Add(time.Hour).Truncate(time.Second)
	put := func(branch, file, v string, at time.Duration) {
		t.Helper()
		if _, err := st.Put(ctx, file, []byte(v), store.WriteOptions{Branch: branch, Agent: branch, Time: t0.Add(at)}); err != nil {
			t.Fatal(err)
		}
	}
	put("main", "global/variables/x.json", `{"value":0}`, 0)
	if _, err := st.CreateBranch(ctx, "feat", "main"); err != nil {
		t.Fatal(err)
	}
	put("feat", "global/variables/x.json", `{"value":"feat"}`, 10*time.Second)
	put("main", "global/variables/x.json", `{"value":"main"}`, 5*time.Second)
	put("main", "other.json", `{"later":true}`, 20*time.Second) // main's head is newest
	if _, err := st.Merges().Merge(ctx, "feat", merge.MergeOptions{Write: store.WriteOptions{Time: t0.Add(30 * time.Second)}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "global/variables/x.json", "value", store.ReadOptions{})
	if err != nil || string(got) != "\"feat\"\n" {
		t.Fatalf("value = %s (%v); feat wrote x.json last", got, err)
	}
	m, err := st.Show(ctx, "HEAD", store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var clock string
	for _, tr := range m.Trailers {
		if tr.Key == store.TrailerClock {
			clock = tr.Value
		}
	}
	c, err := jsonmerge.ParseClock(clock)
	if err != nil || c.Wall < t0.Add(30*time.Second).UnixNano() {
		t.Fatalf("merge commit clock %q (%v)", clock, err)
	}
	storetest.Fsck(t, st)
}

// TestCrissCrossMerge: two branches that merged each other have two best
// merge bases; they are those git finds, and the merge over the virtual
// base is the same whichever side is ours.
func TestCrissCrossMerge(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) store.WriteOptions {
		return store.WriteOptions{Agent: "x", Time: t0.Add(time.Duration(s) * time.Second)}
	}
	wo := func(branch string, s int) store.WriteOptions { w := at(s); w.Branch = branch; return w }
	if _, err := st.Put(ctx, "d.json", []byte(`{"a":0,"b":0,"c":0}`), at(0)); err != nil {
		t.Fatal(err)
	}
	st.CreateBranch(ctx, "feat", "main")
	st.Set(ctx, "d.json", "a", []byte("1"), wo("main", 1))
	st.Set(ctx, "d.json", "b", []byte("1"), wo("feat", 2))
	a1, _ := st.Resolve("main", "")
	b1, _ := st.Resolve("feat", "")
	// main merges feat's B1, feat merges main's A1: a criss-cross.
	st.CreateBranch(ctx, "tmp", b1.String())
	if _, err := st.Merges().Merge(ctx, "tmp", merge.MergeOptions{Into: "main", Write: at(3)}); err != nil {
		t.Fatal(err)
	}
	st.DeleteBranch(ctx, "tmp", true)
	st.CreateBranch(ctx, "tmp", a1.String())
	if _, err := st.Merges().Merge(ctx, "tmp", merge.MergeOptions{Into: "feat", Write: at(4)}); err != nil {
		t.Fatal(err)
	}
	st.Set(ctx, "d.json", "c", []byte("2"), wo("main", 5))
	st.Set(ctx, "d.json", "a", []byte("3"), wo("feat", 6))
	m, _ := st.Resolve("main", "")
	f, _ := st.Resolve("feat", "")
	bases, err := st.Repo().MergeBases(m, f)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(storetest.Git(t, st, "merge-base", "--all", "main", "feat"))
	got := []string{}
	for _, b := range bases {
		got = append(got, b.String())
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != 2 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("merge bases %v, git says %v", got, want)
	}
	st.CreateBranch(ctx, "m2", "main")
	st.CreateBranch(ctx, "f2", "feat")
	if _, err := st.Merges().Merge(ctx, "feat", merge.MergeOptions{Into: "main", Write: at(7)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Merges().Merge(ctx, "m2", merge.MergeOptions{Into: "f2", Write: at(7)}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"main", "f2"} {
		got, _ := st.Get(ctx, "d.json", "", store.ReadOptions{Branch: b})
		if string(got) != "{\n  \"a\": 3,\n  \"b\": 1,\n  \"c\": 2\n}\n" {
			t.Fatalf("%s after the criss-cross merge:\n%s", b, got)
		}
	}
	storetest.Fsck(t, st)
}

func TestNoWriteOnABranchWithAMergeInProgress(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	st.Put(ctx, "d.json", []byte(`{"a":0}`), store.WriteOptions{})
	st.CreateBranch(ctx, "feat", "main")
	st.Set(ctx, "d.json", "a", []byte("1"), store.WriteOptions{})
	st.Set(ctx, "d.json", "a", []byte("2"), store.WriteOptions{Branch: "feat"})
	if busy, _ := st.HasConflicts("main"); busy {
		t.Fatal("HasConflicts before any merge")
	}
	if _, err := st.Merges().Merge(ctx, "feat", merge.MergeOptions{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("merge: %v", err)
	}
	if busy, _ := st.HasConflicts("main"); !busy {
		t.Fatal("HasConflicts is false during a merge with conflicts")
	}
	if busy, _ := st.HasConflicts("feat"); busy {
		t.Fatal("HasConflicts is true for the branch merged in")
	}
	for _, w := range []func() error{
		func() error { _, err := st.Set(ctx, "x.json", "a", []byte("1"), store.WriteOptions{}); return err },
		func() error { _, err := st.Delete(ctx, "d.json", "", store.WriteOptions{}); return err },
		func() error {
			_, err := st.Apply(ctx, []store.Op{{Op: "put", File: "y.json", Value: []byte("{}")}}, store.WriteOptions{Branch: "main"})
			return err
		},
	} {
		if err := w(); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a write during a merge: %v", err)
		}
	}
	// A forged Merge-Record trailer does not get through while conflicts remain.
	h, _ := st.Repo().Ref(store.MergeRefPrefix + "main")
	_, err := st.Set(ctx, "x.json", "a", []byte("1"), store.WriteOptions{Trailers: repo.Trailers{{Key: store.TrailerMergeRecord, Value: h.String()}}})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("forged trailer: %v", err)
	}
	if _, err := st.Merges().Resolve(ctx, "d.json", "a", merge.Resolution{Take: "ours"}, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := st.Merges().Continue(ctx, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if busy, _ := st.HasConflicts("main"); busy {
		t.Fatal("HasConflicts after --continue")
	}
	// The record of how the conflicts were settled stays reachable under
	// the merge commit's id, through git gc, for an audit.
	record := strings.TrimSpace(storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Merge-Record,valueonly)", res.Commit.Commit))
	if kept := strings.TrimSpace(storetest.Git(t, st, "rev-parse", merge.MergeRecordPrefix+res.Commit.Commit)); record == "" || kept != record {
		t.Fatalf("Merge-Record %q, kept under %s: %q", record, merge.MergeRecordPrefix, kept)
	}
	storetest.Git(t, st, "gc", "--prune=now", "--quiet")
	if log := storetest.Git(t, st, "log", "--format=%s", record); !strings.Contains(log, "resolve") {
		t.Fatalf("the record after gc:\n%s", log)
	}
	storetest.Fsck(t, st)
}

// TestMergeFamilyTakesWriteOptionsBranch: the merge calls take the branch
// from WriteOptions.Branch, as every other write does, when they are not
// given one; two different names are refused, never one ignored. Log
// filters on the merge's and a rollback's operations.
func TestMergeFamilyTakesWriteOptionsBranch(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Set(ctx, "d.json", "a", []byte(`1`), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"g1", "g2"} {
		if _, err := st.CreateBranch(ctx, b, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Set(ctx, "d.json", "b", []byte(`2`), store.WriteOptions{Agent: "a", Branch: "g2"}); err != nil {
		t.Fatal(err)
	}
	main := storetest.Git(t, st, "rev-parse", "main")
	res, err := st.Merges().Merge(ctx, "g2", merge.MergeOptions{Write: store.WriteOptions{Agent: "m", Branch: "g1"}})
	if err != nil || res.Into != "g1" || storetest.Git(t, st, "rev-parse", "main") != main || storetest.Git(t, st, "rev-parse", "g1") != storetest.Git(t, st, "rev-parse", "g2") {
		t.Fatalf("a merge with WriteOptions.Branch g1: %+v, %v", res, err)
	}
	if _, err := st.Merges().Merge(ctx, "g2", merge.MergeOptions{Into: "main", Write: store.WriteOptions{Branch: "g1"}}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("Into and WriteOptions.Branch disagreeing: %v", err)
	}
	if _, err := st.Merges().Merge(ctx, "g2", merge.MergeOptions{Into: "main", NoFF: true, Write: store.WriteOptions{Agent: "m"}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := st.Log(ctx, store.LogOptions{Op: store.OpMerge}, func(*store.Mutation) bool { n++; return true }); err != nil || n != 1 {
		t.Errorf("Log of merges: %d, %v", n, err)
	}
	if err := st.Log(ctx, store.LogOptions{Op: store.OpRollback}, func(*store.Mutation) bool { return true }); err != nil {
		t.Errorf("Log of rollbacks: %v", err)
	}
}

// TestUnchangedSinceIsNotForMerges: a fast-forward writes no commit to
// check it on, so the merge family refuses it rather than ignore it.
func TestUnchangedSinceIsNotForMerges(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Set(ctx, "a.json", "n", []byte(`1`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateBranch(ctx, "g", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Merges().Merge(ctx, "g", merge.MergeOptions{Write: store.WriteOptions{UnchangedSince: store.Rev("HEAD")}}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("Merge with UnchangedSince: %v", err)
	}
	if _, err := st.Merges().Resolve(ctx, "a.json", "n", merge.Resolution{Take: "ours"}, store.WriteOptions{UnchangedSince: store.Rev("HEAD")}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("Resolve with UnchangedSince: %v", err)
	}
}
