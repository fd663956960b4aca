// Package testutil holds the helpers that tests across the module share:
// a runner of the git CLI, the oracle the tests check the store against,
// and a JSON decoder independent of the store's own. It depends on the
// standard library alone, so that the tests of every package, however low,
// can use it without an import cycle.
package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git says how to run the git CLI: against which repository, with which
// settings, environment and input. The zero Git runs git in the test's
// working directory with the test process's environment.
type Git struct {
	GitDir string   // passed as --git-dir when not empty
	Dir    string   // passed as -C when not empty
	Config []string // name=value settings, each passed as -c
	Env    []string // added to the test process's environment
	Stdin  string
}

func (g Git) command(args []string) *exec.Cmd {
	var full []string
	for _, c := range g.Config {
		full = append(full, "-c", c)
	}
	if g.GitDir != "" {
		full = append(full, "--git-dir", g.GitDir)
	}
	if g.Dir != "" {
		full = append(full, "-C", g.Dir)
	}
	cmd := exec.Command("git", append(full, args...)...)
	if len(g.Env) > 0 {
		cmd.Env = append(os.Environ(), g.Env...)
	}
	cmd.Stdin = strings.NewReader(g.Stdin)
	return cmd
}

// Try runs git with args and returns what it printed (standard output and
// error together) and its error, for a test that expects git to fail.
func (g Git) Try(args ...string) (string, error) {
	out, err := g.command(args).CombinedOutput()
	return string(out), err
}

// Run runs git with args and returns what it printed (standard output and
// error together); when git fails, t fails with that output.
func (g Git) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := g.Try(args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Output runs git with args and returns its standard output alone, for
// output a test parses; when git fails, t fails with its standard error.
func (g Git) Output(t testing.TB, args ...string) string {
	t.Helper()
	cmd := g.command(args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}

// RunGit runs git --git-dir gitDir with args: Git{GitDir: gitDir}.Run.
func RunGit(t testing.TB, gitDir string, args ...string) string {
	t.Helper()
	return Git{GitDir: gitDir}.Run(t, args...)
}

// Fsck fails t unless git fsck --strict finds the repository at gitDir
// whole; dangling objects (left by refused or raced writes) are allowed.
func Fsck(t testing.TB, gitDir string) {
	t.Helper()
	RunGit(t, gitDir, "fsck", "--strict", "--no-dangling")
}

// AgentEnv is the environment under which git authors and commits as
// agent, with the address aiwg-state gives an agent.
func AgentEnv(agent string) []string {
	email := agent + "@agents.invalid"
	return []string{"GIT_AUTHOR_NAME=" + agent, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + agent, "GIT_COMMITTER_EMAIL=" + email}
}

// CommitFile makes, with git plumbing alone, a commit on top of parent
// that writes body at path, as a user of plain git would, past every check
// of aiwg-state; it returns the commit, which no ref names yet. g says
// where and as whom git runs; the commit's message is msg.
func CommitFile(t testing.TB, g Git, parent, path, body, msg string) string {
	t.Helper()
	in := func(stdin string, args ...string) string {
		t.Helper()
		g := g
		g.Stdin = stdin
		return strings.TrimSpace(g.Run(t, args...))
	}
	blob := in(body, "hash-object", "-w", "--stdin")
	g.Env = append(append([]string(nil), g.Env...), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	in("", "read-tree", parent)
	in("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	tree := in("", "write-tree")
	return in(msg, "commit-tree", "-p", parent, tree)
}
