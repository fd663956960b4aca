package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// workflowCommands are the shell lines of a CI example that fetch the
// base and run aiwg-state: what the test runs as the workflow would.
func workflowCommands(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
		for _, p := range []string{"git fetch -q origin ", "git branch -f ", "aiwg-state policy check ", "aiwg-state review "} {
			if strings.HasPrefix(l, p) && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestCIRecipes: each example workflow (GitHub Actions, GitLab CI,
// Forgejo Actions) runs the same commands, and those commands, run in a
// clone checked out at a pull request's head, fail the policy check on a
// commit the base's policy forbids, pass it otherwise, and write the
// review as Markdown.
func TestCIRecipes(t *testing.T) {
	files, err := filepath.Glob("../../examples/ci/*.yml")
	if err != nil || len(files) != 3 {
		t.Fatalf("examples: %v %v", files, err)
	}
	want := workflowCommands(t, files[0])
	if len(want) != 4 {
		t.Fatalf("%s: commands %q", files[0], want)
	}
	for _, f := range files[1:] {
		if got := workflowCommands(t, f); !slices.Equal(got, want) && !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("%s runs %q, %s runs %q", f, got, files[0], want)
		}
	}
	// The state repository on the host: a store whose policy lets
	// critic write plan.json; one pull request keeps to it, the other
	// brings a commit by someone the policy does not know.
	s := newStore(t)
	mustCLI(t, s, `{"rules": [{"name": "lead", "agents": ["lead"], "paths": ["**"]}, {"name": "critic", "agents": ["critic"], "paths": ["plan.json"]}]}`, "policy", "set", "-", "--agent", "lead")
	mustCLI(t, s, "", "set", "plan.json", "risk", `"low"`, "--agent", "lead")
	mustCLI(t, s, "", "branch", "good")
	mustCLI(t, s, "", "set", "plan.json", "risk", `"high"`, "--agent", "critic", "-b", "good")
	mustCLI(t, s, "", "set", "plan.json", "owner", `"ops"`, "--agent", "lead")
	good := strings.TrimSpace(gitOut(t, s, "rev-parse", "good"))
	bad := testutil.CommitFile(t, testutil.Git{GitDir: s}, good, "secrets.json", "{}\n", "by hand\n")
	gitOut(t, s, "update-ref", "refs/heads/bad", bad)
	work := filepath.Join(t.TempDir(), "work")
	gitWork(t, filepath.Dir(work), nil, "clone", "-q", s, work)
	gitWork(t, work, nil, "fetch", "-q", "origin")
	policy, review := want[:3], append(slices.Clone(want[:2]), want[3])
	if !strings.HasPrefix(policy[2], "aiwg-state policy check") || !strings.HasPrefix(review[2], "aiwg-state review") {
		t.Fatalf("commands in an unexpected order: %q", want)
	}
	for _, tc := range []struct {
		head   string
		code   int
		review string
	}{
		{good, 0, "✅ Every commit passes the access policy."},
		{bad, exitDomain, "❌ A push of these commits would be refused"},
	} {
		gitWork(t, work, nil, "checkout", "-q", "--detach", tc.head)
		if code, out := runWorkflow(t, work, policy, "main", tc.head); code != tc.code {
			t.Errorf("policy check of %s: exit %d, want %d\n%s", tc.head[:12], code, tc.code, out)
		}
		if code, out := runWorkflow(t, work, review, "main", tc.head); code != 0 {
			t.Fatalf("review of %s: exit %d\n%s", tc.head[:12], code, out)
		}
		md, err := os.ReadFile(filepath.Join(work, "review.md"))
		if err != nil || !strings.HasPrefix(string(md), "## Review of `"+tc.head+"` into `main`") || !strings.Contains(string(md), tc.review) {
			t.Errorf("review.md of %s (%v):\n%s", tc.head[:12], err, md)
		}
		os.Remove(filepath.Join(work, "review.md"))
	}
	// The checkout is as it was: nothing written into the clone but
	// the base branch.
	if st := gitWork(t, work, nil, "status", "--porcelain"); st != "" {
		t.Errorf("the clone was changed: %s", st)
	}
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// runWorkflow runs the commands in dir as a CI job would: sh, with BASE
// and HEAD_REV set and aiwg-state on PATH; it returns the exit code of
// the first that fails (0 when none does).
func runWorkflow(t *testing.T, dir string, cmds []string, base, head string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", strings.Join(cmds, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE="+base, "HEAD_REV="+head, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "AIWG_STATE_STORE=", "GIT_AUTHOR_NAME=ci", "GIT_COMMITTER_NAME=ci", "GIT_AUTHOR_EMAIL=ci@example.invalid", "GIT_COMMITTER_EMAIL=ci@example.invalid")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}
