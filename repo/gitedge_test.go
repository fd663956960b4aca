package repo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// setHook replaces a test seam of the write path for the test's length.
func setHook[F any](t *testing.T, hook *F, f F) {
	old := *hook
	*hook = f
	t.Cleanup(func() { *hook = old })
}

// checkHead reads the branch's head and its file back through a fresh
// Repo, and has git check the store.
func checkHead(t *testing.T, r *Repo, c *Commit, path, want string) {
	t.Helper()
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "main")); got != c.Hash.String() {
		t.Fatalf("main = %s, want %s", got, c.Hash)
	}
	if got := git(t, r.Dir(), "show", "main:"+path); got != want {
		t.Fatalf("git show main:%s = %q, want %q", path, got, want)
	}
	fresh, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, err := fresh.ReadFileAt(c.Tree, path)
	if err != nil || string(got) != want {
		t.Fatalf("read %s = %q, %v; want %q", path, got, err, want)
	}
}

// TestGitGCBetweenPackAndIndexRenames: a `git gc` that runs after a
// commit's pack is in place and before its index is must not lose the
// commit. git gc deletes an index whose pack is missing as garbage, so
// the pack goes first, as git's own writers do; and its repack deletes
// every unkept .pack it lists, indexed or not, so the pack is kept.
func TestGitGCBetweenPackAndIndexRenames(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	write(t, r, map[string]string{"a.json": "2\n"})
	ran := false
	setHook(t, &testHookPackRenamed, func(base string) {
		if ran {
			return
		}
		ran = true
		if !exists(base+".pack") || exists(base+".idx") || !exists(base+".keep") {
			t.Errorf("between the renames: pack %v, index %v, keep %v; want the pack and its keep only",
				exists(base+".pack"), exists(base+".idx"), exists(base+".keep"))
		}
		git(t, r.Dir(), "gc", "-q")
	})
	c := write(t, r, map[string]string{"a.json": "3\n"})
	if !ran {
		t.Fatal("the seam did not run")
	}
	checkHead(t, r, c, "a.json", "3\n")
}

// TestRepackBeforeRefIsPublished: `git repack -a -d` (and git gc) running
// once a commit's pack and index are in place but before the branch
// names the commit would drop its objects, unreachable at the repack's
// snapshot, and delete the pack, unless the pack is kept until the ref
// is published, as git's receive-pack keeps a pushed pack.
func TestRepackBeforeRefIsPublished(t *testing.T) {
	for _, args := range [][]string{{"repack", "-a", "-d", "-q"}, {"gc", "-q"}, {"repack", "-A", "-d", "-q"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := newRepo(t)
			write(t, r, map[string]string{"a.json": "1\n"})
			write(t, r, map[string]string{"b.json": "2\n"}) // extends the tail
			dir := filepath.Join(r.Dir(), "objects", "pack")
			var keeps []string
			setHook(t, &testHookBeforeRef, func() {
				keeps, _ = filepath.Glob(filepath.Join(dir, "*.keep"))
				git(t, r.Dir(), args...)
			})
			c := write(t, r, map[string]string{"a.json": "3\n"})
			if len(keeps) != 1 {
				t.Errorf("keeps before the ref moved: %v, want the new pack's", keeps)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*.keep")); len(left) != 0 {
				t.Errorf("keeps left after the commit: %v", left)
			}
			checkHead(t, r, c, "a.json", "3\n")
			// And the next commit, extending what it finds, too.
			setHook(t, &testHookBeforeRef, func() {})
			c = write(t, r, map[string]string{"a.json": "4\n"})
			checkHead(t, r, c, "a.json", "4\n")
		})
	}
}

