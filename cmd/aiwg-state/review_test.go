package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReviewCommand: review BASE...HEAD in each format, and the command
// lines it refuses.
func TestReviewCommand(t *testing.T) {
	s := reviewHistory(t)
	text := mustCLI(t, s, "", "review", "main...feat")
	for _, want := range []string{"review of feat into main", "mutations (", "critic", "changes since the merge base", "what a merge would do", "policy", "schemas"} {
		if !strings.Contains(text, want) {
			t.Errorf("review text lacks %q:\n%s", want, text)
		}
	}
	md := mustCLI(t, s, "", "review", "main", "feat", "--format", "markdown")
	if !strings.HasPrefix(md, "## Review of `feat` into `main`") || !strings.Contains(md, "### What a merge would do") {
		t.Errorf("review markdown:\n%s", md)
	}
	var rep struct {
		OK        bool
		MergeBase string `json:"merge_base"`
		Mutations []struct{ Commit string }
		Changes   []struct{ File string }
		Merge     struct{ Status string }
	}
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "review", "main...feat", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.MergeBase != strings.TrimSpace(gitOut(t, s, "merge-base", "main", "feat")) || len(rep.Mutations) != len(strings.Fields(gitOut(t, s, "rev-list", "main..feat"))) || rep.Merge.Status == "" {
		t.Errorf("review --json: %+v", rep)
	}
	// A base that is no branch: the report is made, the merge preview
	// says why it is missing.
	base := strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	out := mustCLI(t, s, "", "review", base+"...feat", "--json")
	if !strings.Contains(out, `"error":"the merge was not tried`) {
		t.Errorf("review of a commit base: %s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"review"}, exitUsage},
		{[]string{"review", "main..feat"}, exitUsage},
		{[]string{"review", "main...feat", "--format", "html"}, exitUsage},
		{[]string{"review", "main...feat", "--limit", "0"}, exitUsage},
		{[]string{"review", "main...nosuch"}, exitDomain},
	} {
		if _, stderr, code := runCLI(t, s, "", tc.args...); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, stderr)
		}
	}
}
