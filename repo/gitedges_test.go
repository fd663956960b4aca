package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func commitOn(t *testing.T, r *Repo, branch, path, body string) (*Commit, error) {
	t.Helper()
	return r.Commit(context.Background(), branch, func(tx *Tx) (*CommitInfo, error) {
		if err := tx.WriteFile(path, []byte(body)); err != nil {
			return nil, err
		}
		sig := NewSignature("agent-1", time.Unix(1700000000, 0))
		return &CommitInfo{Author: sig, Committer: sig, Message: "test\n"}, nil
	}, CommitOptions{})
}

// A branch that is a symbolic ref to another (an alias, master for main)
// is written through: the commit extends the branch it names, as git
// commit does, and the symbolic ref stays one.
func TestCommitThroughSymbolicRef(t *testing.T) {
	r := newRepo(t)
	first := write(t, r, map[string]string{"a": "1\n"})
	git(t, r.Dir(), "symbolic-ref", "refs/heads/master", "refs/heads/main")
	git(t, r.Dir(), "symbolic-ref", "HEAD", "refs/heads/master")
	c, err := commitOn(t, r, "refs/heads/master", "b", "2\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Parents) != 1 || c.Parents[0] != first.Hash {
		t.Fatalf("parents %v, want %s", c.Parents, first.Hash)
	}
	if got := strings.TrimSpace(git(t, r.Dir(), "symbolic-ref", "refs/heads/master")); got != "refs/heads/main" {
		t.Fatalf("master is now %q, still wanted a symbolic ref to main", got)
	}
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "main")); got != c.Hash.String() {
		t.Fatalf("main at %s, want %s", got, c.Hash)
	}
	if h, err := r.Ref("refs/heads/master"); err != nil || h != c.Hash {
		t.Fatalf("Ref(master) = %s, %v", h, err)
	}
	// A compare-and-swap through it compares the branch it names.
	stale := first.Hash
	_, err = r.Commit(context.Background(), "refs/heads/master", func(tx *Tx) (*CommitInfo, error) {
		return nil, errors.New("not reached")
	}, CommitOptions{Expect: &stale})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("stale expect: %v", err)
	}
	// UpdateRef follows it as git update-ref does; deleting through it is
	// refused, the branch it names untouched.
	if err := r.UpdateRef(context.Background(), "refs/heads/master", c.Hash, first.Hash); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.Ref("refs/heads/main"); h != first.Hash {
		t.Fatalf("main at %s after UpdateRef through master", h)
	}
	if err := r.UpdateRef(context.Background(), "refs/heads/master", first.Hash, plumbing.ZeroHash); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("delete through a symbolic ref: %v", err)
	}
	if h, _ := r.Ref("refs/heads/main"); h != first.Hash {
		t.Fatal("main moved by a refused delete")
	}
	syms, err := r.SymbolicRefs("refs/heads/")
	if err != nil || syms["refs/heads/master"] != "refs/heads/main" || len(syms) != 1 {
		t.Fatalf("SymbolicRefs = %v, %v", syms, err)
	}
	testutil.Fsck(t, r.Dir())
}

// Symbolic refs that loop, nest deeper than git follows, or lead a branch
// out of refs/heads/ are refused, nothing written.
func TestCommitThroughBadSymbolicRefs(t *testing.T) {
	r := newRepo(t)
	first := write(t, r, map[string]string{"a": "1\n"})
	git(t, r.Dir(), "tag", "v1", first.Hash.String())
	git(t, r.Dir(), "symbolic-ref", "refs/heads/totag", "refs/tags/v1")
	// git symbolic-ref refuses to make a loop; one made by hand:
	os.WriteFile(filepath.Join(r.Dir(), "refs/heads/l1"), []byte("ref: refs/heads/l2\n"), 0o644)
	os.WriteFile(filepath.Join(r.Dir(), "refs/heads/l2"), []byte("ref: refs/heads/l1\n"), 0o644)
	for i := 1; i <= 5; i++ {
		git(t, r.Dir(), "symbolic-ref", fmt.Sprintf("refs/heads/d%d", i), fmt.Sprintf("refs/heads/d%d", i+1))
	}
	git(t, r.Dir(), "update-ref", "refs/heads/d6", first.Hash.String())
	for _, b := range []string{"refs/heads/totag", "refs/heads/l1", "refs/heads/d1"} {
		if _, err := commitOn(t, r, b, "b", "2\n"); !errors.Is(err, ErrUnsupported) {
			t.Errorf("commit on %s: %v", b, err)
		}
	}
	// Four levels, as git follows them: d2 -> d3 -> d4 -> d5 -> d6.
	if _, err := commitOn(t, r, "refs/heads/d2", "b", "2\n"); err != nil {
		t.Fatal(err)
	}
	if out, err := (testutil.Git{GitDir: r.Dir()}).Try("rev-parse", "--verify", "-q", "refs/heads/d1"); err == nil {
		t.Fatalf("git follows d1 (%s): the depth limit is not git's", out)
	}
	if h, _ := r.Ref("refs/tags/v1"); h != first.Hash {
		t.Fatal("a tag moved")
	}
	for _, f := range []string{"refs/heads/l1.lock", "refs/heads/totag.lock", "refs/tags/v1.lock"} {
		if _, err := os.Stat(filepath.Join(r.Dir(), f)); err == nil {
			t.Errorf("%s left behind", f)
		}
	}
}

