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
