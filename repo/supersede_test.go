package repo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// withGrace sets how long superseded tails stay, for one test.
func withGrace(t testing.TB, d time.Duration) {
	old := supersededGrace
	supersededGrace = d
	t.Cleanup(func() { supersededGrace = old })
}

// livePacks lists the .pack files of dir's store that are not superseded
// tails waiting out their grace.
func livePacks(t testing.TB, dir string) []string {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	out := packs[:0]
	for _, p := range packs {
		fi, err := os.Stat(strings.TrimSuffix(p, ".pack") + ".idx")
		if marked, _ := isSuperseded(fi); err == nil && !marked {
			out = append(out, p)
		}
	}
	return out
}

// TestPlainGitReadersRaceWriters: plain git readers listing the pack
// directory while four writers replace the tail never miss an object.
// Each round is new git processes (fresh listings of the packs): `git
// ls-tree | git mktree` of the head's root, whose every entry mktree looks
// up (the read that failed about once in a few hundred rounds when commits
// removed the tail they replaced), a `cat-file --batch-check` stream of
// nineteen names, and every tenth round `rev-list --objects`.
func TestPlainGitReadersRaceWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("races processes")
	}
	r := newRepo(t)
	const files = 100
	seed := map[string]string{}
	for i := range files {
		seed[fmt.Sprintf("f%02d.json", i)] = fmt.Sprintf("{\"v\": %d}\n", i)
	}
	write(t, r, seed)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var commits atomic.Int64
	for w := range 4 {
		wr, err := Open(ctx, r.Dir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer wr.Close()
			// Writers of other branches replace the tail the readers'
			// objects are in just the same, and wait for no lock.
			branch := "refs/heads/main"
			if w > 0 {
				branch = fmt.Sprintf("refs/heads/w%d", w)
			}
			for i := 0; ctx.Err() == nil; i++ {
				_, err := wr.Commit(context.Background(), branch, func(tx *Tx) (*CommitInfo, error) {
					for j := range 5 {
						tx.WriteFile(fmt.Sprintf("f%02d.json", (w*31+i*5+j)%files), fmt.Appendf(nil, "{\"w\": %d, \"i\": %d}\n", w, i))
					}
					sig := NewSignature("writer", time.Unix(1700000000, 0))
					return &CommitInfo{Author: sig, Committer: sig, Message: "w\n"}, nil
				}, CommitOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				commits.Add(1)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	env := append(os.Environ(), "GIT_DIR="+r.Dir())
	batch := "refs/heads/main\nrefs/heads/main^{tree}\n"
	for i := range 17 {
		batch += fmt.Sprintf("refs/heads/main:f%02d.json\n", i*5)
	}
	reads, failures := 0, 0
	for round := 0; reads < 1000; round++ {
		sh := exec.Command("sh", "-c", `git ls-tree refs/heads/main^{tree} | git mktree`)
		sh.Env = env
		if out, err := sh.CombinedOutput(); err != nil {
			failures++
			t.Errorf("round %d: ls-tree | mktree: %v\n%s", round, err, out)
		}
		reads++
		{
			cmd := exec.Command("git", "cat-file", "--batch-check")
			cmd.Env = env
			cmd.Stdin = strings.NewReader(batch)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "missing") {
				failures++
				t.Errorf("round %d: cat-file --batch-check: %v\n%s", round, err, out)
			}
			reads += 19
		}
		if round%10 == 0 {
			rl := exec.Command("git", "rev-list", "--objects", "-n", "3", "refs/heads/main")
			rl.Env = env
			if out, err := rl.CombinedOutput(); err != nil {
				failures++
				t.Errorf("round %d: rev-list --objects: %v\n%s", round, err, out)
			}
			reads++
		}
		if failures > 5 {
			break
		}
	}
	cancel()
	wg.Wait()
	t.Logf("%d reads, %d failures, %d commits", reads, failures, commits.Load())
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestSupersededTailsAreSwept: the tails commits replace while readers
// list the pack directory stay for their grace, then go: by a later
// commit of the same process, by the next process looking for a tail,
// and by maintenance.
func TestSupersededTailsAreSwept(t *testing.T) {
	withGrace(t, 100*time.Millisecond)
	r := newRepo(t)
	reader := func() { // a plain git reader's listing (see listings)
		if _, err := os.ReadDir(filepath.Join(r.Dir(), "objects", "pack")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		reader()
		write(t, r, map[string]string{"a.json": fmt.Sprintf("%d\n", i)})
	}
	all := func() int {
		p, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.pack"))
		return len(p)
	}
	if n := len(livePacks(t, r.Dir())); n != 1 {
		t.Fatalf("%d live packs, want the tail", n)
	}
	if n, _ := r.PackCount(); n != 1 {
		t.Fatalf("PackCount %d, want 1: superseded tails are not counted", n)
	}
	if all() < 2 {
		t.Fatal("every superseded tail went at once: plain git readers may miss them")
	}
	time.Sleep(150 * time.Millisecond)
	write(t, r, map[string]string{"a.json": "last\n"})
	if n := all(); n > 2 {
		t.Fatalf("%d packs after the grace: superseded tails were not swept by the next commit", n)
	}
	// A process killed before its tails' grace ended: the next process
	// sweeps them when it looks for a tail, and maintenance does too.
	for i := range 10 {
		reader()
		write(t, r, map[string]string{"b.json": fmt.Sprintf("%d\n", i)})
	}
	time.Sleep(150 * time.Millisecond)
	fresh, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	write(t, fresh, map[string]string{"c.json": "1\n"})
	if n := all(); n > 2 {
		t.Fatalf("%d packs: a new process did not sweep superseded tails", n)
	}
	write(t, fresh, map[string]string{"c.json": "2\n"})
	time.Sleep(150 * time.Millisecond)
	if err := r.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if n := all(); n != 1 {
		t.Fatalf("%d packs after maintenance, want 1", n)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestSupersededMarkSharedByAClone: `git clone` of a local path links the
// store's pack files into the clone, mode bits and all, so a tail the
// store supersedes reads as superseded in the clone too, where nothing
// else may hold its objects. The clone must keep it.
func TestSupersededMarkSharedByAClone(t *testing.T) {
	withGrace(t, 50*time.Millisecond)
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	clone := filepath.Join(t.TempDir(), "clone.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", "--local", r.Dir(), clone).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	for i := range 3 {
		write(t, r, map[string]string{"a.json": fmt.Sprintf("%d\n", i+2)}) // marks the linked tail
	}
	time.Sleep(100 * time.Millisecond)
	c, err := Open(context.Background(), clone, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	write(t, c, map[string]string{"b.json": "1\n"})
	if err := c.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	git(t, clone, "fsck", "--strict", "--no-dangling")
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestUnlistedTailsGoAtOnce: a superseded tail that no reader listed
// while it was the newest copy of its objects goes with the commit that
// supersedes it; one that a reader listed then stays, marked, for that
// reader.
func TestUnlistedTailsGoAtOnce(t *testing.T) {
	r := newRepo(t)
	tail := func() string {
		r.tailMu.Lock()
		defer r.tailMu.Unlock()
		return filepath.Join(r.Dir(), "objects", "pack", "pack-"+r.tail.hash.String())
	}
	for i := range 3 {
		write(t, r, map[string]string{"a.json": fmt.Sprintf("%d\n", i)})
	}
	if r.listed == nil || r.listed.fd < 0 {
		t.Skip("no inotify here: every superseded tail is kept")
	}
	for i := range 5 {
		old := tail()
		write(t, r, map[string]string{"a.json": fmt.Sprintf("b%d\n", i)})
		for _, ext := range []string{".pack", ".idx"} {
			if _, err := os.Stat(old + ext); !os.IsNotExist(err) {
				t.Fatalf("%s%s stays, though no one listed the pack directory: %v", filepath.Base(old), ext, err)
			}
		}
	}
	// A reader lists the directory: the tail it saw must stay.
	listed := tail()
	if _, err := os.ReadDir(filepath.Join(r.Dir(), "objects", "pack")); err != nil {
		t.Fatal(err)
	}
	write(t, r, map[string]string{"a.json": "c\n"})
	fi, err := os.Stat(listed + ".idx")
	if err != nil {
		t.Fatalf("the tail a reader listed went at once: %v", err)
	}
	if marked, _ := isSuperseded(fi); !marked {
		t.Fatal("the tail a reader listed is not marked superseded")
	}
	if _, err := os.Stat(listed + ".pack"); err != nil {
		t.Fatal(err)
	}
	// The next tail, written after the listing, goes at once again.
	next := tail()
	write(t, r, map[string]string{"a.json": "d\n"})
	if _, err := os.Stat(next + ".idx"); !os.IsNotExist(err) {
		t.Fatalf("a tail written after the listing stays: %v", err)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestSupersededTailsOfFilledTailsGo: writers that each make one commit
// (a CLI process each) supersede a tail per commit; those marked less
// than the grace before their chain's tail filled are held by the full
// tail, not by the new one, and must still go once their grace is over,
// rather than wait for a roll-up (which their count does not start).
func TestSupersededTailsOfFilledTailsGo(t *testing.T) {
	withGrace(t, 300*time.Millisecond)
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	rng := rand.New(rand.NewPCG(5, 6))
	commit := func(i int) {
		w, err := Open(context.Background(), r.Dir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		blob := make([]byte, 6<<10) // incompressible: a tail fills in a few commits
		for j := range blob {
			blob[j] = byte(rng.Uint32())
		}
		write(t, w, map[string]string{fmt.Sprintf("b%02d.bin", i): string(blob)})
		w.Close()
	}
	for i := 0; i < 30; i++ {
		commit(i)
	}
	time.Sleep(400 * time.Millisecond)
	commit(30)
	packs, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.pack"))
	if live := livePacks(t, r.Dir()); len(packs)-len(live) > 1 {
		t.Fatalf("%d superseded tails left of %d packs", len(packs)-len(live), len(packs))
	}
	git(t, r.Dir(), "fsck", "--strict")
}