// Loose refs read as git reads them: "ref:" with or without a space, a
// hash followed by whitespace and anything; a target outside refs/ is
// refused, never followed.
func TestParseRefFile(t *testing.T) {
	h := "0123456789abcdef0123456789abcdef01234567"
	for in, want := range map[string]string{
		"ref: refs/heads/main\n":  "sym:refs/heads/main",
		"ref:refs/heads/main\n":   "sym:refs/heads/main",
		"ref:\trefs/heads/main":   "sym:refs/heads/main",
		h + "\n":                  h,
		h:                         h,
		h + " trailing":           h,
		strings.ToUpper(h) + "\n": h,
		h + "x\n":                 "bad",
		h[:39] + "\n":             "bad",
		"ref: ../../etc/passwd\n": "bad",
		"ref: refs/../HEAD\n":     "bad",
		"ref: main\n":             "bad",
		"":                        "bad",
	} {
		got, sym, ok := parseRefFile([]byte(in))
		s := got.String()
		switch {
		case !ok:
			s = "bad"
		case sym != "":
			s = "sym:" + sym
		}
		if s != want {
			t.Errorf("parseRefFile(%q) = %s, want %s", in, s, want)
		}
	}
}

func TestHeadWithoutSpace(t *testing.T) {
	r := newRepo(t)
	c := write(t, r, map[string]string{"a": "1\n"})
	os.WriteFile(filepath.Join(r.Dir(), "HEAD"), []byte("ref:refs/heads/main\n"), 0o644)
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-parse", "--symbolic-full-name", "HEAD")); got != "refs/heads/main" {
		t.Fatalf("git reads HEAD as %q", got)
	}
	head, err := r.Head()
	if err != nil || head != "refs/heads/main" {
		t.Fatalf("Head() = %q, %v", head, err)
	}
	if h, err := r.Resolve("HEAD", head); err != nil || h != c.Hash {
		t.Fatalf("Resolve(HEAD) = %s, %v", h, err)
	}
}

func FuzzParseRefFile(f *testing.F) {
	for _, s := range []string{"ref: refs/heads/main\n", "ref:refs/x", "0123456789abcdef0123456789abcdef01234567\n", "ref: ../x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, sym, ok := parseRefFile(data)
		if !ok {
			return
		}
		if sym != "" {
			if !h.IsZero() || !strings.HasPrefix(sym, "refs/") || strings.Contains(sym, "..") {
				t.Fatalf("%q: symbolic ref %q", data, sym)
			}
			return
		}
		if !strings.EqualFold(string(data[:40]), h.String()) {
			t.Fatalf("%q read as %s", data, h)
		}
	})
}

