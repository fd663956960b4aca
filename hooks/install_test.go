package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
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
