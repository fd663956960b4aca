package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func TestSnapshotCreateShowAndList(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "planner"}
	st.Put(ctx, "plan.json", []byte(`{"goal":"ship"}`), wo)
	st.Put(ctx, "tasks/t1.json", []byte(`{"done":false}`), wo)
	st.Put(ctx, "tasks/t2.json", []byte(`{"done":true}`), wo)
	sn := st.Snapshots()
	s, err := sn.Create(ctx, "before-deploy", snapshot.CreateOptions{Paths: []string{"tasks/", "plan.json"}, Description: "all green"}, wo)
	if err != nil {
		t.Fatal(err)
	}
	if !verbiage.ValidID("snap", s.ID) || s.Reason != "manual" || strings.Join(s.Scope, " ") != "plan.json tasks" || s.Agent != "planner" {
		t.Fatalf("created %+v", s)
	}
	tag := storetest.Git(t, st, "cat-file", "tag", "snapshots/before-deploy")
	for _, want := range []string{"tag snapshots/before-deploy\ntagger planner", "snapshot before-deploy\n\nall green\n\nSnapshot: " + s.ID + "\nReason: manual\nScope: plan.json\nScope: tasks\n"} {
		if !strings.Contains(tag, want) {
			t.Fatalf("tag object:\n%s\nwant %q", tag, want)
		}
	}
	if _, err := sn.Create(ctx, "whole", snapshot.CreateOptions{Reason: "scheduled"}, store.WriteOptions{Agent: "cron", Time: time.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	got, err := sn.Get(ctx, "before-deploy")
	if err != nil || got.ID != s.ID || got.Description != "all green" || got.Commit != s.Commit {
		t.Fatalf("get: %+v %v", got, err)
	}
	files, err := sn.Files(ctx, "before-deploy")
	if err != nil || strings.Join(files, " ") != "plan.json tasks/t1.json tasks/t2.json" {
		t.Fatalf("files %v %v", files, err)
	}
	all, err := sn.List(ctx)
	if err != nil || len(all) != 2 || all[0].Name != "before-deploy" || all[1].Name != "whole" || all[1].Scope[0] != "." || all[1].Reason != "scheduled" {
		t.Fatalf("list %+v %v", all, err)
	}
	// A tag made by hand under the prefix is no snapshot.
	storetest.Git(t, st, "tag", "-a", "-m", "mine", "snapshots/byhand", "main")
	if all, _ := sn.List(ctx); len(all) != 2 {
		t.Fatalf("a hand-made tag listed: %+v", all)
	}
	for _, c := range []struct {
		name  string
		o     snapshot.CreateOptions
		isErr error
	}{
		{"before-deploy", snapshot.CreateOptions{}, store.ErrExists},
		{"x", snapshot.CreateOptions{Paths: []string{"nope.json"}}, store.ErrNotFound},
		{"x", snapshot.CreateOptions{Paths: []string{".aiwg/policy.json"}}, store.ErrUsage},
		{"x", snapshot.CreateOptions{Paths: []string{"tasks", "tasks/t1.json"}}, store.ErrUsage},
		{"x", snapshot.CreateOptions{Paths: []string{"../etc"}}, verbiage.ErrInvalidPath},
		{"x", snapshot.CreateOptions{Reason: "whim"}, store.ErrUsage},
		{"-x", snapshot.CreateOptions{}, verbiage.ErrInvalidName},
		{"a..b", snapshot.CreateOptions{}, verbiage.ErrInvalidName},
		{"a/b", snapshot.CreateOptions{}, verbiage.ErrInvalidName},
	} {
		if _, err := sn.Create(ctx, c.name, c.o, wo); !errors.Is(err, c.isErr) {
			t.Errorf("create %s %+v: %v, want %v", c.name, c.o, err, c.isErr)
		}
	}
	storetest.Fsck(t, st)
}

func TestSnapshotRestoreIsOneNewCommit(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "planner"}
	st.Put(ctx, "plan.json", []byte(`{"goal":"ship"}`), wo)
	st.Put(ctx, "tasks/t1.json", []byte(`{"done":false}`), wo)
	st.Put(ctx, "tasks/t2.json", []byte(`{"done":true}`), wo)
	st.SetWith(ctx, "cache.json", "k", []byte(`1`), store.SetOptions{TTL: time.Hour}, wo)
	st.Put(ctx, "other.json", []byte(`{}`), wo)
	sn := st.Snapshots()
	if _, err := sn.Create(ctx, "s1", snapshot.CreateOptions{Paths: []string{"tasks", "plan.json", "cache.json"}}, wo); err != nil {
		t.Fatal(err)
	}
	snapTree := storetest.Git(t, st, "ls-tree", "-r", "snapshots/s1", "--", "tasks", "plan.json", "cache.json", ".aiwg/ttl")
	// Change everything: edit, add, delete, and a file where a
	// directory was; and a file the snapshot does not cover.
	st.Set(ctx, "plan.json", "goal", []byte(`"abandon"`), wo)
	st.Put(ctx, "tasks/t3.json", []byte(`{}`), wo)
	st.Delete(ctx, "tasks/t1.json", "", wo)
	st.Set(ctx, "cache.json", "k", []byte(`2`), wo) // permanent now
	st.Put(ctx, "other.json", []byte(`{"changed":true}`), wo)
	d, _, err := sn.Diff(ctx, "s1", "", store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var diffed []string
	for _, f := range d.Files {
		diffed = append(diffed, f.File+":"+f.Status)
	}
	if got := strings.Join(diffed, " "); got != "cache.json:modified plan.json:modified tasks/t1.json:deleted tasks/t3.json:added" {
		t.Fatalf("diff since s1: %s", got)
	}
	before := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "main"))
	res, m, err := sn.Restore(ctx, "s1", snapshot.RestoreOptions{}, store.WriteOptions{Agent: "fixer"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Files, " ") != ".aiwg/ttl/cache.json cache.json plan.json tasks/t1.json tasks/t3.json" {
		t.Fatalf("restored %v", res.Files)
	}
	if parent := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "main~1")); parent != before {
		t.Fatal("restore is not one new commit on the branch")
	}
	if now := storetest.Git(t, st, "ls-tree", "-r", "main", "--", "tasks", "plan.json", "cache.json", ".aiwg/ttl"); now != snapTree {
		t.Fatalf("after restore:\n%s\nsnapshot:\n%s", now, snapTree)
	}
	if v := storetest.Git(t, st, "show", "main:other.json"); !strings.Contains(v, "changed") {
		t.Fatal("a restore touched a file the snapshot does not cover")
	}
	tr := storetest.Git(t, st, "log", "-1", "--format=%an%n%s%n%(trailers:key=Operation,valueonly,separator=%x2C)%n%(trailers:key=Snapshot,valueonly)%(trailers:key=Snapshot-Id,valueonly)")
	if want := fmt.Sprintf("fixer\nrestore snapshot s1 (%s)\nrestore,restore,restore\ns1\n%s", res.Snapshot.ID, res.Snapshot.ID); strings.TrimSpace(tr) != want {
		t.Fatalf("commit:\n%s\nwant:\n%s", tr, want)
	}
	if m.MutationID == "" {
		t.Fatal("no mutation")
	}
	if v, _ := st.Get(ctx, "cache.json", "k", store.ReadOptions{}); strings.TrimSpace(string(v)) != "1" {
		t.Fatalf("cache.json#k = %s", v)
	}
	if _, _, err := sn.Restore(ctx, "s1", snapshot.RestoreOptions{}, wo); !errors.Is(err, store.ErrNoChange) {
		t.Fatalf("again: %v", err)
	}
	// One path of the scope only.
	st.Set(ctx, "plan.json", "goal", []byte(`"again"`), wo)
	st.Set(ctx, "tasks/t2.json", "done", []byte(`false`), wo)
	if res, _, err := sn.Restore(ctx, "s1", snapshot.RestoreOptions{Paths: []string{"tasks/t2.json"}}, wo); err != nil || strings.Join(res.Files, " ") != "tasks/t2.json" {
		t.Fatalf("restore of one file: %+v %v", res, err)
	}
	if v, _ := st.Get(ctx, "plan.json", "goal", store.ReadOptions{}); !strings.Contains(string(v), "again") {
		t.Fatal("a restore of one path restored another")
	}
	for _, p := range []string{"other.json", "."} {
		if _, _, err := sn.Restore(ctx, "s1", snapshot.RestoreOptions{Paths: []string{p}}, wo); !errors.Is(err, store.ErrUsage) {
			t.Fatalf("restore of %s outside the scope: %v", p, err)
		}
	}
	if _, _, err := sn.Restore(ctx, "nope", snapshot.RestoreOptions{}, wo); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no such snapshot: %v", err)
	}
	if out := storetest.Git(t, st, "log", "--format=%s", "--grep=restore", "main"); strings.Count(out, "\n") != 2 {
		t.Fatalf("restores in the log:\n%s", out)
	}
	storetest.Fsck(t, st)
}