// Revisions resolve as git resolves them: git rev-parse is the oracle.
func TestResolveAsGit(t *testing.T) {
	r := newRepo(t)
	var cs []*Commit
	for i := 0; i < 4; i++ {
		cs = append(cs, write(t, r, map[string]string{"a": fmt.Sprintf("%d\n", i)}))
	}
	id := cs[0].Hash.String()
	// A branch named as a full commit id: the id still names the commit.
	git(t, r.Dir(), "branch", id, cs[3].Hash.String())
	// refs/<name> comes before refs/heads/<name>; a remote's HEAD is read
	// as the remote.
	git(t, r.Dir(), "update-ref", "refs/x", cs[1].Hash.String())
	git(t, r.Dir(), "branch", "x", cs[2].Hash.String())
	git(t, r.Dir(), "update-ref", "refs/remotes/origin/main", cs[2].Hash.String())
	git(t, r.Dir(), "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	// A branch named like git's ORIG_HEAD, and the file git reads first.
	git(t, r.Dir(), "branch", "ORIG_HEAD", cs[3].Hash.String())
	os.WriteFile(filepath.Join(r.Dir(), "ORIG_HEAD"), []byte(cs[1].Hash.String()+"\n"), 0o644)
	for _, rev := range []string{id, strings.ToUpper(id), "x", "origin", "origin/main", "heads/x", "refs/heads/x", "ORIG_HEAD", "heads/ORIG_HEAD"} {
		want := strings.TrimSpace((testutil.Git{GitDir: r.Dir()}).Output(t, "rev-parse", "--verify", "-q", rev+"^{commit}"))
		got, err := r.Resolve(rev, "refs/heads/main")
		if err != nil || got.String() != want {
			t.Errorf("Resolve(%q) = %s, %v; git: %s", rev, got, err, want)
		}
	}
	// A tag and a branch of one name: git warns and takes the tag; the
	// answer is refused, naming both.
	git(t, r.Dir(), "branch", "both", cs[2].Hash.String())
	git(t, r.Dir(), "tag", "both", cs[0].Hash.String())
	_, err := r.Resolve("both~1", "refs/heads/main")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "refs/tags/both") || !strings.Contains(err.Error(), "refs/heads/both") {
		t.Fatalf("ambiguous name: %v", err)
	}
	for _, rev := range []string{"refs/tags/both", "refs/heads/both", "tags/both", "heads/both"} {
		want := strings.TrimSpace((testutil.Git{GitDir: r.Dir()}).Output(t, "rev-parse", "--verify", "-q", rev+"^{commit}"))
		if got, err := r.Resolve(rev, "refs/heads/main"); err != nil || got.String() != want {
			t.Errorf("Resolve(%q) = %s, %v; git: %s", rev, got, err, want)
		}
	}
}

func writeConfig(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The repository format is refused where git refuses it, and accepted
// where git accepts it: git rev-parse is the oracle for every config.
func TestRepositoryFormatAsGit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	r, err := Init(context.Background(), dir, "main", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for _, tc := range []struct {
		config string
		name   string // the extension or setting a refusal names
		notGit bool   // refused where git accepts it
	}{
		{"[core]\n\trepositoryformatversion = 0\n", "", false},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tnoop = true\n\tnoop-v1 = true\n\tobjectFormat = sha1\n\tworktreeConfig = true\n", "", false},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialClone = origin\n", "", false},
		{"[core]\n\trepositoryformatversion = 0\n[extensions]\n\tfrobnicate = true\n", "", false}, // version 0 ignores it, as git
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tfrobnicate = true\n", "frobnicate", false},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefStorage = reftable\n", "refstorage", false},
		{"[core]\n\trepositoryformatversion = 1\n[Extensions \"x\"]\n\tfoo = 1\n", "x.foo", false},
		{"[core]\n\trepositoryformatversion = 2\n", "repositoryformatversion is 2", false},
		{"[core]\n\trepositoryformatversion = 0\n[extensions]\n\tobjectformat = sha1\n", "objectformat", false},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n", "SHA256", true},
		{"[extensions]\n\tfrobnicate\n[core]\n\trepositoryformatversion = \"1\" ; a comment\n", "frobnicate", false},
		{"[core]\n\trepositoryformatversion = 1\n[core]\n\trepositoryformatversion = 0\n[extensions]\nfrobnicate = 1\n", "", false},
		{"[core] repositoryformatversion = 1\n[extensions] frobnicate\n", "frobnicate", false},
		{"[core]\n\trepositoryformatversion = 1\n\tobjectformat = sha256\n", "", false}, // core.objectformat means nothing
		{"[core\n", "does not parse", false},
	} {
		writeConfig(t, dir, tc.config)
		_, gitErr := (testutil.Git{GitDir: dir}).Try("rev-parse", "--git-dir")
		r, err := Open(context.Background(), dir, Options{})
		if err == nil {
			r.Close()
		}
		if (err != nil) != (gitErr != nil || tc.notGit) {
			t.Errorf("config %q: aiwg-state: %v; git refuses: %v", tc.config, err, gitErr != nil)
			continue
		}
		if err != nil && (!errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.name)) {
			t.Errorf("config %q: %v, want ErrUnsupported naming %q", tc.config, err, tc.name)
		}
	}
}

