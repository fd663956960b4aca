package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/testutil"
)

// servers are the transports every remote test runs over.
func servers(t *testing.T) map[string]func(root string) string {
	return map[string]func(string) string{
		"daemon": func(root string) string { return gitserver.Daemon(t, root) },
		"http":   func(root string) string { return gitserver.HTTP(t, root) },
		"path":   func(root string) string { return root + "/" },
		"file":   func(root string) string { return "file://" + root + "/" },
	}
}

func TestPushFetchCloneOverRealServers(t *testing.T) {
	ctx := context.Background()
	for name, serve := range servers(t) {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			gitserver.Bare(t, root, "s.git")
			url := serve(root) + "s.git"

			a := newRepo(t)
			write(t, a, map[string]string{"a.json": "1\n"})
			if err := a.AddRemote(ctx, "origin", url); err != nil {
				t.Fatal(err)
			}
			if rs, err := a.Remotes(ctx); err != nil || len(rs) != 1 || rs[0] != (Remote{"origin", url}) {
				t.Fatalf("Remotes = %v, %v", rs, err)
			}
			res, err := a.Push(ctx, "origin", PushOptions{Refspecs: []string{"refs/heads/main:refs/heads/main"}})
			if err != nil || len(res) != 1 || res[0].Status != "new" {
				t.Fatalf("first push = %+v, %v", res, err)
			}
			// The server holds exactly our commit.
			head, _ := a.Ref("refs/heads/main")
			if got := strings.TrimSpace(git(t, filepath.Join(root, "s.git"), "rev-parse", "main")); got != head.String() {
				t.Fatalf("server main = %s, want %s", got, head)
			}

			b, err := Clone(ctx, url, filepath.Join(t.TempDir(), "b.git"), CloneOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if got, err := b.Ref("refs/heads/main"); err != nil || got != head {
				t.Fatalf("clone main = %s, %v", got, err)
			}
			if got, err := b.Ref("refs/remotes/origin/main"); err != nil || got != head {
				t.Fatalf("clone origin/main = %s, %v", got, err)
			}
			if data, err := b.ReadFileAt(mustTree(t, b, head), "a.json"); err != nil || string(data) != "1\n" {
				t.Fatalf("clone a.json = %q, %v", data, err)
			}

			// b moves ahead and pushes; a's push of its own line is refused
			// as non-fast-forward (ErrStale), the server keeps b's commit.
			c2 := write(t, b, map[string]string{"b.json": "2\n"})
			if _, err := b.Push(ctx, "origin", PushOptions{Refspecs: []string{"refs/heads/main:refs/heads/main"}}); err != nil {
				t.Fatal(err)
			}
			write(t, a, map[string]string{"a.json": "3\n"})
			_, err = a.Push(ctx, "origin", PushOptions{Refspecs: []string{"refs/heads/main:refs/heads/main"}})
			var pe *PushError
			if !errors.As(err, &pe) || !errors.Is(err, ErrStale) || !errors.Is(err, ErrRejected) || !pe.NonFastForward() {
				t.Fatalf("stale push = %v", err)
			}
			if !strings.Contains(err.Error(), "pull, then push again") {
				t.Fatalf("message does not say what to do: %v", err)
			}
			if got := strings.TrimSpace(git(t, filepath.Join(root, "s.git"), "rev-parse", "main")); got != c2.Hash.String() {
				t.Fatalf("server main moved to %s after a refused push", got)
			}

			// a fetches b's commit.
			ups, err := a.Fetch(ctx, "origin", FetchOptions{})
			if err != nil || len(ups) != 1 || ups[0].Ref != "refs/remotes/origin/main" || ups[0].New != c2.Hash {
				t.Fatalf("fetch = %+v, %v", ups, err)
			}
			if _, err := a.ReadCommit(c2.Hash); err != nil {
				t.Fatalf("fetched commit unreadable: %v", err)
			}
			if ups, err := a.Fetch(ctx, "origin", FetchOptions{}); err != nil || len(ups) != 0 {
				t.Fatalf("second fetch = %+v, %v", ups, err)
			}
			git(t, a.Dir(), "fsck", "--strict", "--no-dangling")
		})
	}
}

