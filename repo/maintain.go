package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// MaybeMaintain starts the background roll-up of small packs when the
// store holds more than limit of them, as git's gc --auto does after the
// commands that add packs. It reads the pack count only when this Repo has
// added a pack since the last call (a commit that fills the tail, a
// fetch), not after every commit: the count grows once per tail, every
// few dozen commits, and listing a pack directory that has seen thousands
// of commits costs up to a millisecond. A roll-up that could not start
// for a reason other than another one running is tried again on the next
// call.
//
// A count over the limit is acted on once: the roll-up starts, or another
// one is running (in this process or another), and the next count waits
// for the next pack added. Counting again on every write while a roll-up
// runs would list the pack directory once a commit, a cost that grows
// with the packs the writes leave meanwhile; under sustained writing it
// was most of a commit's time.
func (r *Repo) MaybeMaintain(limit int) {
	if r.maintainingHere.Load() {
		return // ours is running: its end counts again (see MaintainInBackground)
	}
	if !r.packAdded.Swap(false) && r.packsSeen.Load() <= int64(limit) {
		return
	}
	n, err := r.PackCount()
	if err != nil {
		return
	}
	// Acted on below: the next count is for the next pack added.
	r.packsSeen.Store(0)
	if n <= limit {
		return
	}
	if err := r.MaintainInBackground(); err != nil && !errors.Is(err, ErrLocked) {
		r.packAdded.Store(true)
	}
}

// PackCount is the number of packs in the object database, superseded
// tails (see supersede) left out: they go without a roll-up.
func (r *Repo) PackCount() (int, error) {
	es, err := os.ReadDir(filepath.Join(r.dir, "objects", "pack"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range es {
		if !strings.HasSuffix(e.Name(), ".idx") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			if marked, _ := isSuperseded(fi); marked {
				continue
			}
		}
		n++
	}
	return n, nil
}

// ObjectBytes is the size of the object database's objects: packs, their
// indexes, and loose objects. What git writes beside them to speed reads
// up (bitmaps, reverse indexes, the commit-graph) is left out, so that
// packing's effect on the objects is what it shows.
func (r *Repo) ObjectBytes() (int64, error) {
	objects := filepath.Join(r.dir, "objects")
	var n int64
	err := filepath.WalkDir(objects, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a concurrent repack
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		dir := filepath.Base(filepath.Dir(path))
		loose := len(dir) == 2 && len(name) == 38 && filepath.Dir(filepath.Dir(path)) == objects
		if !loose && !(dir == "pack" && (strings.HasSuffix(name, ".pack") || strings.HasSuffix(name, ".idx"))) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	return n, err
}

// Maintain repacks the object database with the git CLI, whose packer
// (deltas, compression) is far better than go-git's. The default rolls small
// packs into bigger ones geometrically, so its cost follows recent writes,
// not the store's size; full repacks everything into one pack, as `git gc`
// does. Both are safe while others write: the geometric roll-up keeps every
// object of the packs it replaces, and `git gc` keeps unreachable objects
// for its default two weeks, so a pack whose commit is not yet published is
// never pruned from under its writer. One maintenance runs at a time per
// store; a second caller gets ErrLocked.
func (r *Repo) Maintain(ctx context.Context, full bool) error {
	r.background.Wait()
	var (
		cmd    *exec.Cmd
		unlock func()
		err    error
	)
	// Another process's maintenance is short; wait for it rather than fail.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		cmd, unlock, err = r.maintenanceCmd(ctx, full)
		if err == nil || !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return err
	}
	defer unlock()
	r.sweepLockFiles() // first: the lock files left are live writers' (see removeStaleTemp)
	r.removeStaleTemp()
	// Before the repack, which can then roll the objects up. A pack git
	// cannot index is reported after the repack, which still runs.
	_, recoverErr := r.RecoverPacks(ctx)
	// A multi-pack-index naming a pack that is gone (left so by an older
	// writer) fails every git read through it, git gc's included.
	if _, err := repairMidx(filepath.Join(r.dir, "objects", "pack")); err != nil {
		return fmt.Errorf("maintenance: %w", err)
	}
	r.sweepSupersededPacks()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	if err == nil {
		// Named in the lock, git keeps it held if this process is killed
		// while it runs: no second repack starts beside it.
		r.nameInLock(cmd.Process.Pid)
		err = cmd.Wait()
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if strings.Contains(msg, "already running") {
			// A git gc started by hand, or one a killed process left:
			// busy, as our own lock would say.
			return fmt.Errorf("maintenance: a git gc is already running on this store (wait for it, or remove %s if no git runs): %w",
				filepath.Join(r.dir, "gc.pid"), ErrLocked)
		}
		return fmt.Errorf("git %s: %v: %s", strings.Join(cmd.Args[3:], " "), err, msg)
	}
	if recoverErr != nil {
		return fmt.Errorf("maintenance: %w", recoverErr)
	}
	return nil
}

// sweepSupersededPacks removes the superseded tails whose grace is over
// and that the tail holds (see findTail); it runs holding the maintenance
// lock, before any repack starts. Those it cannot prove redundant are
// rolled up by the repack.
func (r *Repo) sweepSupersededPacks() {
	r.packMu.Lock()
	defer r.packMu.Unlock()
	r.findTail(true)
}

// nameInLock rewrites the maintenance lock to name the git it started
// beside this process. Replaced by rename, so it is never seen half
// written.
func (r *Repo) nameInLock(gitPid int) {
	lock := r.maintenanceLock()
	if tmp, err := writeLockTemp(lock, os.Getpid(), gitPid); err == nil {
		if os.Rename(tmp, lock) != nil {
			os.Remove(tmp)
		}
	}
}

// MaintainInBackground starts the geometric roll-up and returns at once:
// the write that triggered it is already committed and acknowledged, and
// no writer waits for packing. Close waits for it to finish, so a process
// never leaves a repack behind; its lock names the repack's pid, so a lock
// left by a killed process is recognised as stale.
func (r *Repo) MaintainInBackground() error {
	cmd, unlock, err := r.maintenanceCmd(context.Background(), false)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		unlock()
		return err
	}
	// The lock names git's pid beside ours: a repack outliving a killed
	// process still holds it, and ours keeps it held from git's exit to
	// the unlock.
	r.nameInLock(cmd.Process.Pid)
	r.background.Add(1)
	r.maintainingHere.Store(true)
	go func() {
		defer r.background.Done()
		cmd.Wait()
		r.removeStaleTemp()
		unlock()
		// The packs written while it ran are counted on the next write.
		r.packAdded.Store(true)
		r.maintainingHere.Store(false)
	}()
	return nil
}

