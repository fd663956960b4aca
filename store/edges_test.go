package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// answers are what a store must say after every step of the matrix: each
// document's keys, the same at a commit recorded early, how many commits
// set each key, and which commit did last.
type answers struct {
	now     map[string]string // file#key -> value
	early   map[string]string
	earlyAt string
	sets    map[string]int
	last    map[string]string // file#key -> commit
}

func (a *answers) set(t *testing.T, st *aiwgstate.Store, file, key, value string) {
	t.Helper()
	m, err := st.Set(context.Background(), file, key, []byte(value), store.WriteOptions{Agent: "matrix"})
	if err != nil {
		t.Fatalf("set %s#%s: %v", file, key, err)
	}
	a.now[file+"#"+key] = value
	a.sets[file+"#"+key]++
	a.last[file+"#"+key] = m.Commit
}

// check asks a fresh Store, as a new command would, every known answer.
func (a *answers) check(t *testing.T, dir, step string) {
	t.Helper()
	ctx := context.Background()
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("%s: open: %v", step, err)
	}
	defer st.Close()
	for fk, want := range a.now {
		file, key, _ := strings.Cut(fk, "#")
		got, err := st.Get(ctx, file, key, store.ReadOptions{})
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Fatalf("%s: get %s = %q, %v; want %s", step, fk, got, err, want)
		}
		n := 0
		err = st.Log(ctx, store.LogOptions{File: file, Key: key}, func(*store.Mutation) bool { n++; return true })
		if err != nil || n != a.sets[fk] {
			t.Fatalf("%s: log %s: %d commits, %v; want %d", step, fk, n, err, a.sets[fk])
		}
		bl, err := st.Blame(ctx, file, store.ReadOptions{}, store.BlameOptions{})
		if err != nil {
			t.Fatalf("%s: blame %s: %v", step, file, err)
		}
		found := false
		for _, b := range bl {
			if b.Path == key {
				found = true
				if b.Commit != a.last[fk] {
					t.Fatalf("%s: blame %s credits %s, want %s", step, fk, b.Commit, a.last[fk])
				}
			}
		}
		if !found {
			t.Fatalf("%s: blame %s: no such key in %v", step, fk, bl)
		}
	}
	for fk, want := range a.early {
		file, key, _ := strings.Cut(fk, "#")
		got, err := st.Get(ctx, file, key, store.ReadOptions{At: a.earlyAt})
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Fatalf("%s: get --at %s %s = %q, %v; want %s", step, a.earlyAt, fk, got, err, want)
		}
	}
}

// TestGitMaintenanceMatrix puts a store through what stock git and its
// users do to a repository's objects and refs, interleaved with writes
// through a long-lived Store and a fresh one, and after every step runs
// git fsck --strict and asks every known answer.
func TestGitMaintenanceMatrix(t *testing.T) {
	st := storetest.New(t)
	dir := st.Dir()
	a := &answers{now: map[string]string{}, early: map[string]string{}, sets: map[string]int{}, last: map[string]string{}}
	for i := range 4 {
		for k := range 3 {
			a.set(t, st, fmt.Sprintf("docs/d%d.json", i), fmt.Sprintf("k%d", k), fmt.Sprint(i*10+k))
		}
	}
	for fk, v := range a.now {
		a.early[fk] = v
	}
	a.earlyAt = a.last["docs/d3.json#k2"]
	steps := [][]string{
		{"gc"},
		{"gc", "--aggressive"},
		{"repack", "-adk"},
		{"repack", "--geometric=2", "-d"},
		{"multi-pack-index", "write"},
		{"maintenance", "run", "--task=gc"},
		{"maintenance", "run", "--task=commit-graph"},
		{"maintenance", "run", "--task=loose-objects"},
		{"multi-pack-index", "write"},
		{"maintenance", "run", "--task=incremental-repack"},
		{"maintenance", "run", "--task=pack-refs"},
		{"pack-refs", "--all"},
		{"prune", "--expire=now"},
		{"commit-graph", "write", "--changed-paths"},
		{"aiwg-state gc"},
		{"multi-pack-index", "write"},
		{"aiwg-state gc --full"},
	}
	ctx := context.Background()
	for i, step := range steps {
		name := strings.Join(step, " ")
		switch name {
		case "aiwg-state gc":
			if err := st.GC(ctx, false); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case "aiwg-state gc --full":
			if err := st.GC(ctx, true); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		default:
			testutil.RunGit(t, dir, step...)
		}
		testutil.Fsck(t, dir)
		a.check(t, dir, name)
		// Writes after the step: through the Store that was open across
		// it, and through a fresh one that finds its tail on disk.
		a.set(t, st, fmt.Sprintf("docs/d%d.json", i%4), "k1", fmt.Sprint(1000+i))
		fresh, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		a.set(t, fresh, fmt.Sprintf("docs/d%d.json", (i+1)%4), "k2", fmt.Sprint(2000+i))
		fresh.Close()
		testutil.Fsck(t, dir)
		a.check(t, dir, name+", then writes")
	}
}

