package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// TestDiffShowsNonJSONFiles: a file that is not JSON (a report) added,
// changed or removed shows as such in every format, never as "no
// changes".
func TestDiffShowsNonJSONFiles(t *testing.T) {
	s := newStore(t)
	g := testutil.Git{GitDir: s}
	commit := func(body string) {
		c := testutil.CommitFile(t, g, "HEAD", "report.md", body, "report\n")
		gitOut(t, s, "update-ref", "refs/heads/main", c)
	}
	commit("# Report\n")
	commit("# Report\n\nMore.\n")
	for _, tc := range []struct{ rev, change string }{{"HEAD~1", "added"}, {"HEAD", "modified"}} {
		md := mustCLI(t, s, "", "diff", tc.rev, "--format", "markdown")
		if strings.Contains(md, "No changes") || !strings.Contains(md, "`report.md`") || !strings.Contains(md, "_not JSON, "+tc.change+"._") {
			t.Errorf("diff %s --format markdown:\n%s", tc.rev, md)
		}
		var fds []struct{ File, Status, Change string }
		if err := json.Unmarshal([]byte(mustCLI(t, s, "", "diff", tc.rev, "--json")), &fds); err != nil || len(fds) != 1 || fds[0].Status != "binary" || fds[0].Change != tc.change {
			t.Errorf("diff %s --json = %+v (%v)", tc.rev, fds, err)
		}
		if txt := mustCLI(t, s, "", "diff", tc.rev); txt != "report.md: not JSON, "+tc.change+"\n" {
			t.Errorf("diff %s = %q", tc.rev, txt)
		}
	}
	// Removed, and a diff with nothing in it says so.
	del := strings.TrimSpace(gitOut(t, s, "commit-tree", "HEAD~2^{tree}", "-p", "HEAD", "-m", "drop the report"))
	gitOut(t, s, "update-ref", "refs/heads/main", del)
	if md := mustCLI(t, s, "", "diff", "--format", "markdown"); !strings.Contains(md, "_not JSON, deleted._") {
		t.Errorf("deleted report.md:\n%s", md)
	}
	if md := mustCLI(t, s, "", "diff", "HEAD", "HEAD", "--format", "markdown"); md != "_No changes._\n" {
		t.Errorf("empty diff in markdown = %q", md)
	}
}