func (r *Repo) maintenanceLock() string { return filepath.Join(r.dir, "aiwg-maintenance.lock") }

// repackMayRead reports whether a running repack may be reading pack h,
// which must then stay as it is: a repack is running and h is not one of
// the packs writers make while it runs, which they mark with a .keep
// before the pack appears, so that the repack leaves them out (git's own
// index-pack --keep protects an incoming pack the same way). Those a writer
// may extend and replace as usual; before, every commit during a repack
// wrote a pack of its own that had to stay, and a repack of a few seconds
// left hundreds of packs for the next one.
func (r *Repo) repackMayRead(h plumbing.Hash) bool {
	return r.maintaining() && !r.ourKeep(h)
}

// maintaining reports whether a repack may be running: its lock is
// there, and not one a killed process left (which stays until the next
// roll-up breaks it, and would meanwhile send every commit to a pack of
// its own).
func (r *Repo) maintaining() bool {
	f, err := os.Open(r.maintenanceLock())
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	return err != nil || !maintenanceLockStale(f, fi)
}

// tailKeep is the content of the .keep of a pack written during a repack.
// A .keep with other content is someone else's and is honoured.
const tailKeep = "aiwg-state: a tail pack written while a repack ran\n"

// releaseKeeps removes our .keep from every pack that has one, so that the
// repack about to start rolls them up: the packs written while the last
// repack ran. All at once, never some of them: a kept tail's copy is kept
// too, and git's repack leaves out of what it rolls up every object a kept
// pack holds, so a copy released while the tail it copies stays kept would
// be rolled up without the tail's objects, which the copy's commit then
// removes. Released together, both are rolled up whole, or the copy with
// the tail (geometric packing rolls the smallest packs up, and a copy is
// never smaller than what it copies); a commit that extended either meanwhile
// finds the tail a repack may read, and leaves it (see repackMayRead). It
// runs holding the maintenance lock, before the repack lists the packs.
//
// Releasing only the packs idle for a while instead left every pack
// written during back-to-back repacks kept for that while: under
// sustained writing, hundreds of small packs that every read and every
// repack then listed, and writes slowed as they piled up.
func (r *Repo) releaseKeeps() {
	dir := filepath.Join(r.dir, "objects", "pack")
	keeps, _ := filepath.Glob(filepath.Join(dir, "pack-*.keep"))
	for _, k := range keeps {
		if _, ours := readKeep(k); ours {
			os.Remove(k)
		}
	}
}

