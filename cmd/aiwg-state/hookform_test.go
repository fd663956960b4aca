package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/gitserver"
)

// TestHookFormsRefuseAlike: the hook installed in the direct form (the
// kernel starts aiwg-state from its first line) refuses a push as the
// shell form of earlier installs does, with the same words, the
// server's refs unchanged either way.
func TestHookFormsRefuseAlike(t *testing.T) {
	server, url, _ := team(t, gitserver.Daemon)
	hook := filepath.Join(server, "hooks", "pre-receive")
	direct, err := os.ReadFile(hook)
	if err != nil || !strings.HasPrefix(string(direct), "#!"+bin+" hooks-run-pre-receive\n") {
		t.Fatalf("installed hook (%v):\n%s", err, direct)
	}
	work := cloneWithSneakyConfig(t, url)
	before := gitOut(t, server, "show-ref")
	push := func() string {
		t.Helper()
		out, err := exec.Command("git", "-C", work, "push", "origin", "HEAD:refs/heads/agents/pulse/main").CombinedOutput()
		if err == nil {
			t.Fatalf("push accepted:\n%s", out)
		}
		if after := gitOut(t, server, "show-ref"); after != before {
			t.Fatalf("server refs changed:\n%s\nwas:\n%s", after, before)
		}
		var said []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "remote: ") {
				said = append(said, strings.TrimSpace(line))
			}
		}
		// The daemon's connection id differs from run to run.
		return regexp.MustCompile(`[0-9a-f]{40}`).ReplaceAllString(strings.Join(said, "\n"), "ID")
	}
	fromDirect := push()
	if !strings.Contains(fromDirect, "refused:") || !strings.Contains(fromDirect, "global/config.json") {
		t.Fatalf("direct form said:\n%s", fromDirect)
	}
	shell := "#!/bin/sh\n# installed by aiwg-state hooks install --server\nexec '" + bin + "' hooks run pre-receive\n"
	if err := os.WriteFile(hook, []byte(shell), 0o755); err != nil {
		t.Fatal(err)
	}
	if fromShell := push(); fromShell != fromDirect {
		t.Fatalf("the shell form said:\n%s\nthe direct form:\n%s", fromShell, fromDirect)
	}
}

// cloneWithSneakyConfig clones url and commits in the clone, as agent
// "pulse" with plain git, a write to global/config.json, which the test
// team's policy keeps from pulse: an agent going around its own store's
// checks. It returns the clone.
func cloneWithSneakyConfig(t *testing.T, url string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "w")
	if out, err := exec.Command("git", "clone", "-q", url, work).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	os.MkdirAll(filepath.Join(work, "global"), 0o755)
	os.WriteFile(filepath.Join(work, "global", "config.json"), []byte("{\n  \"mode\": \"fast\"\n}\n"), 0o644)
	plainGit(t, work, "add", ".")
	cmd := exec.Command("git", "-C", work, "commit", "-q", "-m", "sneak")
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=pulse", "GIT_AUTHOR_EMAIL=p@x.invalid", "GIT_COMMITTER_NAME=pulse", "GIT_COMMITTER_EMAIL=p@x.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("commit: %v\n%s", err, out)
	}
	return work
}

// TestHookRefusesWhenItsBinaryCannotRun: a binary the kernel cannot start
// (a build for another machine, an empty or half-copied file) makes git
// run the hook with /bin/sh instead. In either form the push is refused,
// the server's refs unchanged, and doctor says the binary does not run.
func TestHookRefusesWhenItsBinaryCannotRun(t *testing.T) {
	server, url, _ := team(t, gitserver.Daemon)
	work := cloneWithSneakyConfig(t, url)
	before := gitOut(t, server, "show-ref")
	// An ELF header for another machine (e_machine 183, aarch64, on
	// amd64; 62, x86-64, elsewhere): the kernel refuses it as it refuses
	// a build for the wrong machine.
	elf := make([]byte, 64)
	copy(elf, "\x7fELF\x02\x01\x01")
	elf[16], elf[18] = 2, 183
	if runtime.GOARCH == "arm64" {
		elf[18] = 62
	}
	for _, form := range []string{"direct", "shell"} {
		dir := filepath.Join(t.TempDir(), form)
		if form == "shell" {
			dir = filepath.Join(dir, "with space") // a path the first line cannot carry
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		broken := filepath.Join(dir, "aiwg-state")
		if err := os.WriteFile(broken, elf, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := hooks.Install(server, hooks.InstallOptions{Binary: broken, Force: true}); err != nil {
			t.Fatal(err)
		}
		for _, content := range map[string][]byte{"another machine's build": elf, "an empty file": nil} {
			if err := os.WriteFile(broken, content, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("git", "-C", work, "push", "origin", "HEAD:refs/heads/agents/pulse/main").CombinedOutput()
			if err == nil {
				t.Fatalf("%s form, %q: push accepted:\n%s", form, content, out)
			}
			if after := gitOut(t, server, "show-ref"); after != before {
				t.Fatalf("%s form: server refs changed:\n%s", form, after)
			}
			// Ours, or, from the shell form's exec, the shell's.
			if !strings.Contains(string(out), "cannot run "+broken) && !strings.Contains(string(out), "Exec format error") {
				t.Errorf("%s form: the pusher is not told why:\n%s", form, out)
			}
			h, err := hooks.Doctor(context.Background(), server)
			if err != nil {
				t.Fatal(err)
			}
			if h.Hook.Runnable || h.Hook.Form != form || h.Hook.RunError == "" {
				t.Errorf("%s form: doctor says runnable %v, form %q, error %q", form, h.Hook.Runnable, h.Hook.Form, h.Hook.RunError)
			}
		}
	}
}