// extensions.preciousObjects: git never deletes a pack of such a
// repository, and aiwg-state's writes replace the tail pack they extend;
// the store reads, and refuses to write, with nothing moved.
func TestPreciousObjectsRefusesWrites(t *testing.T) {
	r := newRepo(t)
	c := write(t, r, map[string]string{"a": "1\n"})
	dir := r.Dir()
	r.Close()
	git(t, dir, "config", "core.repositoryformatversion", "1")
	git(t, dir, "config", "extensions.preciousObjects", "true")
	packs := func() string {
		es, _ := os.ReadDir(filepath.Join(dir, "objects", "pack"))
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	before := packs()
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, err := r.Ref("refs/heads/main"); err != nil || h != c.Hash {
		t.Fatalf("read: %s, %v", h, err)
	}
	if _, err := commitOn(t, r, "refs/heads/main", "b", "2\n"); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "preciousObjects") {
		t.Fatalf("write: %v", err)
	}
	if packs() != before {
		t.Fatalf("packs changed: %s -> %s", before, packs())
	}
	if h, _ := r.Ref("refs/heads/main"); h != c.Hash {
		t.Fatal("the branch moved")
	}
}

func FuzzParseGitConfig(f *testing.F) {
	for _, s := range []string{"[core]\n\tbare = true\n", "[remote \"o\\\"x\"]\n\turl = \"a b\" ; c\n", "[a.B] k\n", "[x]\nk = a\\\n b\n", "\xef\xbb\xbf[x]k=\"\\t\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parseGitConfig(data, func(key, value string, noValue bool) {
			if !strings.Contains(key, ".") || noValue && value != "" {
				t.Fatalf("%q: key %q value %q", data, key, value)
			}
		})
	})
}

// The config parser agrees with git config --list on what keys and
// values a file holds.
func TestParseGitConfigAsGit(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config")
	for _, body := range []string{
		"[core]\n\tbare = true\n\tRepositoryFormatVersion=1\n",
		"[remote \"Or\\\"ig\"]\n\turl = \"a  b\" ; comment\n\tfetch = x # c\n",
		"[branch.Main]\n\tk\n",
		"[x]\n\tk = a\\\n\tb\\tc\\\\ \"q;#\" \n",
		"; top\n# comment\n[x] k = 1\n\n[y \"\"]\n\tz = \"\"\n",
		"[x]\r\n\tk = v\r\n",
	} {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		want := (testutil.Git{}).Output(t, "config", "--file", file, "--list", "-z")
		var got strings.Builder
		err := parseGitConfig([]byte(body), func(key, value string, noValue bool) {
			got.WriteString(key)
			if !noValue {
				got.WriteString("\n" + value)
			}
			got.WriteByte(0)
		})
		if err != nil || got.String() != want {
			t.Errorf("config %q:\n got %q, %v\nwant %q", body, got.String(), err, want)
		}
	}
}

// A pack or refs directory this user may not write: the write is refused
// with a *PermissionError naming it, before anything moved.
func TestReadOnlyDirectories(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes whatever the modes say: run the writer as nobody.
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("runs as root, without setpriv to drop to another user")
		}
	}
	for _, sub := range []string{"objects/pack", "refs/heads"} {
		t.Run(strings.ReplaceAll(sub, "/", "_"), func(t *testing.T) {
			r := newRepo(t)
			c := write(t, r, map[string]string{"a": "1\n"})
			dir := r.Dir()
			r.Close()
			before := listAll(t, dir)
			if os.Geteuid() == 0 {
				filepath.Walk(filepath.Dir(dir), func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, 65534, 65534) })
				os.Chmod(filepath.Dir(filepath.Dir(dir)), 0o755) // t.TempDir's own, 0700
			}
			os.Chmod(filepath.Join(dir, sub), 0o555)
			defer os.Chmod(filepath.Join(dir, sub), 0o755)
			err := writeAs(t, dir)
			var pe *PermissionError
			if !errors.As(err, &pe) || pe.Dir != sub || !errors.Is(err, ErrPermission) {
				t.Fatalf("write to a read-only %s: %v", sub, err)
			}
			os.Chmod(filepath.Join(dir, sub), 0o755)
			if after := listAll(t, dir); after != before {
				t.Fatalf("files changed:\n%s\n->\n%s", before, after)
			}
			if got := strings.TrimSpace(git(t, dir, "rev-parse", "main")); got != c.Hash.String() {
				t.Fatal("the branch moved")
			}
		})
	}
}

