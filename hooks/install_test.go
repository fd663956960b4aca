package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/testutil"
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
