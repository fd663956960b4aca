package ui_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/ui"
)

// TestPushedContentShownAsText: what a prompt-injected agent pushes with
// plain git through a real git server (an HTML file name, an author name
// that breaks attributes, a commit message with a script, a branch named
// as markup) reaches the pages as text. The server has no hook, so it
// takes whatever git takes: the pages must not rely on the hook's rules.
func TestPushedContentShownAsText(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := aiwgstate.Init(ctx, filepath.Join(root, "state.git"), store.InitOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	remote := gitserver.HTTP(t, root) + "state.git"
	work := filepath.Join(t.TempDir(), "work")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=eve\" onmouseover=\"window.__xss=9", "GIT_AUTHOR_EMAIL=eve@agents.invalid",
			"GIT_COMMITTER_NAME=eve", "GIT_COMMITTER_EMAIL=eve@agents.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out, err := exec.Command("git", "clone", "-q", remote, work).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	name := `pushed/<svg onload=window.__xss=7>.json`
	if err := os.MkdirAll(filepath.Join(work, "pushed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, name), []byte(`{"<b>k</b>": "<script>window.__xss=10</script>"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "<script>window.__xss=11</script>\n\nMutation-Id: mut-0badc0de\nCorrelation-Id: \"><img src=x onerror=window.__xss=12>")
	branch := `"><svg/onload=window.__xss=8>`
	git("push", "-q", "origin", "HEAD:main", "HEAD:refs/heads/"+branch)
	commit := strings.TrimSpace(git("rev-parse", "HEAD"))

	h := ui.New(st, ui.Options{})
	q := url.QueryEscape
	for _, p := range []string{
		"/", "/history", "/history?branch=" + q(branch), "/mutation/" + commit, "/mutation/mut-0badc0de",
		"/files?dir=pushed", "/doc?path=" + q(name), "/history?file=" + q(name), "/review?base=main&head=" + q(branch),
	} {
		code, body := get(t, h, p)
		if code != 200 {
			t.Errorf("%s: status %d: %.300s", p, code, body)
			continue
		}
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("%s: %d script tags", p, n)
		}
		for _, bad := range []string{"<svg onload", "<svg/onload", "<img", "<b>k", "onmouseover=\"", "<script>window"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q in the page", p, bad)
			}
		}
	}
	_, body := get(t, h, "/mutation/"+commit)
	wantIn(t, "the pushed mutation", body, "&lt;script&gt;window.__xss=11&lt;/script&gt;", "eve&#34; onmouseover=&#34;window.__xss=9", "&lt;svg onload=window.__xss=7&gt;.json")
}
