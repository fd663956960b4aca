package hooks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/repo"
)

// TestHookForms: the hook starts aiwg-state directly when its path fits
// a first line, else through a shell; doctor names the binary either way,
// and the form.
func TestHookForms(t *testing.T) {
	ctx := context.Background()
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	hook := filepath.Join(server, "hooks", "pre-receive")
	spaced := filepath.Join(t.TempDir(), "with space", "aiwg-state")
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120), "aiwg-state")
	script := filepath.Join(t.TempDir(), "wrapper")
	os.WriteFile(script, []byte("#!/bin/sh\nexec true\n"), 0o755)
	for _, link := range []string{spaced, long} {
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(os.Args[0], link); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		bin, form string
	}{{os.Args[0], "direct"}, {spaced, "shell"}, {long, "shell"}, {script, "shell"}} {
		if _, err := Install(server, InstallOptions{Binary: tt.bin}); err != nil {
			t.Fatal(err)
		}
		text, _ := os.ReadFile(hook)
		if direct := strings.HasPrefix(string(text), "#!"+tt.bin+" "+DirectArg+"\n"); direct != (tt.form == "direct") {
			t.Errorf("%s: hook\n%s", tt.bin, text)
		}
		h, err := Doctor(ctx, server)
		if err != nil {
			t.Fatal(err)
		}
		if !h.Hook.Installed || !h.Hook.Runnable || h.Hook.Binary != tt.bin || h.Hook.Form != tt.form {
			t.Errorf("%s: doctor says %+v, want the %s form", tt.bin, h.Hook, tt.form)
		}
	}
}

// TestHookWithoutItsBinaryRefuses: a hook whose binary is gone (moved,
// uninstalled) refuses every push through a real server, in both forms,
// and the server's refs stay as they were.
func TestHookWithoutItsBinaryRefuses(t *testing.T) {
	for _, form := range []string{"direct", "shell"} {
		t.Run(form, func(t *testing.T) {
			server, w := setup(t, gitserver.Daemon)
			dir := t.TempDir()
			if form == "shell" {
				dir = filepath.Join(dir, "a dir")
			}
			bin := filepath.Join(dir, "aiwg-state")
			os.MkdirAll(dir, 0o755)
			if err := os.Symlink(os.Args[0], bin); err != nil {
				t.Fatal(err)
			}
			if _, err := Install(server, InstallOptions{Binary: bin}); err != nil {
				t.Fatal(err)
			}
			if h, _ := Doctor(context.Background(), server); h.Hook.Form != form {
				t.Fatalf("installed the %s form, want %s", h.Hook.Form, form)
			}
			w.commit("pulse", map[string]string{"agents/pulse/s1.json": canon(t, `{"n": 1}`)})
			if out, err := w.git("pulse", "push", "origin", "HEAD:refs/heads/agents/pulse/main"); err != nil {
				t.Fatalf("push through the %s form refused: %v\n%s", form, err, out)
			}
			os.Remove(bin)
			before := serverRefs(t, server)
			w.commit("pulse", map[string]string{"agents/pulse/s1.json": canon(t, `{"n": 2}`)})
			out, err := w.git("pulse", "push", "origin", "HEAD:refs/heads/agents/pulse/main")
			if err == nil || !strings.Contains(out, "pre-receive hook declined") {
				t.Fatalf("push with the hook's binary gone: %v\n%s", err, out)
			}
			if after := serverRefs(t, server); after != before {
				t.Fatalf("server refs changed:\n%s\nwas:\n%s", after, before)
			}
			if h, _ := Doctor(context.Background(), server); h.Hook.Runnable || len(h.Problems) == 0 {
				t.Fatalf("doctor on a hook without its binary: %+v", h)
			}
		})
	}
}

