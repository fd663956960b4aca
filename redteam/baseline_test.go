package redteam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerAuthenticates checks the ground the other attacks stand on: the
// HTTP server refuses an unknown user and a wrong password, and serves a
// known one.
func TestServerAuthenticates(t *testing.T) {
	s := newServer(t, "")
	if out, err := gitTry("", "", "ls-remote", s.HTTP); err == nil {
		t.Fatalf("anonymous ls-remote over HTTP succeeded:\n%s", out)
	}
	if out, err := gitTry("", "", "ls-remote", strings.Replace(s.as("bob"), "bob-pw", "guess", 1)); err == nil {
		t.Fatalf("ls-remote with a wrong password succeeded:\n%s", out)
	}
	if out := git(t, "", "ls-remote", s.as("bob")); !strings.Contains(out, "refs/heads/main") {
		t.Fatalf("bob's ls-remote: %s", out)
	}
}

// TestPlainGitWriteOutsideOwnPathIsRefused is the simplest attack: a worker
// edits a file the policy keeps from it and pushes with plain git.
func TestPlainGitWriteOutsideOwnPathIsRefused(t *testing.T) {
	s := newServer(t, "")
	for name, url := range s.urls("bob") {
		t.Run(name, func(t *testing.T) {
			w := cloneAs(t, url)
			body := "{\n  \"mode\": \"unsafe\"\n}\n"
			if err := os.WriteFile(filepath.Join(w, "protected", "config.json"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, w, "-c", "user.name=bob", "commit", "-qam", "set mode")
			refused(t, s, w, url, "HEAD:refs/heads/main", "may not write this path")
		})
	}
}

// TestBrokenRecordsArePushedInVain: a memory record, a queue message or an event
// written with plain git that the store's verbs could not read is refused
// by the server as it is by an in-process write, so no clone pulls a
// record that would read as empty and be overwritten, or a message that
// would stop its queue.
func TestBrokenRecordsArePushedInVain(t *testing.T) {
	s := newServer(t, openPolicy)
	for _, c := range []struct{ path, body string }{
		{"memory/long_term/fact/f1.json", "{\n  \"payload\": 1\n}\n"},
		{"queues/work/000001-x.json", "{\n  \"nonsense\": true\n}\n"},
		{"events/mallory/2026-01-01/000000.000000000-evt-0000abcd.json", "{\n  \"nonsense\": true\n}\n"},
	} {
		t.Run(c.path, func(t *testing.T) {
			w := cloneAs(t, s.Daemon)
			if err := os.MkdirAll(filepath.Join(w, filepath.Dir(c.path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w, c.path), []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, w, "add", ".")
			git(t, w, "-c", "user.name=mallory", "commit", "-qm", "a record by hand")
			refused(t, s, w, s.Daemon, "HEAD:refs/heads/main", "rule record")
			// The same write in-process is refused by the record guard.
			st := agentStore(t, s.Daemon, "mallory")
			if r := try(st, c.body, "put", c.path, "-"); r.Code != 3 || !strings.Contains(r.Stderr, "is not a") {
				t.Fatalf("put %s in-process: exit %d, %s", c.path, r.Code, r.Stderr)
			}
		})
	}
}