// listAll lists the store's files but aiwg/ (lock files of this process).
func listAll(t *testing.T, dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err == nil && !fi.IsDir() && !strings.HasPrefix(rel, "aiwg") {
			out = append(out, rel)
		}
		return nil
	})
	return strings.Join(out, "\n")
}

// writeAs commits to dir; as root, in a child process running as nobody.
func writeAs(t *testing.T, dir string) error {
	if os.Geteuid() != 0 {
		r, err := Open(context.Background(), dir, Options{})
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = commitOn(t, r, "refs/heads/main", "b", "2\n")
		return err
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^TestWriteAsChild$")
	cmd.Env = append(os.Environ(), "AIWG_TEST_WRITE_DIR="+dir, "HOME=/tmp", "GOCOVERDIR=")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	i := strings.Index(s, "DIR=")
	if i < 0 {
		t.Fatalf("child: %s", s)
	}
	dirName, _, _ := strings.Cut(s[i+4:], "\n")
	return &PermissionError{Dir: dirName, Err: syscall.EACCES}
}

// TestWriteAsChild is writeAs's child: it reports the directory a
// *PermissionError names.
func TestWriteAsChild(t *testing.T) {
	dir := os.Getenv("AIWG_TEST_WRITE_DIR")
	if dir == "" {
		t.Skip("run by writeAs")
	}
	err := writeAs(t, dir)
	var pe *PermissionError
	if errors.As(err, &pe) {
		fmt.Printf("DIR=%s\n", pe.Dir)
		return
	}
	fmt.Printf("ERR=%v\n", err)
}

// Writers through an alias and through the branch it names take the same
// lock: their commits line up, none lost.
func TestSymbolicRefWritersSerialize(t *testing.T) {
	r := newRepo(t)
	write(t, r, map[string]string{"a": "0\n"})
	git(t, r.Dir(), "symbolic-ref", "refs/heads/master", "refs/heads/main")
	const n = 15
	errs := make(chan error, 2)
	for _, b := range []string{"refs/heads/main", "refs/heads/master"} {
		go func(b string) {
			for i := 0; i < n; i++ {
				if _, err := commitOn(t, r, b, fmt.Sprintf("%s/%d", strings.TrimPrefix(b, "refs/heads/"), i), "1\n"); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(b)
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.TrimSpace(git(t, r.Dir(), "rev-list", "--count", "main")); got != fmt.Sprint(2*n+1) {
		t.Fatalf("main has %s commits, want %d", got, 2*n+1)
	}
	if sym := strings.TrimSpace(git(t, r.Dir(), "symbolic-ref", "refs/heads/master")); sym != "refs/heads/main" {
		t.Fatalf("master: %q", sym)
	}
	testutil.Fsck(t, r.Dir())
}

// TestLooseSymbolicRefHidesItsPackedValue: a loose symbolic ref over a
// packed ref of the same name is what git reads (it follows the symbolic
// ref); Refs, which lists values, must not report the stale packed one.
func TestLooseSymbolicRefHidesItsPackedValue(t *testing.T) {
	r := newRepo(t)
	one := write(t, r, map[string]string{"a.json": "1"}).Hash.String()
	write(t, r, map[string]string{"a.json": "2"})
	git(t, r.Dir(), "update-ref", "refs/heads/a", one)
	git(t, r.Dir(), "pack-refs", "--all", "--prune")
	git(t, r.Dir(), "symbolic-ref", "refs/heads/a", "refs/heads/main")
	refs, _, err := r.Refs("refs/heads/")
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := refs["refs/heads/a"]; ok && h.String() == one {
		t.Errorf("refs/heads/a listed at its packed value %s; git reads it as refs/heads/main (%s)", one, git(t, r.Dir(), "rev-parse", "refs/heads/a"))
	}
}
