package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockKeepsItsMarkerUntilRemoved: the ref's value goes to a file of
// its own, so the lock carries the marker that makes it recognisable
// after a kill for as long as it exists, even after the value is written
// and put in place.
func TestLockKeepsItsMarkerUntilRemoved(t *testing.T) {
	r := newRepo(t)
	ref := filepath.Join(r.dir, "refs", "heads", "topic")
	l, err := r.acquire(context.Background(), ref+".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	const value = "0123456789012345678901234567890123456789\n"
	l.WriteString(value)
	if err := l.publish(ref, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(ref); string(got) != value {
		t.Fatalf("ref = %q, want %q", got, value)
	}
	if got, _ := os.ReadFile(ref + ".lock"); !strings.HasPrefix(string(got), lockMarker) {
		t.Fatalf("lock after publish = %q, want the marker", got)
	}
	if left, _ := filepath.Glob(ref + ".lock.*"); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestDeadWritersLockIsBrokenGitsIsNot: the lock of a writer that died
// (marker, flock released by the kernel) is broken by the next writer; a
// lock git made (no marker) is never broken, and the writer reports it.
func TestDeadWritersLockIsBrokenGitsIsNot(t *testing.T) {
	r := newRepo(t)
	r.opts.LockTimeout = 300 * time.Millisecond
	ctx := context.Background()
	write(t, r, map[string]string{"a.json": "1\n"})
	lockPath := filepath.Join(r.dir, "refs", "heads", "main.lock")

	// Another process's Repo takes the lock and dies: the kernel drops
	// its flock, and nothing else changes.
	other, err := Open(ctx, r.dir, r.opts)
	if err != nil {
		t.Fatal(err)
	}
	dead, err := other.acquire(ctx, lockPath)
	if err != nil {
		t.Fatal(err)
	}
	dead.WriteString("0123456789012345678901234567890123456789\n")
	other.lockF.Close()
	if dead.turn != nil {
		dead.turn.f.Close() // and its place in the lock's line
	}
	write(t, r, map[string]string{"a.json": "2\n"})

	if err := os.WriteFile(lockPath, []byte("0123456789012345678901234567890123456789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = r.Commit(ctx, "refs/heads/main", func(tx *Tx) (*CommitInfo, error) {
		tx.WriteFile("a.json", []byte("3\n"))
		sig := NewSignature("agent-1", time.Unix(1700000000, 0))
		return &CommitInfo{Author: sig, Committer: sig, Message: "x\n"}, nil
	}, CommitOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("commit over git's lock: %v, want ErrLocked", err)
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Fatalf("git's lock was removed: %v", err)
	}
}

// TestLiveLockIsNeverBroken: a waiter gives up on a live writer's lock
// rather than taking it.
func TestLiveLockIsNeverBroken(t *testing.T) {
	r := newRepo(t)
	r.opts.LockTimeout = 200 * time.Millisecond
	lockPath := filepath.Join(r.dir, "refs", "heads", "main.lock")
	live, err := r.acquire(context.Background(), lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer live.release()
	if _, err := r.acquire(context.Background(), lockPath); !errors.Is(err, ErrLocked) {
		t.Fatalf("second acquire: %v, want ErrLocked", err)
	}
	if cur, err := os.Stat(lockPath); err != nil {
		t.Fatal(err)
	} else if mine, _ := live.held.Stat(); !os.SameFile(cur, mine) {
		t.Fatal("the live lock was replaced")
	}
}

// TestStrayTempFilesAreSwept: temporary files of killed writers are
// removed once old, or at once when no live writer holds the lock they
// belong to; a fresh one under a live writer's lock, and locks themselves,
// are left alone.
func TestStrayTempFilesAreSwept(t *testing.T) {
	r := newRepo(t)
	live, err := r.acquire(context.Background(), filepath.Join(r.dir, "HEAD.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.release()
	old := time.Now().Add(-2 * time.Hour)
	paths := map[string]bool{ // path -> should survive
		filepath.Join(r.dir, "refs", "heads", "main.lock.k3j.lock"): false,
		filepath.Join(r.dir, "packed-refs.lock.a1.lock"):            false,
		filepath.Join(r.dir, "HEAD.lock.zz.lock"):                   true,  // fresh, its lock held
		filepath.Join(r.dir, "refs", "heads", "fresh.lock.zz.lock"): false, // fresh, no lock: a dead writer's
		filepath.Join(r.dir, "refs", "heads", "topic.lock"):         true,  // a lock: git's business
		filepath.Join(r.dir, "refs", "heads", "x.lock.y"):           true,
	}
	for p := range paths {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(p, "zz.lock") {
			os.Chtimes(p, old, old)
		}
	}
	r.removeStaleTemp()
	for p, keep := range paths {
		_, err := os.Stat(p)
		if exists := err == nil; exists != keep {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), exists, keep)
		}
	}
}

// TestLockFilesOfDeadReposAreSwept: a Repo's lock file goes when it
// closes; one whose process died is swept; a live one stays.
func TestLockFilesOfDeadReposAreSwept(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	lockPath := filepath.Join(r.dir, "refs", "heads", "x.lock")
	files := func() []string {
		m, _ := filepath.Glob(filepath.Join(r.dir, "aiwg", "locks", "held-*"))
		return m
	}
	// lockOnce opens the store as another process would (or uses r) and
	// takes and releases a lock, which makes the Repo's lock file.
	lockOnce := func(open bool) *Repo {
		rr := r
		if open {
			var err error
			if rr, err = Open(ctx, r.dir, r.opts); err != nil {
				t.Fatal(err)
			}
		}
		l, err := rr.acquire(ctx, lockPath)
		if err != nil {
			t.Fatal(err)
		}
		l.release()
		return rr
	}
	lockOnce(false)
	lockOnce(true).lockF.Close() // its process dies
	if n := len(files()); n != 2 {
		t.Fatalf("%d lock files, want 2", n)
	}
	r.sweepLockFiles()
	if got := files(); len(got) != 1 || got[0] != r.lockPath {
		t.Fatalf("after sweep: %v, want only the live %s", got, r.lockPath)
	}
	lockOnce(true).Close()
	if n := len(files()); n != 1 {
		t.Fatalf("Close left its lock file: %d files", n)
	}
}

// TestALockTakenByHandIsLeftToItsTaker: when a writer's lock is removed by
// hand and git takes the name, the writer neither publishes nor, on its
// way out, removes git's lock.
func TestALockTakenByHandIsLeftToItsTaker(t *testing.T) {
	r := newRepo(t)
	ref := filepath.Join(r.dir, "refs", "heads", "topic")
	l, err := r.acquire(context.Background(), ref+".lock")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(ref + ".lock")
	if err := os.WriteFile(ref+".lock", []byte("git's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.WriteString("0123456789012345678901234567890123456789\n")
	if err := l.publish(ref, false); !errors.Is(err, ErrLocked) {
		t.Fatalf("publish under a lock taken by another: %v", err)
	}
	l.release()
	if got, err := os.ReadFile(ref + ".lock"); err != nil || string(got) != "git's\n" {
		t.Fatalf("git's lock after the release: %q, %v", got, err)
	}
	if _, err := os.Stat(ref); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the ref was written: %v", err)
	}
}
