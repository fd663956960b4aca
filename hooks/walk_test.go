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
// in order or, with skew, at random. The commits from quarantine on are
// written to a quarantine directory, as a push's are before pre-receive
// accepts them, and no ref names them.
type dagRepo struct {
	dir, quarantine string
	commits         []string
	refs            []string
	from            int // the first commit in the quarantine
}

func newDagRepo(t testing.TB, seed int64, n, quarantine int, skew bool) *dagRepo {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "", "init", "-q", "--bare")
	q := filepath.Join(dir, "objects", "tmp_objdir-incoming-test")
	if err := os.MkdirAll(filepath.Join(q, "pack"), 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	d := &dagRepo{dir: dir, quarantine: q, from: quarantine}
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
		if i >= quarantine {
			cmd.Env = append(cmd.Env, "GIT_OBJECT_DIRECTORY="+q, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(dir, "objects"))
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git commit-tree: %v", err)
		}
		d.commits = append(d.commits, strings.TrimSpace(string(out)))
		if i >= quarantine {
			continue
		}
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
	if len(d.refs) == 0 || d.refs[0] != "refs/heads/main" {
		gitIn(t, dir, "", "update-ref", "refs/heads/main", d.commits[quarantine-1])
		d.refs = append([]string{"refs/heads/main"}, d.refs...)
	}
	return d
}

// enter sets the environment pre-receive runs in.
func (d *dagRepo) enter(t *testing.T) {
	t.Setenv("GIT_OBJECT_DIRECTORY", d.quarantine)
	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", filepath.Join(d.dir, "objects"))
	t.Setenv("GIT_QUARANTINE_PATH", d.quarantine)
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
	if cat.r == nil || !cat.quarantined {
		t.Fatal("the checker reads this repository through git: the test shows nothing")
	}
	return &checker{gitDir: d.dir, cat: cat, ctx: context.Background()}
}

// TestNewCommitsIsGitsRevList holds the walk through a push's quarantine
// to git rev-list: where it answers, the same commits in the same order
// when dates are in order; with dates that lie, the same commits,
// parents before children.
func TestNewCommitsIsGitsRevList(t *testing.T) {
	answered, asked := 0, 0
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { walkTrials(t, seed, &answered, &asked) })
	}
	// Random parents are seldom on a tip's first-parent chain, where the
	// walk looks; an agent's sync is (TestNewCommitsOfASync).
	if answered < asked/5 {
		t.Errorf("the walk answered %d of %d: git answers the rest, the test shows little", answered, asked)
	}
}

// TestNewCommitsOfASync: an agent's sync pushes its commits and a merge
// of a main that has moved on since; the walk answers it in process.
func TestNewCommitsOfASync(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "", "init", "-q", "--bare")
	q := filepath.Join(dir, "objects", "tmp_objdir-incoming-test")
	os.MkdirAll(filepath.Join(q, "pack"), 0o755)
	tree := gitIn(t, dir, "", "mktree")
	n := 0
	commit := func(quarantined bool, parents ...string) string {
		n++
		args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", n)}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("GIT_COMMITTER_DATE=%d +0000", 1_700_000_000+n), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.invalid")
		if quarantined {
			cmd.Env = append(cmd.Env, "GIT_OBJECT_DIRECTORY="+q, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(dir, "objects"))
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	main := []string{commit(false)}
	agent := commit(false, main[0])
	for i := 0; i < 10; i++ {
		other := commit(false, main[len(main)-1]) // another agent's work, merged
		main = append(main, commit(false, main[len(main)-1], other))
	}
	gitIn(t, dir, "", "update-ref", "refs/heads/main", main[len(main)-1])
	gitIn(t, dir, "", "update-ref", "refs/heads/agents/a/main", agent)
	own := commit(true, agent)
	merge := commit(true, own, main[5])
	d := &dagRepo{dir: dir, quarantine: q}
	d.enter(t)
	c := d.checker(t)
	got, ok, err := c.commitsHere([]string{merge, "--not", "--branches", "--tags"})
	if err != nil || !ok || !slices.Equal(got, []string{own, merge}) {
		t.Errorf("in process: %v %v %v; want %s %s", got, ok, err, own, merge)
	}
	if !c.ancestorHere(plumbing.NewHash(agent), plumbing.NewHash(merge)) {
		t.Error("the branch's head is not shown to reach its new head in process")
	}
}

func walkTrials(t *testing.T, seed int64, answered, asked *int) {
	{
		skew := seed > 3
		d := newDagRepo(t, seed, 60, 45, skew)
		d.enter(t)
		c := d.checker(t)
		rng := rand.New(rand.NewSource(seed))
		for trial := 0; trial < 15; trial++ {
			tip := d.commits[d.from+rng.Intn(len(d.commits)-d.from)]
			var args []string
			switch trial % 3 {
			case 0:
				args = []string{tip, "--not", "--branches", "--tags"}
			case 1:
				args = []string{tip, "--not", d.commits[rng.Intn(d.from)], "refs/heads/main"}
			default:
				args = []string{tip, "--not"}
				for _, r := range d.refs {
					if rng.Intn(2) == 0 {
						args = append(args, r)
					}
				}
			}
			*asked++
			got, ok, err := c.commitsHere(args)
			if err != nil {
				t.Fatalf("seed %d %v: %v", seed, args, err)
			}
			if !ok {
				continue
			}
			*answered++
			want := d.revList(t, args...)
			if !skew {
				if !slices.Equal(got, want) {
					t.Errorf("seed %d %v:\n got %v\nwant %v", seed, args, got, want)
				}
				continue
			}
			if g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)); !slices.Equal(g, w) {
				t.Errorf("seed %d %v:\n got %v\nwant %v", seed, args, g, w)
			}
			pos := map[string]int{}
			for i, h := range got {
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
		// old reaches new through the quarantine: the in-process answer
		// is only ever yes, and right.
		for trial := 0; trial < 20; trial++ {
			old := d.commits[rng.Intn(len(d.commits))]
			new := d.commits[d.from+rng.Intn(len(d.commits)-d.from)]
			if !c.ancestorHere(plumbing.NewHash(old), plumbing.NewHash(new)) {
				continue
			}
			if err := exec.Command("git", "-C", d.dir, "merge-base", "--is-ancestor", old, new).Run(); err != nil {
				t.Errorf("seed %d: %s is an ancestor of %s in process, git says %v", seed, old, new, err)
			}
		}
	}
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
// git's environment names them; a ref namespace is left to git.
func TestCheckerReadsQuarantineInProcess(t *testing.T) {
	d := newDagRepo(t, 9, 6, 4, false)
	d.enter(t)
	c := d.checker(t)
	for i, h := range d.commits {
		if _, _, err := c.cat.read(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
		if only := c.cat.r.OnlyInObjectDir(plumbing.NewHash(h)); only != (i >= d.from) {
			t.Errorf("commit %d: only in the quarantine %v", i, only)
		}
	}
	t.Setenv("GIT_NAMESPACE", "x")
	if cat, _ := newCatFile(context.Background(), d.dir); cat.r != nil {
		t.Error("a ref namespace is read in process: git must read it")
	}
}
