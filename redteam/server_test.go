package redteam

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/testutil"
)

// bin is the aiwg-state binary every attack runs, built once.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aiwg-redteam-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "aiwg-state")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/aiwg-state").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// teamPolicy lets the coordinator write everything and each worker only
// its own directory.
const teamPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["alice", "bob"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "own directory", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`

// openPolicy lets every agent write everything: "anyone who can push to
// the shared remote", and two agents writing one document.
const openPolicy = `{"default": "allow", "rules": []}`

// users are the HTTP accounts of the authenticated server: each user's
// password is its name with "-pw".
var users = []string{"conductor", "alice", "bob", "mallory"}

// server is a bare store behind the pre-receive hook, served by git
// daemon (anonymous) and by git http-backend behind basic authentication.
type server struct {
	Dir    string // the bare repository
	Daemon string // git://…/state.git
	HTTP   string // http://…/state.git, without credentials
	// Coordinator is the store that seeded the server: main with the
	// policy, and protected/config.json.
	Coordinator string
}

// newServer starts both servers over one bare repository with the hook
// installed, and pushes a main that holds policy (teamPolicy if empty).
func newServer(t *testing.T, policy string) *server {
	t.Helper()
	if policy == "" {
		policy = teamPolicy
	}
	root := t.TempDir()
	s := &server{Dir: gitserver.Bare(t, root, "state.git")}
	s.Daemon = gitserver.Daemon(t, root) + "state.git"
	accounts := map[string]string{}
	for _, u := range users {
		accounts[u] = u + "-pw"
	}
	s.HTTP = gitserver.HTTPAuth(t, root, accounts) + "state.git"
	run(t, "", "hooks", "install", "--server", s.Dir, "--binary", bin)
	s.Coordinator = filepath.Join(t.TempDir(), "conductor.git")
	run(t, "", "init", "--store", s.Coordinator)
	runIn(t, s.Coordinator, policy, "policy", "set", "-", "--agent", "conductor")
	runIn(t, s.Coordinator, "", "set", "protected/config.json", "mode", `"safe"`, "--agent", "conductor")
	runIn(t, s.Coordinator, "", "remote", "add", "origin", s.as("conductor"))
	runIn(t, s.Coordinator, "", "push")
	git(t, s.Dir, "symbolic-ref", "HEAD", "refs/heads/main")
	return s
}

// as is the HTTP URL with user's credentials.
func (s *server) as(user string) string {
	return gitserver.WithUser(s.HTTP, user, user+"-pw")
}

// urls are the ways an attacker reaches the server: anonymously over git
// daemon, and authenticated over HTTP as user.
func (s *server) urls(user string) map[string]string {
	return map[string]string{"daemon": s.Daemon, "http": s.as(user)}
}

// refs is the server's refs, to show that a refused push moved nothing.
func (s *server) refs(t *testing.T) string {
	t.Helper()
	return git(t, s.Dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// fsck runs git's strictest check on a repository.
func fsck(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "fsck", "--strict", "--no-dangling")
}

// result is what a process printed and how it ended.
type result struct {
	Stdout, Stderr string
	Code           int
}

// exec runs the aiwg-state binary in its own process, as an agent does,
// with stdin and args as given; a store is named with --store in args.
func execBin(stdin string, args ...string) result {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := result{Stdout: o.String(), Stderr: e.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		r.Code = -1
	}
	return r
}

// run runs the binary and fails the test unless it exits 0.
func run(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := execBin(stdin, args...)
	if r.Code != 0 {
		t.Fatalf("aiwg-state %s: exit %d: %s%s", strings.Join(args, " "), r.Code, r.Stderr, r.Stdout)
	}
	return r.Stdout
}

// runIn runs the binary against store and fails the test unless it exits 0.
func runIn(t *testing.T, store, stdin string, args ...string) string {
	t.Helper()
	return run(t, stdin, append(args, "--store", store, "--no-sync")...)
}

// try runs the binary against store and returns what happened.
func try(store, stdin string, args ...string) result {
	return execBin(stdin, append(args, "--store", store, "--no-sync")...)
}

// git runs git on a repository (bare or not) and fails the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, "", args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// gitTry runs git with an attacker's plain identity and returns its
// combined output and error; dir "" runs it in no repository.
func gitTry(dir, stdin string, args ...string) (string, error) {
	return testutil.Git{
		Dir:    dir,
		Config: []string{"user.name=mallory", "user.email=mallory@example.invalid", "protocol.version=2"},
		// No credential helper or prompt: a URL carries its credentials.
		Env:   []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS="},
		Stdin: stdin,
	}.Try(args...)
}

// cloneAs makes a working clone of url for an attacker using plain git.
func cloneAs(t *testing.T, url string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	if out, err := gitTry("", "", "clone", "-q", url, dir); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return dir
}

// agentStore clones url into a store of the agent's own with aiwg-state.
func agentStore(t *testing.T, url, agent string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), agent+".git")
	run(t, "", "clone", url, dir)
	return dir
}

// refused pushes ref from a plain-git clone and asserts that the server
// refused it, naming want in its message, and that its refs did not move.
func refused(t *testing.T, s *server, clone, url, refspec, want string) {
	t.Helper()
	before := s.refs(t)
	out, err := gitTry(clone, "", "push", url, refspec)
	if err == nil {
		t.Fatalf("push %s was accepted; want a refusal naming %q:\n%s", refspec, want, out)
	}
	if !strings.Contains(out, want) {
		t.Fatalf("push %s refused, but without %q:\n%s", refspec, want, out)
	}
	if after := s.refs(t); after != before {
		t.Fatalf("a refused push moved the server's refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	fsck(t, s.Dir)
}