// TestShellFormStillChecks: a hook installed before the direct form (a
// shell script that execs `BINARY hooks run pre-receive`) still checks
// every push.
func TestShellFormStillChecks(t *testing.T) {
	server, w := setup(t, gitserver.Daemon)
	old := "#!/bin/sh\n" + hookMarker + "\n" +
		"# Every pushed commit is checked (canonical JSON, store paths, limits,\n" +
		"# conflicts, access policy); a refusal leaves the server's refs unchanged.\n" +
		"exec " + shellQuote(os.Args[0]) + " hooks run pre-receive\n"
	if err := os.WriteFile(filepath.Join(server, "hooks", "pre-receive"), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if h, _ := Doctor(context.Background(), server); !h.Hook.Runnable || h.Hook.Form != "shell" || h.Hook.Binary != os.Args[0] {
		t.Fatalf("doctor on the shell form: %+v", h.Hook)
	}
	before := serverRefs(t, server)
	w.commit("pulse", map[string]string{"agents/heartbeat/s1.json": canon(t, `{"n": 1}`)})
	out, err := w.git("pulse", "push", "origin", "HEAD:refs/heads/agents/pulse/main")
	if err == nil || !strings.Contains(out, "rule "+RulePolicy) {
		t.Fatalf("another agent's session through the shell form: %v\n%s", err, out)
	}
	if after := serverRefs(t, server); after != before {
		t.Fatalf("server refs changed:\n%s\nwas:\n%s", after, before)
	}
}

// TestInstallWritesTheTimeout: install writes the default deadline where
// the hook reads it without git (here no git is on $PATH), and leaves an
// administrator's setting of any scope alone, which the hook then asks
// git for.
func TestInstallWritesTheTimeout(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	server := gitserver.Bare(t, t.TempDir(), "s.git")
	if _, err := Install(server, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(testutil.RunGit(t, server, "config", "--local", "--get", TimeoutConfig)); got != "5m" {
		t.Fatalf("install wrote %s = %q", TimeoutConfig, got)
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	if d, err := Timeout(ctx, server); err != nil || d != DefaultTimeout {
		t.Fatalf("Timeout without git = %v, %v", d, err)
	}
	t.Setenv("PATH", path)

	// The administrator's setting in the user's configuration: install
	// leaves it, and the hook reads it through git.
	other := gitserver.Bare(t, t.TempDir(), "o.git")
	testutil.RunGit(t, "", "config", "--global", TimeoutConfig, "7m")
	if _, err := Install(other, InstallOptions{Binary: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	if out, err := (testutil.Git{GitDir: other}).Try("config", "--local", "--get", TimeoutConfig); err == nil {
		t.Fatalf("install wrote %s = %q over the global setting", TimeoutConfig, out)
	}
	if d, err := Timeout(ctx, other); err != nil || d.Minutes() != 7 {
		t.Fatalf("Timeout from the global setting = %v, %v", d, err)
	}
	// The repository's own setting wins, as in git.
	testutil.RunGit(t, other, "config", TimeoutConfig, "90s")
	if d, err := Timeout(ctx, other); err != nil || d.Seconds() != 90 {
		t.Fatalf("Timeout 90s over a global 7m = %v, %v", d, err)
	}
}

// packCount is git's count of the repository's packs.
func packCount(t *testing.T, gitDir string) int {
	t.Helper()
	for _, line := range strings.Split(testutil.RunGit(t, gitDir, "count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(line, "packs: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("git count-objects says no packs")
	return 0
}

// TestAutoGCAsksGitsQuestion: the hook's count says gc is due where git
// gc --auto repacks, and not where it leaves the repository alone.
func TestAutoGCAsksGitsQuestion(t *testing.T) {
	server, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	for i := 0; i < 4; i++ {
		w.commit("pulse", map[string]string{"agents/pulse/s.json": canon(t, fmt.Sprintf(`{"n": %d}`, i))})
		w.must("pulse", "push", "-q", "origin", "HEAD:refs/heads/agents/pulse/main")
	}
	// The pushes' gc had no work at the default limit.
	n := packCount(t, server)
	if n < 5 {
		t.Fatalf("%d packs after 5 pushes", n)
	}
	if gcDue(server, 6700, 50) {
		t.Fatal("gc due with few packs and no loose objects")
	}
	// A keep file keeps its pack out of git's count, and so of the hook's.
	packs, _ := filepath.Glob(filepath.Join(server, "objects", "pack", "pack-*.pack"))
	keep := strings.TrimSuffix(packs[0], ".pack") + ".keep"
	os.WriteFile(keep, nil, 0o644)
	if gcDue(server, 6700, n-1) {
		t.Fatalf("gc due at a limit of %d with %d packs, one kept", n-1, n)
	}
	testutil.RunGit(t, server, "-c", "gc.autoPackLimit="+strconv.Itoa(n-1), "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
	if got := packCount(t, server); got != n {
		t.Fatalf("git gc --auto repacked (%d packs, was %d) where the hook saw nothing to do", got, n)
	}
	os.Remove(keep)
	if !gcDue(server, 6700, n-1) {
		t.Fatalf("gc not due at a limit of %d with %d packs", n-1, n)
	}
	testutil.RunGit(t, server, "-c", "gc.autoPackLimit="+strconv.Itoa(n-1), "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
	if got := packCount(t, server); got >= n {
		t.Fatalf("git gc --auto left %d packs where the hook saw work", got)
	}
	// Loose objects: more than gc.auto/256 (rounded up) in objects/17;
	// three of them are too many at 512 (2), not at 768 (3).
	dir := filepath.Join(server, "objects", "17")
	os.MkdirAll(dir, 0o755)
	for i := 0; i < 3; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%038x", i)), nil, 0o444)
	}
	os.WriteFile(filepath.Join(dir, "tmp_obj_x"), nil, 0o444)
	if gcDue(server, 768, 50) || !gcDue(server, 512, 50) || gcDue(server, 0, 0) {
		t.Fatalf("loose counts: at 768 %v, at 512 %v, off %v", gcDue(server, 768, 50), gcDue(server, 512, 50), gcDue(server, 0, 0))
	}
}

// TestHookStartsGCWhenDue: with receive.autogc off (hooks install), the
// hook starts git gc --auto when the packs pass gc.autoPackLimit, and the
// server ends up repacked; with receive.autogc on, it leaves gc to
// receive-pack.
func TestHookStartsGCWhenDue(t *testing.T) {
	server, w := setup(t, gitserver.Daemon)
	if v, ok := repo.LocalConfig(server, "receive.autogc", os.Environ()); !ok || v != "false" {
		t.Fatalf("receive.autogc after install: %q, %v", v, ok)
	}
	if autoGC(server, 0) {
		t.Fatal("gc started with nothing to do")
	}
	testutil.RunGit(t, server, "config", "gc.autoPackLimit", "3")
	testutil.RunGit(t, server, "config", "gc.autoDetach", "false")
	for i := 0; i < 5; i++ {
		w.commit("pulse", map[string]string{"agents/pulse/s.json": canon(t, fmt.Sprintf(`{"n": %d}`, i))})
		w.must("pulse", "push", "-q", "origin", "HEAD:refs/heads/agents/pulse/main")
	}
	// The gc the last pushes started runs on in the background.
	deadline := time.Now().Add(30 * time.Second)
	for packCount(t, server) > 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d packs 30 s after the pushes, at a limit of 3", packCount(t, server))
		}
		time.Sleep(50 * time.Millisecond)
	}
	testutil.Fsck(t, server)

	testutil.RunGit(t, server, "config", "receive.autogc", "true")
	testutil.RunGit(t, server, "config", "gc.autoPackLimit", "1")
	if autoGC(server, 0) {
		t.Fatal("the hook started gc where receive-pack runs it")
	}

	// A server run with `git -c receive.autogc=false …` (settings in the
	// environment, which the config file cannot settle): git is asked,
	// and gc still runs when it is due.
	testutil.RunGit(t, server, "config", "gc.autoPackLimit", "50")
	for i := 0; i < 3; i++ {
		w.commit("pulse", map[string]string{"agents/pulse/s.json": canon(t, fmt.Sprintf(`{"m": %d}`, i))})
		w.must("pulse", "push", "-q", "origin", "HEAD:refs/heads/agents/pulse/main")
	}
	testutil.RunGit(t, server, "config", "gc.autoPackLimit", "1")
	testutil.RunGit(t, server, "config", "--unset", "receive.autogc")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "receive.autogc")
	t.Setenv("GIT_CONFIG_VALUE_0", "false")
	if n := packCount(t, server); n < 3 {
		t.Fatalf("%d packs after 3 pushes without gc", n)
	}
	running := func() bool { _, err := os.Stat(filepath.Join(server, "gc.pid")); return err == nil }
	// From a hook, gc waits for receive-pack to end, so that the push's
	// refs are in place: here a process of the test's stands for it.
	pusher := exec.Command("sleep", "300")
	if err := pusher.Start(); err != nil {
		t.Fatal(err)
	}
	n := packCount(t, server)
	if !autoGC(server, pusher.Process.Pid) {
		t.Fatal("no gc with receive.autogc off in the environment and gc due")
	}
	time.Sleep(1500 * time.Millisecond) // a wait of the gc's, and time to repack
	if got := packCount(t, server); got != n || running() {
		t.Fatalf("gc ran while the push's receive-pack was running (%d packs, was %d)", got, n)
	}
	pusher.Process.Kill()
	pusher.Wait()
	for deadline := time.Now().Add(30 * time.Second); packCount(t, server) > 2 || running(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d packs 30 s after the hook started gc, at a limit of 1", packCount(t, server))
		}
	}
	testutil.Fsck(t, server)
}