// TestInFlightTailIsNotSuperseded: a commit on another branch that
// extends a pack whose own commit is not yet published must not
// supersede it: it is kept, and a repack in between would roll the copy
// up without the kept pack's objects.
func TestInFlightTailIsNotSuperseded(t *testing.T) {
	withGrace(t, 0)
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	ctx := context.Background()
	var inner *Commit
	setHook(t, &testHookBeforeRef, func() {
		setHook(t, &testHookBeforeRef, func() {})
		var err error
		inner, err = r.Commit(ctx, "refs/heads/side", func(tx *Tx) (*CommitInfo, error) {
			tx.WriteFile("s.json", []byte("s\n"))
			sig := NewSignature("agent-2", time.Unix(1700000000, 0))
			return &CommitInfo{Author: sig, Committer: sig, Message: "side\n"}, nil
		}, CommitOptions{})
		if err != nil {
			t.Error(err)
		}
		// The side branch is published, its pack's keep gone; the
		// pack main's commit is publishing stays kept and unmarked.
		git(t, r.Dir(), "repack", "-a", "-d", "-q")
	})
	c := write(t, r, map[string]string{"a.json": "2\n"})
	checkHead(t, r, c, "a.json", "2\n")
	if got := git(t, r.Dir(), "show", inner.Hash.String()+":s.json"); got != "s\n" {
		t.Fatalf("side: %q", got)
	}
	r.sweepSuperseded()
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestKeepOfKilledWriterIsSwept: a writer killed between putting its pack
// in place and publishing its commit leaves the pack's .keep; maintenance
// removes it once its process is gone, and leaves a live one's.
func TestKeepOfKilledWriterIsSwept(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	dir := filepath.Join(r.Dir(), "objects", "pack")
	host, _ := os.Hostname()
	packs, _ := filepath.Glob(filepath.Join(dir, "pack-*.pack"))
	if len(packs) == 0 {
		t.Fatal("no pack")
	}
	keep := strings.TrimSuffix(packs[0], ".pack") + ".keep"
	if err := os.WriteFile(keep, []byte(fmt.Sprintf("aiwg-state %d on %s\n", deadPid(t), host)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A live process's keep, on a pack of its own, stays.
	live := filepath.Join(dir, "pack-"+strings.Repeat("ab", 20))
	os.WriteFile(live+".pack", []byte("PACK"), 0o444)
	os.WriteFile(live+".idx", []byte("x"), 0o444)
	os.WriteFile(live+".keep", inFlightKeep(), 0o644)
	r.removeStaleTemp()
	if exists(keep) {
		t.Error("the keep of a dead writer stayed")
	}
	if !exists(live + ".keep") {
		t.Error("the keep of a live writer was removed")
	}
}

// TestPackWithoutIndexIsRecovered: a pack whose index is gone (an older
// aiwg-state renamed the index first, and a git gc deleted it as
// garbage; or a writer was killed between the renames) is reported and
// indexed again by maintenance with git index-pack.
func TestPackWithoutIndexIsRecovered(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	c := write(t, r, map[string]string{"a.json": "2\n"})
	idx := newestIdx(t, r)
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(idx)
	stray := filepath.Join(dir, "pack-"+strings.Repeat("cd", 20))
	os.WriteFile(stray+".bitmap", []byte("BITM"), 0o444)
	os.WriteFile(stray+".rev", []byte("RIDX"), 0o444)
	os.WriteFile(stray+".idx", []byte("x"), 0o444)
	long := time.Now().Add(-time.Minute)
	for _, p := range []string{strings.TrimSuffix(idx, ".idx") + ".pack", stray + ".bitmap", stray + ".rev", stray + ".idx"} {
		os.Chtimes(p, long, long)
	}
	left, err := r.PackLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[PackLeftoverKind]int{}
	for _, l := range left {
		kinds[l.Kind]++
	}
	if kinds[PackWithoutIndex] != 1 || kinds[IndexWithoutPack] != 1 || kinds[StrayPackFile] != 2 {
		t.Fatalf("leftovers: %+v", left)
	}
	if err := r.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if left, _ := r.PackLeftovers(); len(left) != 0 {
		t.Fatalf("after maintenance: %+v", left)
	}
	checkHead(t, r, c, "a.json", "2\n")
	if got := git(t, r.Dir(), "count-objects", "-v"); !strings.Contains(got, "garbage: 0") {
		t.Fatalf("git count-objects: %s", got)
	}
}

// TestPackWithoutIndexBeyondRepair: a pack git cannot index is named in
// maintenance's error, and left for the user to restore.
func TestPackWithoutIndexBeyondRepair(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	bad := filepath.Join(r.Dir(), "objects", "pack", "pack-"+strings.Repeat("ef", 20)+".pack")
	os.WriteFile(bad, []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x05truncated"), 0o444)
	_, err := r.RecoverPacks(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Base(bad)) {
		t.Fatalf("err = %v", err)
	}
	if !exists(bad) {
		t.Fatal("the pack was removed")
	}
}

// TestIndexVersion1 and TestIndexLargeOffsets: packs git indexed with a
// version 1 index, or a version 2 one listing offsets in its 64-bit
// table, read and extend as any other.
func TestIndexVersion1(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n", "d/b.json": "2\n"})
	write(t, r, map[string]string{"a.json": "3\n"})
	git(t, r.Dir(), "-c", "pack.indexVersion=1", "repack", "-a", "-d", "-q")
	idx, err := os.ReadFile(newestIdx(t, r))
	if err != nil || len(idx) < 4 || string(idx[:4]) == "\xfftOc" {
		t.Fatalf("git wrote no version 1 index: %v", err)
	}
	gitIndexedPackReadsAndExtends(t, r)
}

func TestIndexLargeOffsets(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n", "d/b.json": "2\n"})
	write(t, r, map[string]string{"a.json": "3\n"})
	git(t, r.Dir(), "repack", "-a", "-d", "-q")
	idx := newestIdx(t, r)
	pack := strings.TrimSuffix(idx, ".idx") + ".pack"
	os.Remove(idx)
	git(t, r.Dir(), "index-pack", "--index-version=2,0x20", pack)
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := parseIdx(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 8+1024+28*len(objs)+40 {
		t.Fatal("git wrote no 64-bit offsets")
	}
	gitIndexedPackReadsAndExtends(t, r)
}

// gitIndexedPackReadsAndExtends: a fresh Repo reads the head's files, a
// commit extends the pack as the tail, and git accepts the result.
func gitIndexedPackReadsAndExtends(t *testing.T, r *Repo) {
	t.Helper()
	ctx := context.Background()
	fresh, err := Open(ctx, r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	head, _, err := fresh.readRef("refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	c, err := fresh.ReadCommit(head)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.json": "3\n", "d/b.json": "2\n"} {
		if got, err := fresh.ReadFileAt(c.Tree, p); err != nil || string(got) != want {
			t.Fatalf("%s = %q, %v", p, got, err)
		}
	}
	fresh.mu.Lock()
	ps := fresh.objs.withPrefix(head.String()[:8])
	fresh.mu.Unlock()
	if len(ps) != 1 {
		t.Fatalf("prefix lookup: %v", ps)
	}
	c2 := write(t, fresh, map[string]string{"a.json": "4\n"})
	checkHead(t, fresh, c2, "a.json", "4\n")
	if got := git(t, r.Dir(), "show", "main~1:d/b.json"); got != "2\n" {
		t.Fatalf("main~1:d/b.json = %q", got)
	}
	if err := fresh.Maintain(ctx, false); err != nil {
		t.Fatal(err)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestRemovedTailTakesGitsFiles: a pack git wrote with a bitmap and a
// reverse index, extended as the tail by one process and removed by
// another, goes with those files.
func TestRemovedTailTakesGitsFiles(t *testing.T) {
	withGrace(t, 0)
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	git(t, r.Dir(), "-c", "pack.writeReverseIndex=true", "repack", "-a", "-d", "-q", "--write-bitmap-index")
	gitPack := strings.TrimSuffix(newestIdx(t, r), ".idx")
	if !exists(gitPack+".bitmap") || !exists(gitPack+".rev") {
		t.Skip("git wrote no bitmap or reverse index")
	}
	w, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, w, map[string]string{"a.json": "2\n"}) // supersedes git's pack
	// Another process finds the tail and sweeps the superseded pack.
	other, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	c := write(t, other, map[string]string{"a.json": "3\n"})
	for _, ext := range []string{".pack", ".idx", ".bitmap", ".rev"} {
		if exists(gitPack + ext) {
			t.Errorf("%s stayed", filepath.Base(gitPack+ext))
		}
	}
	checkHead(t, other, c, "a.json", "3\n")
	if got := git(t, r.Dir(), "count-objects", "-v"); !strings.Contains(got, "garbage: 0") {
		t.Fatalf("git count-objects: %s", got)
	}
}

// TestIndexDeletedByRunningGitGCIsWrittenAgain: in a large pack directory
// git gc's listing may catch a new index without the pack renamed just
// before it, and delete it as garbage when it ends. While a git gc runs
// (gc.pid names a live process) a write waits for it before its ref
// names the pack, and writes the index again if it is gone.
func TestIndexDeletedByRunningGitGCIsWrittenAgain(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	host, _ := os.Hostname()
	gc := exec.Command("sleep", "30")
	if err := gc.Start(); err != nil {
		t.Fatal(err)
	}
	defer gc.Process.Kill()
	pidFile := filepath.Join(r.Dir(), "gc.pid")
	ran := false
	setHook(t, &testHookPackRenamed, func(base string) {
		if ran {
			return
		}
		ran = true
		os.WriteFile(pidFile, []byte(fmt.Sprintf("%d %s", gc.Process.Pid, host)), 0o644)
		go func() {
			// What git gc's clean-up does once the index is there.
			for !exists(base + ".idx") {
				time.Sleep(time.Millisecond)
			}
			os.Remove(base + ".idx")
			time.Sleep(20 * time.Millisecond)
			gc.Process.Kill()
			gc.Wait()
			os.Remove(pidFile)
		}()
	})
	c := write(t, r, map[string]string{"a.json": "2\n"})
	if !ran {
		t.Fatal("the seam did not run")
	}
	checkHead(t, r, c, "a.json", "2\n")
}

// FuzzParseIdx: any bytes read as a pack index either fail or give
// entries that encode back to an index of the same entries; a version 1
// index renders as version 2 without failing where parsing did not.
func FuzzParseIdx(f *testing.F) {
	entries := []packEntry{{offset: 12, crc: 1}, {offset: 0x90000000, crc: 2}}
	entries[0].hash[0], entries[1].hash[0] = 0x01, 0xf0
	f.Add(encodeIdx(entries, plumbing.ZeroHash))
	f.Add(make([]byte, 1024+40))
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, v1, err := parseIdx(b)
		if err != nil {
			return
		}
		back, _, err := parseIdx(encodeIdx(objs, plumbing.ZeroHash))
		if err != nil || len(back) != len(objs) {
			t.Fatalf("re-encoded: %d entries, %v; want %d", len(back), err, len(objs))
		}
		for i := range objs {
			if back[i].hash != objs[i].hash || back[i].offset != objs[i].offset {
				t.Fatalf("entry %d: %+v, want %+v", i, back[i], objs[i])
			}
		}
		if v1 && checkIdxSum(b) == nil {
			if _, err := v1AsV2(b); err != nil {
				t.Fatal(err)
			}
		}
		fillCRCs(objs, b) // must not panic, whatever the offsets
	})
}

// TestTagSurvivesRepackBeforeItsRef: a checkpoint's tag object is kept
// until its ref names it, as a commit's pack is: a git repack -a -d run
// between the two would otherwise drop the tag as unreachable.
func TestTagSurvivesRepackBeforeItsRef(t *testing.T) {
	r := newRepo(t)
	c := write(t, r, map[string]string{"a.json": "1\n"})
	ref := "refs/tags/checkpoints/s1/first"
	var keeps []string
	h, err := r.writeTag(&Tag{Name: "checkpoints/s1/first", Target: c.Hash, Tagger: NewSignature("agent", time.Now()), Message: "first\n"},
		func(h plumbing.Hash) error {
			keeps, _ = filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.keep"))
			git(t, r.Dir(), "repack", "-a", "-d", "-q")
			return r.UpdateRef(context.Background(), ref, plumbing.ZeroHash, h)
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(keeps) != 1 {
		t.Errorf("keeps while the tag's ref was made: %v, want the tag's pack", keeps)
	}
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", ref)); got != h.String() {
		t.Fatalf("%s names %s, want %s", ref, got, h)
	}
	if typ := strings.TrimSpace(git(t, r.Dir(), "cat-file", "-t", h.String())); typ != "tag" {
		t.Fatalf("the tag object: %q", typ)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}