// readKeep reports whether the .keep at path exists, and whether it is
// ours (tailKeep).
func readKeep(path string) (kept, ours bool) {
	b, err := os.ReadFile(path)
	return err == nil, err == nil && string(b) == tailKeep
}

// ourKeep reports whether pack h has our .keep.
func (r *Repo) ourKeep(h plumbing.Hash) bool {
	_, ours := readKeep(filepath.Join(r.dir, "objects", "pack", "pack-"+h.String()+".keep"))
	return ours
}

// writeLockTemp writes the maintenance lock's content, the pids holding
// it, whole under a temporary name beside it, to be linked or renamed into
// place.
func writeLockTemp(lock string, pids ...int) (string, error) {
	var b []byte
	for i, pid := range pids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(pid), 10)
	}
	tmp := lock + ".tmp-" + strconv.Itoa(os.Getpid())
	return tmp, os.WriteFile(tmp, append(b, '\n'), 0o644)
}

// maintenanceCmd takes the maintenance lock and prepares the git command.
func (r *Repo) maintenanceCmd(ctx context.Context, full bool) (*exec.Cmd, func(), error) {
	lockPath := r.maintenanceLock()
	// Written whole under a temporary name, then linked into place (which,
	// like O_EXCL, fails if the lock exists): never seen empty, which a
	// crash between creating and writing it would leave for an hour.
	tmp, err := writeLockTemp(lockPath, os.Getpid())
	if err != nil {
		return nil, nil, fmt.Errorf("maintenance: %w", err)
	}
	defer os.Remove(tmp)
	for attempt := 0; ; attempt++ {
		err := os.Link(tmp, lockPath)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// A file system without hard links: create it in place.
			var f *os.File
			if f, err = os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
				f.Close()
			}
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("maintenance: %w", err)
		}
		if attempt > 0 || !r.breakMaintenanceLock(lockPath) {
			return nil, nil, fmt.Errorf("maintenance: another one is running: %w", ErrLocked)
		}
	}
	r.releaseKeeps()
	args := []string{"repack", "-d", "-q", "--geometric=2"}
	if full {
		args = []string{"gc", "--quiet"}
	}
	if r.IsPartial() {
		// In a partial clone git's geometric repack fails ("cannot use
		// internal rev list with --stdin-packs"), and so does any
		// repack writing bitmaps, which need every object.
		args = []string{"-c", "repack.writeBitmaps=false", "repack", "-a", "-d", "-q"}
		if full {
			args = []string{"-c", "repack.writeBitmaps=false", "gc", "--quiet"}
		}
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", r.dir}, args...)...)
	// git in a process group of its own, killed with this process (the
	// kernel's parent-death signal) and, on cancellation, with everything
	// it started: a killed gc must not leave a git gc running, which would
	// make the next one fail with git's "gc is already running". What
	// git's children outlive a kill of git itself is ended when the next
	// maintenance breaks the stale lock (see endGroup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd, func() { os.Remove(lockPath) }, nil
}

// breakMaintenanceLock removes a stale maintenance lock (see
// maintenanceLockStale) as breakStaleLock does a branch lock: two
// processes finding one stale lock would otherwise both break it, the
// second removing the lock the first had just taken, and run two
// repacks.
func (r *Repo) breakMaintenanceLock(lockPath string) bool {
	f, err := os.Open(lockPath)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) // gone meanwhile: try again
	}
	defer f.Close()
	judged, err := f.Stat()
	if err != nil || !maintenanceLockStale(f, judged) {
		return false
	}
	if pids := lockPids(f); len(pids) == 2 {
		endGroup(pids[1])
	}
	return r.removeJudged(lockPath, judged)
}

