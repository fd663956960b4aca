package hooks

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// dagRepo is a bare repository of random commits (each of one to three
// parents among the earlier ones) with branches and tags on some, dated
// in order or, with skew, at random.
type dagRepo struct {
	dir     string
	commits []string
	refs    []string
}

func newDagRepo(t testing.TB, seed int64, n int, skew bool) *dagRepo {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "", "init", "-q", "--bare")
	rng := rand.New(rand.NewSource(seed))
	d := &dagRepo{dir: dir}
	blob := gitIn(t, dir, "{}\n", "hash-object", "-w", "--stdin")
	tree := gitIn(t, dir, "100644 blob "+blob+"\tf.json\n", "mktree")
	for i := 0; i < n; i++ {
		args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", i)}
		if i > 0 {
			seen := map[int]bool{}
			for k := 0; k < 1+rng.Intn(3) && k < i; k++ {
				p := i - 1 - rng.Intn(min(i, 6))
				if rng.Intn(4) == 0 {
					p = rng.Intn(i)
				}
				if !seen[p] {
					seen[p] = true
					args = append(args, "-p", d.commits[p])
				}
			}
		}
		when := 1_700_000_000 + int64(i)*60
		if skew && rng.Intn(3) == 0 {
			when = 1_700_000_000 + rng.Int63n(int64(n)*60)
		}
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("GIT_COMMITTER_DATE=%d +0000", when), fmt.Sprintf("GIT_AUTHOR_DATE=%d +0000", when),
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.invalid")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git commit-tree: %v", err)
		}
		d.commits = append(d.commits, strings.TrimSpace(string(out)))
		switch rng.Intn(6) {
		case 0:
			ref := fmt.Sprintf("refs/heads/b%d", i)
			gitIn(t, dir, "", "update-ref", ref, d.commits[i])
			d.refs = append(d.refs, ref)
		case 1:
			ref := fmt.Sprintf("refs/tags/t%d", i)
			gitIn(t, dir, "", "tag", "-a", "-m", "t", fmt.Sprintf("t%d", i), d.commits[i])
			d.refs = append(d.refs, ref)
		}
	}
	return d
}

func (d *dagRepo) revList(t testing.TB, args ...string) []string {
	t.Helper()
	out := gitIn(t, d.dir, "", append([]string{"rev-list", "--reverse", "--topo-order"}, args...)...)
	return strings.Fields(out)
}

func (d *dagRepo) checker(t testing.TB) *checker {
	t.Helper()
	cat, err := newCatFile(context.Background(), d.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cat.close)
	if cat.r == nil {
		t.Fatal("the checker reads this repository through git: the test shows nothing")
	}
	return &checker{gitDir: d.dir, cat: cat, ctx: context.Background()}
}

// TestNewCommitsIsGitsRevList holds the in-process walk to git rev-list:
// the same commits in the same order when dates are in order; with dates
// that lie, every commit new to the refs and none the tip does not reach,
// parents before children (git itself may then list some a ref reaches).
func TestNewCommitsIsGitsRevList(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		skew := seed > 3
		d := newDagRepo(t, seed, 60, skew)
		c := d.checker(t)
		rng := rand.New(rand.NewSource(seed))
		for trial := 0; trial < 15; trial++ {
			tip := d.commits[len(d.commits)/2+rng.Intn(len(d.commits)/2)]
			var args []string
			switch trial % 3 {
			case 0:
				args = []string{tip, "--not", "--branches", "--tags"}
			case 1:
				args = []string{tip, "--not", d.commits[rng.Intn(len(d.commits))]}
			default:
				args = []string{tip, "--not"}
				for _, r := range d.refs {
					if rng.Intn(2) == 0 {
						args = append(args, r)
					}
				}
			}
			got, ok, err := c.commitsHere(args)
			if err != nil || !ok {
				t.Fatalf("seed %d %v: in process: ok %v, %v", seed, args, ok, err)
			}
			want := d.revList(t, args...)
			if !skew {
				if !slices.Equal(got, want) {
					t.Errorf("seed %d %v:\n got %v\nwant %v", seed, args, got, want)
				}
				continue
			}
			// The exact set: what the tip reaches, less what a hidden
			// tip reaches.
			reach := d.revList(t, tip)
			hidden := map[string]bool{}
			if neg := negatives(args); len(neg) > 0 {
				for _, h := range d.revList(t, neg...) {
					hidden[h] = true
				}
			}
			gotSet := map[string]bool{}
			for _, h := range got {
				gotSet[h] = true
			}
			for _, h := range reach {
				if !hidden[h] && !gotSet[h] {
					t.Errorf("seed %d %v: %s is new and not listed", seed, args, h)
				}
			}
			pos := map[string]int{}
			for i, h := range got {
				if !slices.Contains(reach, h) {
					t.Errorf("seed %d %v: %s listed, the tip does not reach it", seed, args, h)
				}
				pos[h] = i
			}
			for _, h := range got {
				for _, p := range strings.Fields(gitIn(t, d.dir, "", "log", "-1", "--format=%P", h)) {
					if i, ok := pos[p]; ok && i > pos[h] {
						t.Errorf("seed %d %v: parent %s after %s", seed, args, p, h)
					}
				}
			}
		}
	}
}

// negatives turns the --not part of rev-list arguments into what git
// rev-list takes as positives.
func negatives(args []string) []string {
	var out []string
	for _, a := range args[2:] {
		out = append(out, a)
	}
	return out
}

