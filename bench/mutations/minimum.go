package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// fileMinimum does, per mutation, only the file-system work that git's
// formats ask of a commit: a pack holding exactly the commit's new objects
// (its blob, the trees on the changed path, the commit), written whole
// and uncompressed as the store writes objects, and its index, each under
// a temporary name renamed in; then the branch's ref through git's
// lockfile protocol (<ref>.lock created exclusively, the new value written
// into it, renamed over the ref). Under fsync it flushes on aiwg-state's
// schedule: the pack and index together, then the pack directory together
// with the ref's new file, then, after the rename, the ref's directory.
// No object is hashed, compressed or encoded. It is the floor for any
// store whose every mutation is a commit git can read at once, and so
// shows how much of the in-process cost is the format's and how much is
// ours.
type fileMinimum struct {
	packDir, refDir string
	sync            bool
	// twoRounds, under fsync, makes the same five flushes in two rounds
	// rather than three: the three files' data at once, then, after all
	// three renames, both directories at once. That gives up the order
	// (the ref's new name could reach the disk before the pack's), and is
	// measured only to show whether the rounds or the flushes cost.
	twoRounds      bool
	pack, idx, ref []byte
	prev           string
}

// newFileMinimum sizes the pack and index as those of the newest commit
// of the store at gitDir (see ownPack).
func newFileMinimum(work, gitDir string, sync, twoRounds bool) *fileMinimum {
	dir := filepath.Join(work, fmt.Sprintf("minimum-%v-%v", sync, twoRounds))
	pack, idx := ownPack(gitDir)
	m := &fileMinimum{
		packDir:   filepath.Join(dir, "objects", "pack"),
		refDir:    filepath.Join(dir, "refs", "heads"),
		sync:      sync,
		twoRounds: twoRounds,
		pack:      make([]byte, pack),
		idx:       make([]byte, idx),
		ref:       []byte("0123456789abcdef0123456789abcdef01234567\n"),
	}
	check(os.MkdirAll(m.packDir, 0o755))
	check(os.MkdirAll(m.refDir, 0o755))
	check(os.WriteFile(filepath.Join(m.refDir, "main"), m.ref, 0o644))
	return m
}

func (m *fileMinimum) mutate(i int) time.Duration {
	defer m.dropPrevious(filepath.Join(m.packDir, fmt.Sprintf("pack-%040d", i)))
	t0 := time.Now()
	base := filepath.Join(m.packDir, fmt.Sprintf("pack-%040d", i))
	if m.twoRounds {
		return m.mutateInTwoRounds(t0, base)
	}
	m.both(func() { m.replace(m.packDir, base+".idx", m.idx) }, func() { m.replace(m.packDir, base+".pack", m.pack) })
	var lock string
	m.both(func() { lock = m.lockRef() }, func() {
		if m.sync {
			syncDir(m.packDir)
		}
	})
	check(os.Rename(lock, filepath.Join(m.refDir, "main")))
	if m.sync {
		syncDir(m.refDir)
	}
	return time.Since(t0)
}

// lockRef creates the ref's lock exclusively and writes the new value
// into it, as git's lockfile protocol does.
func (m *fileMinimum) lockRef() string {
	path := filepath.Join(m.refDir, "main.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	check(err)
	_, err = f.Write(m.ref)
	check(err)
	if m.sync {
		check(f.Sync())
	}
	check(f.Close())
	return path
}

func (m *fileMinimum) mutateInTwoRounds(t0 time.Time, base string) time.Duration {
	var idx, pack, lock string
	m.both(func() { idx = m.temp(m.packDir, m.idx) }, func() {
		m.both(func() { pack = m.temp(m.packDir, m.pack) }, func() { lock = m.lockRef() })
	})
	check(os.Rename(idx, base+".idx"))
	check(os.Rename(pack, base+".pack"))
	check(os.Rename(lock, filepath.Join(m.refDir, "main")))
	m.both(func() { syncDir(m.packDir) }, func() { syncDir(m.refDir) })
	return time.Since(t0)
}

// dropPrevious removes the previous mutation's pack, once this one is
// timed: only so the run's disk use stays bounded.
func (m *fileMinimum) dropPrevious(base string) {
	if m.prev != "" {
		check(os.Remove(m.prev + ".pack"))
		check(os.Remove(m.prev + ".idx"))
	}
	m.prev = base
}

// both runs a and b, at once under fsync (whose waits overlap), else in
// turn.
func (m *fileMinimum) both(a, b func()) {
	if !m.sync {
		a()
		b()
		return
	}
	done := make(chan struct{})
	go func() { a(); close(done) }()
	b()
	<-done
}

func (m *fileMinimum) replace(dir, dst string, data []byte) {
	check(os.Rename(m.temp(dir, data), dst))
}

func (m *fileMinimum) temp(dir string, data []byte) string {
	f, err := os.CreateTemp(dir, "tmp_")
	check(err)
	_, err = f.Write(data)
	check(err)
	if m.sync {
		check(f.Sync())
	}
	check(f.Close())
	return f.Name()
}

func syncDir(dir string) {
	d, err := os.Open(dir)
	check(err)
	check(d.Sync())
	d.Close()
}
