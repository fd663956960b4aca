package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestMaintenanceLockNamesItsHolders: a background roll-up's lock names
// this process and its git, and is stale only once both are gone, so no
// other process takes it between git's exit and the unlock (which would
// then remove the other's lock).
func TestMaintenanceLockNamesItsHolders(t *testing.T) {
	r := newRepo(t)
	for i := 0; i < 3; i++ {
		write(t, r, map[string]string{fmt.Sprintf("d%d.json", i): "1\n"})
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := dead.Process.Pid
	lock := r.maintenanceLock()
	for _, c := range []struct {
		content string
		stale   bool
	}{
		{fmt.Sprintf("%d %d\n", os.Getpid(), deadPid), false}, // git done, its starter not
		{fmt.Sprintf("%d %d\n", deadPid, os.Getpid()), false}, // its starter killed, git running
		{fmt.Sprintf("%d\n", deadPid), true},
		{fmt.Sprintf("%d %d\n", deadPid, deadPid), true},
		{"", false}, // being written (as older versions did), and new
	} {
		if err := os.WriteFile(lock, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(lock)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		got := maintenanceLockStale(f, fi)
		f.Close()
		if got != c.stale {
			t.Errorf("lock %q: stale = %v, want %v", c.content, got, c.stale)
		}
	}
	// A lock naming only an exited child not yet reaped (a zombie, as a
	// killed caller's git may stay where nothing reaps orphans) is stale.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); processAlive(zombie.Process.Pid) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if processAlive(zombie.Process.Pid) {
		t.Error("an exited child not yet reaped counts as alive")
	}
	zombie.Wait()
	// maintaining() believes a live lock only.
	os.WriteFile(lock, []byte(fmt.Sprintf("%d\n", deadPid)), 0o644)
	if r.maintaining() {
		t.Error("a dead process's lock reads as a running repack")
	}
	os.WriteFile(lock, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644)
	if !r.maintaining() {
		t.Error("a live process's lock does not read as a running repack")
	}

	// A stale lock is broken and taken; held by a live process, the lock
	// is refused, and nothing is left behind.
	if err := os.WriteFile(lock, []byte(fmt.Sprintf("%d\n", deadPid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, unlock, err := r.maintenanceCmd(context.Background(), false); err != nil {
		t.Fatalf("maintenance over a stale lock: %v", err)
	} else {
		if data, _ := os.ReadFile(lock); string(data) != strconv.Itoa(os.Getpid())+"\n" {
			t.Errorf("the lock taken over a stale one says %q", data)
		}
		unlock()
	}
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.maintenanceCmd(context.Background(), false); !errors.Is(err, ErrLocked) {
		t.Fatalf("maintenance while another holds the lock: %v", err)
	}
	if m, _ := filepath.Glob(lock + ".tmp-*"); len(m) > 0 {
		t.Fatalf("left %v", m)
	}
	os.Remove(lock)

	if err := r.MaintainInBackground(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) != 2 || f[0] != strconv.Itoa(os.Getpid()) {
		t.Fatalf("the background lock says %q, want this pid and git's", data)
	}
	r.background.Wait()
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock after the roll-up: %v", err)
	}
	if m, _ := filepath.Glob(lock + ".tmp-*"); len(m) > 0 {
		t.Fatalf("left %v", m)
	}
	git(t, r.Dir(), "fsck", "--strict")
}

// TestPacksLeftByKilledWritersGetRolledUp: packs that pile up without any
// write adding one (a writer killed between writing a new tail and
// removing the old leaves both) still start the roll-up once too many.
func TestPacksLeftByKilledWritersGetRolledUp(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	for i := 0; i < 12; i++ {
		cmd := exec.Command("git", "--git-dir", r.Dir(), "hash-object", "-w", "--stdin")
		cmd.Stdin = strings.NewReader(fmt.Sprintf("orphan %d\n", i))
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		pack := exec.Command("git", "--git-dir", r.Dir(), "pack-objects", "-q", filepath.Join(r.Dir(), "objects", "pack", "pack"))
		pack.Stdin = strings.NewReader(string(out))
		if out, err := pack.CombinedOutput(); err != nil {
			t.Fatalf("pack-objects: %v %s", err, out)
		}
	}
	r2, err := Open(context.Background(), r.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, r2, map[string]string{"a.json": "2\n"}) // extends a tail: adds no pack
	before, _ := r2.PackCount()
	r2.MaybeMaintain(10)
	r2.Close() // waits for the roll-up
	after, _ := r2.PackCount()
	if before <= 10 || after >= before {
		t.Fatalf("packs: %d before, %d after the roll-up", before, after)
	}
	git(t, r.Dir(), "fsck", "--strict")
}

// TestRepackStartingMidCommitKeepsKeptTailObjects: a commit extends a tail
// that carries our .keep (written during an earlier repack) while no
// repack runs, and a repack starts before the commit publishes. git's
// repack leaves out of its new pack every object a kept pack holds, so if
// the extended copy were not kept too, the repack would roll it up without
// those objects and the commit would then remove the kept original: both
// copies gone. Every object of the kept tail must survive.
func TestRepackStartingMidCommitKeepsKeptTailObjects(t *testing.T) {
	ctx := context.Background()
	r, kept, keptObjs := keptTailSetup(t)
	body := []byte("new\n")
	newPack, oldTail, durable, err := r.writePack([]rawObject{{typ: plumbing.BlobObject, hash: hashObject(plumbing.BlobObject, body), body: body}})
	if err != nil {
		t.Fatal(err)
	}
	if err := durable(); err != nil {
		t.Fatal(err)
	}
	if oldTail != kept.hash || newPack == oldTail {
		t.Fatalf("the write did not extend the kept tail: old %s new %s, kept %s", oldTail, newPack, kept.hash)
	}
	// A repack runs to the end before the commit publishes.
	if err := r.Maintain(ctx, false); err != nil {
		t.Fatal(err)
	}
	// Publishing removes the tail it replaced, unless a repack may read it.
	if !r.repackMayRead(oldTail) {
		r.removePack(oldTail, false)
	}
	checkObjs(t, r, keptObjs)
}

// keptTailSetup makes a store with a first unkept pack of seven objects
// and a kept tail (written while a repack "ran") holding two commits; it
// returns the kept tail's objects. The maintenance lock is gone after.
func keptTailSetup(t *testing.T) (*Repo, *tailPack, []string) {
	r := newRepo(t)
	first := map[string]string{}
	for i := 0; i < 5; i++ {
		first[fmt.Sprintf("a%02d.json", i)] = fmt.Sprintf("%d\n", i)
	}
	write(t, r, first)
	if err := os.WriteFile(r.maintenanceLock(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, r, map[string]string{"k1.json": "1\n"})
	write(t, r, map[string]string{"k2.json": "2\n"})
	kept, _ := r.currentTail()
	if kept == nil || !r.ourKeep(kept.hash) {
		t.Fatal("commits during a repack did not go to a kept pack")
	}
	var objs []string
	for _, e := range kept.objs {
		objs = append(objs, e.hash.String())
	}
	os.Remove(r.maintenanceLock())
	return r, kept, objs
}

func bigBlob() rawObject {
	body := make([]byte, tailPackMax+1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	return rawObject{typ: plumbing.BlobObject, hash: hashObject(plumbing.BlobObject, body), body: body}
}

func checkObjs(t *testing.T, r *Repo, objs []string) {
	t.Helper()
	for _, h := range objs {
		cmd := exec.Command("git", "--git-dir", r.Dir(), "cat-file", "-e", h)
		if err := cmd.Run(); err != nil {
			t.Errorf("object %s of the kept tail is lost", h)
		}
	}
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v\n%s", err, out)
	}
}

// fullCopyOfKeptTail: a commit extends a kept tail (fresh: just written)
// past tailPackMax, into a kept copy, and a repack (or
// gc) runs before the commit publishes. Had the repack released the full
// copy's .keep, it would roll the copy up without the kept tail's objects
// (--honor-pack-keep), and the commit would then remove the kept tail,
// which it sees as kept and so not read by the repack.
func fullCopyOfKeptTail(t *testing.T, full bool) {
	ctx := context.Background()
	r, kept, keptObjs := keptTailSetup(t)
	newPack, oldTail, durable, err := r.writePack([]rawObject{bigBlob()})
	if err != nil {
		t.Fatal(err)
	}
	if err := durable(); err != nil {
		t.Fatal(err)
	}
	if oldTail != kept.hash || newPack == oldTail || !r.ourKeep(newPack) {
		t.Fatalf("the write did not extend the kept tail into a kept copy")
	}
	fi, _ := os.Stat(r.Dir() + "/objects/pack/pack-" + newPack.String() + ".pack")
	if fi == nil || fi.Size() < tailPackMax {
		t.Fatalf("the copy is not full: %v", fi)
	}
	// A repack (or gc) starts and ends before the commit publishes.
	if err := r.Maintain(ctx, full); err != nil {
		t.Fatal(err)
	}
	// The publish step of Commit (tx.go), ok == true.
	if !r.repackMayRead(oldTail) {
		r.removePack(oldTail, false)
	}
	checkObjs(t, r, keptObjs)
}

// TestFullCopyOfKeptTailSurvivesRepack and ...GC: the same with the
// copy filled past tailPackMax, whose .keep a repack used to release at
// once for being full (no writer extends a full pack); it is released only
// with every other of our keeps, the tail it copied among them, so that
// both are rolled up whole.
func TestFullCopyOfKeptTailSurvivesRepack(t *testing.T) {
	fullCopyOfKeptTail(t, false)
}

func TestFullCopyOfKeptTailSurvivesGC(t *testing.T) {
	fullCopyOfKeptTail(t, true)
}

// TestFullKeptCopySurvivesTheRepackItRacesWith: the same loss inside one
// repack, with no second repack and nothing unusual about the lock: the
// repack takes its lock, a commit extends the (fresh, kept) tail past
// tailPackMax (kept: a repack runs), the repack's releaseKeeps then
// removes that copy's .keep because it is full, git rolls the copy up
// without the kept tail's objects, and the commit, publishing while the
// lock is still held, removes the kept tail (ours, so "not read").
func TestFullKeptCopySurvivesTheRepackItRacesWith(t *testing.T) {
	r, kept, keptObjs := keptTailSetup(t)
	// The repack takes its lock (maintenanceCmd: the link, then releaseKeeps).
	if err := os.WriteFile(r.maintenanceLock(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The commit's pack write, between the link and releaseKeeps.
	newPack, oldTail, durable, err := r.writePack([]rawObject{bigBlob()})
	if err != nil {
		t.Fatal(err)
	}
	if err := durable(); err != nil {
		t.Fatal(err)
	}
	if oldTail != kept.hash || !r.ourKeep(newPack) {
		t.Fatalf("the write did not extend the kept tail into a kept copy")
	}
	// The repack goes on: releaseKeeps, then git (the command maintenanceCmd builds).
	r.releaseKeeps()
	if out, err := exec.Command("git", "--git-dir", r.Dir(), "repack", "-d", "-q", "--geometric=2").CombinedOutput(); err != nil {
		t.Fatalf("repack: %v %s", err, out)
	}
	// The commit publishes while the lock is still held.
	if !r.repackMayRead(oldTail) {
		r.removePack(oldTail, false)
	}
	os.Remove(r.maintenanceLock())
	checkObjs(t, r, keptObjs)
}

// TestPacksWrittenDuringARepackAreRolledUpByTheNext: the packs commits
// write while a repack runs are kept from it, and the next repack rolls
// them all up, however fresh: released only once idle for a while, they
// piled up by the hundred under back-to-back repacks, and every write
// slowed as they did.
func TestPacksWrittenDuringARepackAreRolledUpByTheNext(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	// A repack "runs": commits go to kept packs, a new one each time
	// the last fills (each commit here writes a blob too large for
	// delta, so one fills in a few commits).
	if err := os.WriteFile(r.maintenanceLock(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 24; i++ {
		blob := make([]byte, 8<<10)
		for j := range blob {
			blob[j] = byte(rng.Uint32())
		}
		write(t, r, map[string]string{fmt.Sprintf("b%02d.bin", i): string(blob)})
	}
	os.Remove(r.maintenanceLock())
	keeps, _ := filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.keep"))
	if len(keeps) < 3 {
		t.Fatalf("%d kept packs after commits during a repack, want several", len(keeps))
	}
	if err := r.Maintain(ctx, false); err != nil {
		t.Fatal(err)
	}
	keeps, _ = filepath.Glob(filepath.Join(r.Dir(), "objects", "pack", "*.keep"))
	if n, _ := r.PackCount(); n > 2 || len(keeps) > 0 {
		t.Fatalf("after the next repack: %d packs, %d of them kept", n, len(keeps))
	}
	git(t, r.Dir(), "fsck", "--strict")
}