// TestStoreWrittenByPlainGit: a store whose every object git wrote loose
// (mktree, commit-tree, update-ref) and whose refs are all packed is read,
// written and audited as one aiwg-state wrote.
func TestStoreWrittenByPlainGit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plain.git")
	testutil.Git{}.Run(t, "init", "-q", "--bare", "-b", "main", dir)
	hashIn := func(body string) string {
		return strings.TrimSpace(testutil.Git{GitDir: dir, Stdin: body}.Output(t, "hash-object", "-w", "--stdin"))
	}
	mktree := func(entries string) string {
		return strings.TrimSpace(testutil.Git{GitDir: dir, Stdin: entries}.Output(t, "mktree"))
	}
	var parent string
	var commits []string
	for v := range 3 {
		blob := hashIn(fmt.Sprintf("{\n  \"k\": %d,\n  \"same\": true\n}\n", v))
		docs := mktree("100644 blob " + blob + "\ta.json\n")
		root := mktree("040000 tree " + docs + "\tdocs\n")
		args := []string{"-c", "user.name=plain", "-c", "user.email=plain@example.invalid", "commit-tree", root, "-m", fmt.Sprintf("v%d", v)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = strings.TrimSpace(testutil.RunGit(t, dir, args...))
		commits = append(commits, parent)
	}
	testutil.RunGit(t, dir, "update-ref", "refs/heads/main", parent)
	testutil.RunGit(t, dir, "pack-refs", "--all")
	if packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack")); len(packs) != 0 {
		t.Fatal("the store should hold loose objects only")
	}
	if _, err := os.Stat(filepath.Join(dir, "refs", "heads", "main")); err == nil {
		t.Fatal("the ref should be packed")
	}
	ctx := context.Background()
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := &answers{now: map[string]string{"docs/a.json#k": "2"}, early: map[string]string{"docs/a.json#k": "0"}, earlyAt: commits[0],
		sets: map[string]int{"docs/a.json#k": 3}, last: map[string]string{"docs/a.json#k": commits[2]}}
	a.check(t, dir, "plain git")
	a.set(t, st, "docs/a.json", "k", "3")
	testutil.Fsck(t, dir)
	a.check(t, dir, "plain git, then a write")
}

// TestSHA256RepositoryIsRefused: a repository of SHA-256 object names is
// refused when opened, saying why, rather than misread.
func TestSHA256RepositoryIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sha256.git")
	if out, err := (testutil.Git{}).Try("init", "-q", "--bare", "--object-format=sha256", dir); err != nil {
		t.Skipf("this git makes no SHA-256 repositories: %v %s", err, out)
	}
	_, err := aiwgstate.Open(context.Background(), dir, store.Options{})
	if !errors.Is(err, repo.ErrUnsupported) || !strings.Contains(err.Error(), "SHA256") {
		t.Fatalf("open of a SHA-256 repository: %v, want ErrUnsupported naming SHA256", err)
	}
}

// TestBrokenManifestIsRepairedByConfig: a manifest plain git committed
// broken makes writes refuse, naming the damage and the repair, and
// `config` repairs it.
func TestBrokenManifestIsRepairedByConfig(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Set(ctx, "docs/a.json", "k", []byte("1"), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	c := storetest.PlainCommit(t, st, store.ManifestPath, "{ not json")
	storetest.Git(t, st, "update-ref", "refs/heads/main", c)
	_, err := st.Set(ctx, "docs/a.json", "k", []byte("2"), store.WriteOptions{Agent: "a"})
	var be *store.BrokenFileError
	if !errors.Is(err, store.ErrBadManifest) || !errors.As(err, &be) || be.Kind != store.BrokenManifest {
		t.Fatalf("write on a broken manifest: %v, want ErrBadManifest, a BrokenFileError of the manifest", err)
	}
	if _, err := st.Config(ctx, "", store.ReadOptions{}); !errors.Is(err, store.ErrBadManifest) {
		t.Fatalf("config read: %v, want ErrBadManifest", err)
	}
	if _, err := st.SetConfig(ctx, "limits.max_document_bytes", []byte("1048576"), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatalf("config repair: %v", err)
	}
	if _, err := st.Set(ctx, "docs/a.json", "k", []byte("2"), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatalf("write after the repair: %v", err)
	}
	storetest.Fsck(t, st)
}
