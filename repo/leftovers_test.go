package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestLeftoversOfDeadProcessesAreSwept: what killed writers leave in the
// pack directory goes at maintenance when it provably belongs to a dead
// process, however fresh, and otherwise once old; a live process's stays.
func TestLeftoversOfDeadProcessesAreSwept(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	dir := filepath.Join(r.Dir(), "objects", "pack")
	dead, host := deadPid(t), func() string { h, _ := os.Hostname(); return h }()
	hash := strings.Repeat("ab", 20)
	files := map[string]struct {
		content string
		old     bool
		stays   bool
	}{
		fmt.Sprintf("tmp_pack_%d-x1", dead):          {stays: false},
		fmt.Sprintf("tmp_idx_%d-x2", dead):           {stays: false},
		fmt.Sprintf("tmp_keep_%d-x3", dead):          {stays: false},
		fmt.Sprintf("tmp_pack_%d-x4", os.Getpid()):   {stays: true}, // a live writer's
		"tmp_pack_Ab3dEf":                            {stays: true}, // git's, fresh
		"tmp_idx_Qw3rTy":                             {old: true},   // git's, old
		"pack-" + hash + ".keep":                     {content: tailKeep},
		"pack-" + strings.Repeat("cd", 20) + ".keep": {content: fmt.Sprintf("receive-pack %d on %s\n", dead, host)},
		"pack-" + strings.Repeat("ef", 20) + ".keep": {content: fmt.Sprintf("receive-pack %d on %s\n", os.Getpid(), host), stays: true},
		"pack-" + strings.Repeat("12", 20) + ".idx":  {old: true},
	}
	long := time.Now().Add(-2 * time.Hour)
	for n, f := range files {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.old {
			os.Chtimes(p, long, long)
		}
	}
	os.WriteFile(filepath.Join(r.Dir(), "refs", "heads", "main.lock.k3j.lock"), []byte("x\n"), 0o644)
	if err := r.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	for n, f := range files {
		if got := exists(filepath.Join(dir, n)); got != f.stays {
			t.Errorf("%s: exists=%v, want %v", n, got, f.stays)
		}
	}
	if exists(filepath.Join(r.Dir(), "refs", "heads", "main.lock.k3j.lock")) {
		t.Error("a ref's temporary file with no writer holding its lock stayed")
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestInFlightKeepsAreLinks: a commit's in-flight .keep is a link to its
// process's one keep file in aiwg/, so a commit creates no file for it;
// git counts nothing there as garbage, a dead process's file goes at
// maintenance, and a file maintenance removed is made again.
func TestInFlightKeepsAreLinks(t *testing.T) {
	r := newRepo(t)
	tpl := filepath.Join(r.Dir(), "aiwg", inflightKeepName+strconv.Itoa(os.Getpid()))
	var nlink uint64
	testHookBeforeRef = func() {
		var st syscall.Stat_t
		if syscall.Stat(tpl, &st) == nil {
			nlink = uint64(st.Nlink)
		}
	}
	defer func() { testHookBeforeRef = func() {} }()
	write(t, r, map[string]string{"a.json": "1\n"})
	if nlink < 2 {
		t.Fatalf("the in-flight keep file had %d links while the commit was in flight, want 2", nlink)
	}
	dead := filepath.Join(r.Dir(), "aiwg", inflightKeepName+strconv.Itoa(deadPid(t)))
	if err := os.WriteFile(dead, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(tpl) // as maintenance removes an hour-old temporary file
	write(t, r, map[string]string{"b.json": "2\n"})
	if err := r.Maintain(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if exists(dead) || !exists(tpl) {
		t.Errorf("after maintenance: a dead process's keep file exists=%v, this process's exists=%v", exists(dead), exists(tpl))
	}
	if out := git(t, r.Dir(), "count-objects", "-v"); !strings.Contains(out, "garbage: 0") {
		t.Errorf("git count-objects:\n%s", out)
	}
	git(t, r.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestKilledGCEndsItsGit: a process killed while its maintenance runs git
// takes git down with it, and the next maintenance ends what git had
// started itself and runs.
func TestKilledGCEndsItsGit(t *testing.T) {
	if dir := os.Getenv("AIWG_TEST_GC_DIR"); dir != "" {
		r, err := Open(context.Background(), dir, Options{})
		if err != nil {
			os.Exit(3)
		}
		r.Maintain(context.Background(), true)
		os.Exit(0)
	}
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	// A git whose gc starts a child and takes its time, as git gc's
	// repack and pack-objects do; other commands are git's own.
	bin := t.TempDir()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	sleeper := filepath.Join(bin, "git-slow-child")
	if b, err := os.ReadFile("/bin/sleep"); err == nil {
		os.WriteFile(sleeper, b, 0o755)
	}
	script := "#!/bin/sh\nfor a; do [ \"$a\" = gc ] && { " + sleeper + " 60 & wait; exit 0; }; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledGCEndsItsGit$")
	cmd.Env = append(os.Environ(), "AIWG_TEST_GC_DIR="+r.Dir(), "PATH="+bin+":"+os.Getenv("PATH"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the lock to name git beside the process.
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(r.maintenanceLock())
		if f := strings.Fields(string(b)); len(f) == 2 {
			for _, s := range f {
				p, _ := strconv.Atoi(s)
				pids = append(pids, p)
			}
			break
		}
	}
	if len(pids) != 2 {
		cmd.Process.Kill()
		t.Fatal("maintenance never named its git")
	}
	time.Sleep(50 * time.Millisecond) // git starts its child
	cmd.Process.Kill()
	cmd.Wait()
	gitGone := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !gitGone; time.Sleep(5 * time.Millisecond) {
		gitGone = !processAlive(pids[1])
	}
	if !gitGone {
		syscall.Kill(-pids[1], syscall.SIGKILL)
		t.Fatal("the killed process's git is still running")
	}
	// What git started is ended by the next maintenance, which then runs.
	if err := r.Maintain(context.Background(), false); err != nil && !errors.Is(err, ErrLocked) {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if !groupAlive(pids[1]) {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-pids[1], syscall.SIGKILL)
			t.Fatal("git's child outlived the next maintenance")
		}
	}
}

// groupAlive reports whether a process of group pgid runs.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}

// TestConcurrentGitGCIsBusy: a git gc already running (by hand, or left by
// a killed process) makes maintenance fail as busy (ErrLocked), in our
// words.
func TestConcurrentGitGCIsBusy(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a.json": "1\n"})
	host, _ := os.Hostname()
	// git's own lock, naming a live process of this host.
	if err := os.WriteFile(filepath.Join(r.Dir(), "gc.pid"), fmt.Appendf(nil, "%d %s", os.Getpid(), host), 0o644); err != nil {
		t.Fatal(err)
	}
	err := r.Maintain(context.Background(), true)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("maintenance beside a running git gc: %v, want ErrLocked", err)
	}
}
