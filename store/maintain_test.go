package store_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/store"
)

// TestPacksAreRolledUpAutomatically: writes that keep adding packs (each
// value fills a tail pack of its own) start the background roll-up once
// the store holds more than 50 packs, as git's gc --auto would, without
// anyone running gc; the history stays whole.
func TestPacksAreRolledUpAutomatically(t *testing.T) {
	ctx := context.Background()
	st, err := aiwgstate.Init(ctx, filepath.Join(t.TempDir(), "state.git"), store.InitOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	big := make([]byte, 80<<10)
	const writes = 70
	for i := 0; i < writes; i++ {
		for j := range big {
			big[j] = byte(rng.Uint32())
		}
		v := fmt.Sprintf("%q", hex.EncodeToString(big))
		if _, err := st.Set(ctx, fmt.Sprintf("blobs/b%02d.json", i), "data", []byte(v), store.WriteOptions{Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	// Close waits for a roll-up it started.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(st.Dir(), "objects", "pack", "*.pack"))
	if len(packs) > 50 {
		t.Fatalf("%d packs after %d writes that each filled one: no automatic roll-up", len(packs), writes)
	}
	if got := storetest.Git(t, st, "rev-list", "--count", "main"); got != fmt.Sprintf("%d\n", writes+1) {
		t.Fatalf("rev-list --count = %q", got)
	}
	storetest.Fsck(t, st)
}

// TestObjectBytesCountsObjectsOnly: what gc reports is the objects' size,
// so that a full gc of many small writes shows the space it saved, not
// the bitmap and commit-graph git writes beside the new pack.
func TestObjectBytesCountsObjectsOnly(t *testing.T) {
	ctx := context.Background()
	st, err := aiwgstate.Init(ctx, filepath.Join(t.TempDir(), "state.git"), store.InitOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 30; i++ {
		if _, err := st.Set(ctx, fmt.Sprintf("d%d.json", i%5), "n", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := st.ObjectBytes()
	if err != nil || before == 0 {
		t.Fatalf("before gc: %d bytes, %v", before, err)
	}
	if err := st.GC(ctx, true); err != nil {
		t.Fatal(err)
	}
	after, err := st.ObjectBytes()
	if err != nil {
		t.Fatal(err)
	}
	var packed int64
	for _, pattern := range []string{"*.pack", "*.idx"} {
		files, _ := filepath.Glob(filepath.Join(st.Dir(), "objects", "pack", pattern))
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			packed += fi.Size()
		}
	}
	if after != packed || after >= before {
		t.Errorf("object bytes %d -> %d; the packs and indexes after gc hold %d", before, after, packed)
	}
}

// TestFsckNamesPackLeftoversAndGCRepairs: a pack whose index is gone (its
// objects unreadable by git), and an index and a bitmap without their
// pack (git's garbage), are each named by fsck with gc as the repair;
// gc indexes the pack again and removes the rest, and the history reads.
func TestFsckNamesPackLeftoversAndGCRepairs(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	for i := 0; i < 3; i++ {
		if _, err := st.Set(ctx, "d.json", "n", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(st.Dir(), "objects", "pack")
	idxs, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	var newest string
	var at int64
	for _, p := range idxs {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().UnixNano() > at {
			newest, at = p, fi.ModTime().UnixNano()
		}
	}
	if err := os.Remove(newest); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "pack-"+hex.EncodeToString(make([]byte, 20)))
	os.WriteFile(gone+".idx", []byte("x"), 0o444)
	os.WriteFile(gone+".bitmap", []byte("x"), 0o444)
	old := time.Now().Add(-time.Minute)
	for _, p := range []string{newest[:len(newest)-4] + ".pack", gone + ".idx", gone + ".bitmap"} {
		os.Chtimes(p, old, old)
	}
	rep, err := st.Fsck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"objects/pack/" + filepath.Base(newest[:len(newest)-4]) + ".pack": true,
		"objects/pack/" + filepath.Base(gone) + ".idx":                    true,
		"objects/pack/" + filepath.Base(gone) + ".bitmap":                 true,
	}
	for _, p := range rep.Problems {
		if want[p.File] {
			if !strings.Contains(p.Repair, "aiwg-state gc") {
				t.Errorf("%s: repair %q", p.File, p.Repair)
			}
			delete(want, p.File)
		}
	}
	if len(want) != 0 {
		t.Fatalf("fsck did not name %v: %+v", want, rep.Problems)
	}
	if err := st.GC(ctx, false); err != nil {
		t.Fatal(err)
	}
	if rep, err := st.Fsck(ctx); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("after gc: %+v, %v", rep, err)
	}
	storetest.Fsck(t, st)
	if got, err := st.Get(ctx, "d.json", "n", store.ReadOptions{}); err != nil || strings.TrimSpace(string(got)) != "2" {
		t.Fatalf("get = %s, %v", got, err)
	}
}