// TestReadsInProcessAreGits reads names the checker asks for in process
// and through git cat-file: the same answers.
func TestReadsInProcessAreGits(t *testing.T) {
	s := newObjStore(t)
	doc := s.blob("{\"v\":1}\n")
	sub := s.tree(rawEntry{"100644", "d.json", doc})
	root := s.tree(rawEntry{"100644", "a.json", doc}, rawEntry{"40000", "dir", sub})
	c1 := s.commit("x", root)
	gitIn(t, s.dir, "", "update-ref", "refs/heads/main", c1)
	gitIn(t, s.dir, "", "tag", "-a", "-m", "t", "t1", c1)
	gitIn(t, s.dir, "", "tag", "-a", "-m", "t", "treetag", root)
	gitIn(t, s.dir, "", "symbolic-ref", "HEAD", "refs/heads/main")
	names := []string{
		c1, root, doc, c1 + "^{commit}", root + "^{commit}", doc + "^{commit}",
		"refs/heads/main", "refs/heads/main^{commit}", "refs/tags/t1", "refs/tags/t1^{commit}", "refs/tags/treetag^{commit}",
		"HEAD", "HEAD^{commit}", "HEAD:a.json", "HEAD:dir", "HEAD:dir/d.json", "HEAD:", "HEAD:nope", "HEAD:a.json/x",
		c1 + ":dir/d.json", root + ":dir/d.json", "refs/tags/t1:dir", "refs/tags/treetag:a.json", doc + ":a.json",
		"refs/heads/nope", "refs/heads/nope^{commit}", strings.Repeat("0", 40), strings.Repeat("0", 40) + ":a.json",
		repoEmptyTree, repoEmptyTree + ":x",
	}
	compareReads(t, filepath.Join(s.dir, ".git"), names)
}

const repoEmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

func compareReads(t *testing.T, dir string, names []string) {
	t.Helper()
	here, err := newCatFile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer here.close()
	if here.r == nil {
		t.Fatal("the checker reads this repository through git: the test shows nothing")
	}
	git, err := newCatFile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	git.r.Close()
	git.r = nil
	defer git.close()
	for _, name := range names {
		if strings.ContainsAny(name, "\n") {
			continue
		}
		typ, body, ok, err := here.readHere(name)
		if !ok {
			continue
		}
		wtyp, wbody, werr := git.read(name)
		if (err == nil) != (werr == nil) || typ != wtyp || string(body) != string(wbody) {
			t.Errorf("%q: in process %s %q %v; git %s %q %v", name, typ, body, err, wtyp, wbody, werr)
		}
		ityp, isize, ok, err := here.infoHere(name)
		if !ok {
			continue
		}
		if (err == nil) != (werr == nil) || ityp != wtyp || isize != int64(len(wbody)) {
			t.Errorf("%q: info in process %s %d %v; git %s %d %v", name, ityp, isize, err, wtyp, len(wbody), werr)
		}
	}
}

// FuzzReadHere: whatever name the checker is asked for, an answer given
// in process is git cat-file's.
func FuzzReadHere(f *testing.F) {
	for _, s := range []string{"HEAD", "HEAD^{commit}", "HEAD:a.json", "refs/heads/main:dir/d.json", "refs/tags/t1^{commit}", "HEAD:dir//d.json", "refs/heads/main~1", ":a.json", repoEmptyTree} {
		f.Add(s)
	}
	dir := f.TempDir()
	gitIn(f, dir, "", "init", "-q", "--bare")
	doc := gitIn(f, dir, "{}\n", "hash-object", "-w", "--stdin")
	sub := gitIn(f, dir, "100644 blob "+doc+"\td.json\n", "mktree")
	root := gitIn(f, dir, "100644 blob "+doc+"\ta.json\n040000 tree "+sub+"\tdir\n", "mktree")
	cmd := exec.Command("git", "-C", dir, "commit-tree", root, "-m", "c")
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.invalid")
	out, err := cmd.Output()
	if err != nil {
		f.Fatal(err)
	}
	gitIn(f, dir, "", "update-ref", "refs/heads/main", strings.TrimSpace(string(out)))
	gitIn(f, dir, "", "symbolic-ref", "HEAD", "refs/heads/main")
	gitIn(f, dir, "", "tag", "-a", "-m", "t", "t1", "main")
	f.Fuzz(func(t *testing.T, name string) {
		compareReads(t, dir, []string{name})
	})
}

// TestCheckerReadsQuarantineInProcess: inside pre-receive the checker
// opens the push's quarantine and the repository as its alternate, as
// git's environment names them.
func TestCheckerReadsQuarantineInProcess(t *testing.T) {
	d := newDagRepo(t, 9, 5, false)
	quarantine := filepath.Join(d.dir, "objects", "tmp_objdir-incoming-test")
	if err := os.MkdirAll(filepath.Join(quarantine, "pack"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-C", d.dir, "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader("{\"new\":1}\n")
	cmd.Env = append(os.Environ(), "GIT_OBJECT_DIRECTORY="+quarantine)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pushed := strings.TrimSpace(string(out))
	t.Setenv("GIT_OBJECT_DIRECTORY", quarantine)
	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", filepath.Join(d.dir, "objects"))
	c := d.checker(t)
	for _, h := range []string{pushed, d.commits[0]} {
		if _, _, err := c.cat.read(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if _, _, err := c.cat.r.ReadObject(plumbing.NewHash(pushed)); err != nil {
		t.Error(err)
	}
	t.Setenv("GIT_NAMESPACE", "x")
	if cat, _ := newCatFile(context.Background(), d.dir); cat.r != nil {
		t.Error("a ref namespace is read in process: git must read it")
	}
}