// lockPids reads the pids a maintenance lock names.
func lockPids(f *os.File) []int {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return nil
	}
	var pids []int
	for _, w := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(w)
		if err != nil || pid <= 0 {
			return nil
		}
		pids = append(pids, pid)
	}
	return pids
}

// endGroup kills what is left of the process group of a git that
// maintenance started and whose starter died (git itself is gone: the
// lock is stale): its own children, a repack or pack-objects, which the
// parent-death signal does not reach. Only git processes of the group
// are killed, so a group id reused since by an unrelated process group
// is spared.
func endGroup(pgid int) {
	es, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := bytes.LastIndexByte(stat, ')')
		j := bytes.IndexByte(stat, '(')
		if i < 0 || j < 0 || j > i {
			continue
		}
		comm := string(stat[j+1 : i])
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) || !strings.HasPrefix(comm, "git") {
			continue
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// maintenanceLockStale: every process named in the lock (the one that
// took it, and the git it started) is gone, or the lock is unreadable and
// old.
func maintenanceLockStale(f *os.File, fi os.FileInfo) bool {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return false
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			pids = nil
			break
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		return time.Since(fi.ModTime()) > time.Hour
	}
	for _, pid := range pids {
		if processAlive(pid) {
			return false
		}
	}
	return true
}

// removeStaleTemp deletes what killed writers left behind: half-written
// packs, indexes and .keep files without a pack, and lock files never
// linked into place (<ref>.lock.<random>.lock). What is provably a dead
// process's goes at once: a temporary file whose name carries the pid of
// a process that is gone (see writeTemp), a ref's temporary file when no
// live writer holds the ref's lock. The rest (git's own temporary packs,
// files of a process that may still run) goes once older than an hour: a
// live writer finishes with them within milliseconds.
func (r *Repo) removeStaleTemp() {
	old := func(d fs.DirEntry, age time.Duration) bool {
		fi, err := d.Info()
		return err == nil && time.Since(fi.ModTime()) > age
	}
	// Temporary lock and ref-value files (see tempName) of writers killed
	// in their first or last microseconds: under refs/, and beside HEAD
	// and packed-refs at the top.
	strayTemp := func(p string, d fs.DirEntry) {
		n := d.Name()
		i := strings.Index(n, ".lock.")
		if i < 0 || !strings.HasSuffix(n, ".lock") || len(n) <= i+len(".lock.")+len(".lock") {
			return
		}
		if old(d, time.Hour) || !lockHeld(filepath.Join(filepath.Dir(p), n[:i+len(".lock")])) {
			os.Remove(p)
		}
	}
	filepath.WalkDir(filepath.Join(r.dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			strayTemp(p, d)
		}
		return nil
	})
	if es, err := os.ReadDir(r.dir); err == nil {
		for _, e := range es {
			if !e.IsDir() {
				strayTemp(filepath.Join(r.dir, e.Name()), e)
			}
		}
	}
	// The in-flight keep files of processes that are gone (see linkKeep).
	if es, err := os.ReadDir(filepath.Join(r.dir, "aiwg")); err == nil {
		for _, e := range es {
			if pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), inflightKeepName)); err == nil && strings.HasPrefix(e.Name(), inflightKeepName) && pid > 0 && !processAlive(pid) {
				os.Remove(filepath.Join(r.dir, "aiwg", e.Name()))
			}
		}
	}
	dir := filepath.Join(r.dir, "objects", "pack")
	// Our .keep is written before its pack appears, by a writer holding
	// packMu and, in another process, a lock file of aiwg/locks: with
	// neither held, a .keep without its pack is a dead writer's.
	r.packMu.Lock()
	defer r.packMu.Unlock()
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	writers := -1 // unknown until a leftover asks
	quiet := func() bool {
		if writers < 0 {
			writers = r.otherWriters()
		}
		return writers == 0
	}
	names := make(map[string]bool, len(es))
	for _, e := range es {
		names[e.Name()] = true
	}
	for _, e := range es {
		n := e.Name()
		age := time.Hour
		ext := filepath.Ext(n)
		stem := strings.TrimSuffix(n, ext)
		switch {
		case strings.HasPrefix(n, "tmp_pack_") || strings.HasPrefix(n, "tmp_idx_") || strings.HasPrefix(n, "tmp_keep_"):
			if pid, ok := tempPid(n); ok && !processAlive(pid) {
				age = 0
			}
		case strings.HasPrefix(n, "pack-") && ext == ".keep" && names[stem+".pack"]:
			// The .keep of a pack whose commit was being published by a
			// process that is gone (see writePack): the pack is an
			// ordinary one now, its commit published or not.
			if !inFlightKeepOfDeadProcess(filepath.Join(dir, n)) {
				continue
			}
			age = 0
		case strings.HasPrefix(n, "pack-") && (ext == ".idx" || ext == ".keep" || ext == ".bitmap" || ext == ".rev") && !names[stem+".pack"]:
			// A file whose pack is gone: a crash between the unlinks of
			// a removed pack, or before a kept pack appeared. git reports
			// them as garbage; readers would keep trying an index. Every
			// writer, git's and ours, renames a pack in place before its
			// index, bitmap and reverse index, so these are no live
			// writer's; an index is still given a minute while other
			// writers run, for an older aiwg-state that renamed the
			// index first.
			switch {
			case ext == ".bitmap" || ext == ".rev":
				age = 0
			case ext == ".idx":
				age = time.Minute
				if quiet() {
					age = 0
				}
			default:
				if _, ours := readKeep(filepath.Join(dir, n)); ours {
					age = time.Minute // a live writer renames its pack in place milliseconds after
					if quiet() {
						age = 0
					}
				} else if keepOfDeadProcess(filepath.Join(dir, n)) {
					age = 0
				}
			}
			if _, err := os.Stat(filepath.Join(dir, stem+".pack")); !errors.Is(err, os.ErrNotExist) {
				continue // appeared since the listing
			}
		default:
			continue
		}
		if old(e, age) {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// inFlightKeepOfDeadProcess: a .keep writePack put on a pack for its
// commit (inFlightKeep) whose process is gone, or that is a day old (a
// pid reused since).
func inFlightKeepOfDeadProcess(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), inFlightKeepPrefix) {
		return false
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
		return true
	}
	return keepOfDeadProcess(path)
}