func mustTree(t *testing.T, r *Repo, h plumbing.Hash) plumbing.Hash {
	t.Helper()
	c, err := r.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	return c.Tree
}

func TestRemoteConfig(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	if err := r.AddRemote(ctx, "up", "/tmp/x.git"); err != nil {
		t.Fatal(err)
	}
	if err := r.AddRemote(ctx, "up", "/tmp/y.git"); err == nil {
		t.Fatal("a second remote of the same name was added")
	}
	for _, bad := range []string{"", "-x", "a b", "a..b", "a/b", "x.lock"} {
		if err := r.AddRemote(ctx, bad, "/tmp/x.git"); !errors.Is(err, ErrInvalidName) {
			t.Errorf("AddRemote(%q) = %v", bad, err)
		}
	}
	if err := r.AddRemote(ctx, "ok", "--upload-pack=evil"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("a URL that reads as a flag was accepted: %v", err)
	}
	// A relative path is kept as the absolute one it named where it was
	// given (as git clone does); URLs and host:path stay as written.
	wd, _ := os.Getwd()
	for url, want := range map[string]string{
		"../rel.git":                 filepath.Join(filepath.Dir(wd), "rel.git"),
		"rel.git":                    filepath.Join(wd, "rel.git"),
		"https://example.org/x.git":  "https://example.org/x.git",
		"git@example.org:team/x.git": "git@example.org:team/x.git",
		"file:///srv/x.git":          "file:///srv/x.git",
		"./dir:with-colon/x.git":     filepath.Join(wd, "dir:with-colon/x.git"),
	} {
		name := fmt.Sprintf("r%d", len(url))
		if err := r.AddRemote(ctx, name, url); err != nil {
			t.Fatalf("AddRemote %s: %v", url, err)
		}
		if got, err := r.RemoteURL(ctx, name); err != nil || got != want {
			t.Errorf("remote %s: %q, %v; want %q", url, got, err, want)
		}
		r.RemoveRemote(ctx, name)
	}
	if err := r.RemoveRemote(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveRemote(ctx, "up"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second remove = %v", err)
	}
	if rs, err := r.Remotes(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("Remotes = %v, %v", rs, err)
	}
	if _, err := r.Fetch(ctx, "nowhere", FetchOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("fetch from an unknown remote = %v", err)
	}
}

// TestMissingRepositoryIsNotFound: whatever the transport, an address that
// names no repository is ErrNotFound (exit 3), and a failure to reach or
// be let in is not.
func TestMissingRepositoryIsNotFound(t *testing.T) {
	exit := &exec.ExitError{}
	for stderr, missing := range map[string]bool{
		"fatal: remote error: no such repository: /x.git\n":                                                           true,
		"fatal: remote error: access denied or repository not exported: /x.git\n":                                     true,
		"fatal: repository 'http://127.0.0.1:1/x.git/' not found\n":                                                   true,
		"fatal: '/srv/x.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n": true,
		"ERROR: Repository not found.\nfatal: Could not read from remote repository.\n":                               true,
		"git@host: Permission denied (publickey).\nfatal: Could not read from remote repository.\n":                   false,
		"fatal: unable to access 'https://host/x.git/': Could not resolve host: host\n":                               false,
	} {
		err := transportError(exit, []byte(stderr), "x")
		if !errors.Is(err, ErrRemote) || errors.Is(err, ErrNotFound) != missing {
			t.Errorf("%q: %v (not found: %v, want %v)", stderr, err, errors.Is(err, ErrNotFound), missing)
		}
	}
}

func TestTransportErrorsHideCredentials(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	url := "http://agent:s3cret-token@127.0.0.1:1/s.git"
	if err := r.AddRemote(ctx, "origin", url); err != nil {
		t.Fatal(err)
	}
	_, err := r.Fetch(ctx, "origin", FetchOptions{})
	if !errors.Is(err, ErrRemote) {
		t.Fatalf("fetch from a closed port = %v", err)
	}
	if strings.Contains(err.Error(), "s3cret-token") {
		t.Fatalf("error shows the password: %v", err)
	}
	for in, want := range map[string]string{
		"https://u:pw@host/x":      "https://xxxxx@host/x",
		"https://token@host/x":     "https://xxxxx@host/x",
		"ssh://git@host/x":         "ssh://git@host/x",
		"git@github.com:org/s.git": "git@github.com:org/s.git",
		"/srv/git/s.git":           "/srv/git/s.git",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePorcelain(t *testing.T) {
	out := "To git://127.0.0.1:1/s.git\n" +
		"*\trefs/heads/a:refs/heads/a\t[new branch]\n" +
		" \trefs/heads/b:refs/heads/b\t1111111..2222222\n" +
		"!\trefs/heads/c:refs/heads/c\t[rejected] (non-fast-forward)\n" +
		"!\trefs/heads/d:refs/heads/d\t[remote rejected] (pre-receive hook declined)\n" +
		"=\trefs/tags/t:refs/tags/t\t[up to date]\n" +
		"Done\n"
	got := parsePorcelain([]byte(out))
	want := []PushResult{
		{Src: "refs/heads/a", Dst: "refs/heads/a", Status: "new", Summary: "[new branch]"},
		{Src: "refs/heads/b", Dst: "refs/heads/b", Status: "ok", Summary: "1111111..2222222"},
		{Src: "refs/heads/c", Dst: "refs/heads/c", Status: "rejected", Summary: "[rejected]", Reason: "non-fast-forward"},
		{Src: "refs/heads/d", Dst: "refs/heads/d", Status: "rejected", Summary: "[remote rejected]", Reason: "pre-receive hook declined"},
		{Src: "refs/tags/t", Dst: "refs/tags/t", Status: "up-to-date", Summary: "[up to date]"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	pe := &PushError{Remote: "o", Rejected: got[3:4]}
	if pe.NonFastForward() || errors.Is(pe, ErrStale) {
		t.Error("a hook refusal reads as non-fast-forward")
	}
}

func TestValidNamePart(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"origin", true}, {"agent-7", true}, {"a.b_c", true}, {"_x", true}, {"9", true},
		{"", false}, {"-x", false}, {".x", false}, {"a..b", false}, {"x.lock", false},
		{"a b", false}, {"a/b", false}, {"a:b", false}, {"é", false}, {"a~1", false}, {"a\n", false},
	} {
		if got := ValidNamePart(tc.s); got != tc.ok {
			t.Errorf("ValidNamePart(%q) = %v", tc.s, got)
		}
		if err := CheckRemoteName(tc.s); (err == nil) != tc.ok {
			t.Errorf("CheckRemoteName(%q): %v", tc.s, err)
		}
		// Whatever passes is a valid ref name component for git itself.
		if tc.ok {
			if out, err := exec.Command("git", "check-ref-format", "refs/remotes/"+tc.s+"/main").CombinedOutput(); err != nil {
				t.Errorf("git refuses %q: %s", tc.s, out)
			}
		}
	}
}

// TestFetchSaysWhyARefWasRejected: a tag moved on the server makes git
// refuse to fetch it; the error carries git's reason, not only its exit
// status.
func TestFetchSaysWhyARefWasRejected(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	c := write(t, r, map[string]string{"a.json": "1\n"})
	git(t, r.Dir(), "tag", "t1", c.Hash.String())
	server := filepath.Join(t.TempDir(), "srv.git")
	testutil.Git{}.Run(t, "clone", "-q", "--bare", r.Dir(), server)
	clone, err := Clone(ctx, server, filepath.Join(t.TempDir(), "c.git"), CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	c2 := write(t, r, map[string]string{"a.json": "2\n"})
	git(t, server, "fetch", "-q", r.Dir(), "refs/heads/main:refs/heads/main")
	git(t, server, "tag", "-f", "t1", c2.Hash.String())
	_, err = clone.Fetch(ctx, DefaultRemote, FetchOptions{})
	if !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "would clobber existing tag") {
		t.Fatalf("fetch of a moved tag: %v", err)
	}
}