func TestSnapshotOfTheWholeStore(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "a"}
	st.Put(ctx, "a.json", []byte(`1`), wo)
	st.Put(ctx, "d/b.json", []byte(`2`), wo)
	sn := st.Snapshots()
	if _, err := sn.Create(ctx, "all", snapshot.CreateOptions{}, wo); err != nil {
		t.Fatal(err)
	}
	want := storetest.Git(t, st, "ls-tree", "-r", "main")
	st.Delete(ctx, "a.json", "", wo)
	st.Put(ctx, "d/c.json", []byte(`3`), wo)
	st.Put(ctx, "e.json", []byte(`4`), wo)
	if _, err := st.SetConfig(ctx, "limits.max_document_bytes", []byte("2000000"), wo); err != nil {
		t.Fatal(err)
	}
	res, _, err := sn.Restore(ctx, "all", snapshot.RestoreOptions{}, wo)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Files, " ") != "a.json d/c.json e.json" {
		t.Fatalf("restored %v", res.Files)
	}
	// The settings stay as they are now.
	got := storetest.Git(t, st, "ls-tree", "-r", "main")
	if got == want || !strings.Contains(storetest.Git(t, st, "show", "main:.aiwg/store.json"), "2000000") {
		t.Fatalf("the store's settings were restored too")
	}
	for _, f := range []string{"a.json", "d/b.json"} {
		if _, err := st.Get(ctx, f, "", store.ReadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Fsck(t, st)
}

func TestSnapshotPrune(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	sn := st.Snapshots()
	now := time.Now()
	for i, age := range []time.Duration{72 * time.Hour, 48 * time.Hour, 24 * time.Hour, time.Hour, 0} {
		if _, err := sn.Create(ctx, fmt.Sprintf("s%d", i), snapshot.CreateOptions{}, store.WriteOptions{Agent: "a", Time: now.Add(-age)}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(ss []snapshot.Snapshot) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return strings.Join(out, " ")
	}
	if _, err := sn.Prune(ctx, snapshot.PruneOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("prune by nothing: %v", err)
	}
	// Older than 36h, but the newest 4 stay: s0 only.
	if rm, err := sn.Prune(ctx, snapshot.PruneOptions{Keep: 4, OlderThan: 36 * time.Hour}); err != nil || names(rm) != "s0" {
		t.Fatalf("prune: %s %v", names(rm), err)
	}
	if rm, err := sn.Prune(ctx, snapshot.PruneOptions{OlderThan: 12 * time.Hour}); err != nil || names(rm) != "s1 s2" {
		t.Fatalf("prune older than: %s %v", names(rm), err)
	}
	if rm, err := sn.Prune(ctx, snapshot.PruneOptions{Keep: 1}); err != nil || names(rm) != "s3" {
		t.Fatalf("prune keep 1: %s %v", names(rm), err)
	}
	if all, _ := sn.List(ctx); names(all) != "s4" {
		t.Fatalf("left: %s", names(all))
	}
	storetest.Fsck(t, st)
}

// TestRestoreKeepsTheFeaturesRules: a restore is judged as any write: in
// a store with a policy, one that would drop another agent's lease is
// refused, and nothing moves.
func TestRestoreKeepsTheFeaturesRules(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.SetPolicy(ctx, []byte(`{"default": "allow", "rules": []}`), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	st.Put(ctx, "a.json", []byte(`1`), store.WriteOptions{Agent: "a"})
	if _, err := st.Snapshots().Create(ctx, "before", snapshot.CreateOptions{}, store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Leases().Acquire(ctx, "tasks/t-1", lease.Options{TTL: time.Hour}, store.WriteOptions{Agent: "b"}); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	if _, _, err := st.Snapshots().Restore(ctx, "before", snapshot.RestoreOptions{}, store.WriteOptions{Agent: "a"}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("a restore dropping another agent's lease: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Fatal("a refused restore moved the branch")
	}
}