// otherWriters counts the lock files of aiwg/locks that another live Repo
// holds (one of them may be writing a pack), this Repo's own left out.
func (r *Repo) otherWriters() int {
	dir := filepath.Join(r.dir, "aiwg", "locks")
	es, _ := os.ReadDir(dir)
	r.lockMu.Lock()
	own := r.lockPath
	r.lockMu.Unlock()
	n := 0
	for _, e := range es {
		p := filepath.Join(dir, e.Name())
		if !strings.HasPrefix(e.Name(), "held-") || p == own {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			n++
		} else {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
		f.Close()
	}
	return n
}

// tempPid reads the pid that writeTemp puts in a temporary file's name
// (<prefix><pid>-<random>); git's own names carry none.
func tempPid(name string) (int, bool) {
	rest := name[strings.IndexByte(name[4:], '_')+5:]
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// keepOfDeadProcess: a .keep git's receive-pack or fetch-pack wrote
// ("receive-pack <pid> on <host>") naming a process of this host that is
// gone.
func keepOfDeadProcess(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 4 || f[2] != "on" {
		return false
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(f[1])
	return err == nil && pid > 0 && f[3] == host && !processAlive(pid)
}

// lockHeld reports whether a live aiwg-state writer holds the lock file at
// path (its flock is taken), or cannot tell (true): a ref's temporary
// files are only written under its lock.
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return !hasMarker(f) // git's lock (no marker, never flocked): its holder may be alive
}

// processAlive reports whether pid runs. A zombie (exited, not yet
// reaped: in a container whose first process does not reap orphans, a
// killed caller's git may stay one) does not.
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: kill's answer stands
	}
	// pid (comm) STATE ...: comm may hold spaces and parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}
