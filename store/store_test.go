package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func TestEveryMutationIsOneCommitWithTrailers(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "planner", Source: "task-42", Correlation: "run-7"}
	steps := []struct {
		do      func() (*store.Mutation, error)
		op, pth string
	}{
		{func() (*store.Mutation, error) {
			return st.Set(ctx, "plan.json", "risk.level", []byte(`"low"`), wo)
		}, "create", "plan.json#risk.level"},
		{func() (*store.Mutation, error) {
			return st.Set(ctx, "plan.json", "risk.level", []byte(`"high"`), wo)
		}, "update", "plan.json#risk.level"},
		{func() (*store.Mutation, error) { return st.Put(ctx, "b.json", []byte(`{"x":[1,2]}`), wo) }, "create", "b.json"},
		{func() (*store.Mutation, error) { return st.Delete(ctx, "b.json", "x.0", wo) }, "delete", "b.json#x.0"},
		{func() (*store.Mutation, error) { return st.Move(ctx, "b.json", "c.json", wo) }, "rename", "b.json"},
		{func() (*store.Mutation, error) { return st.Delete(ctx, "c.json", "", wo) }, "delete", "c.json"},
	}
	for i, s := range steps {
		m, err := s.do()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !verbiage.ValidID("mut", m.MutationID) {
			t.Fatalf("step %d: mutation id %q", i, m.MutationID)
		}
		log := strings.TrimRight(storetest.Git(t, st, "log", "-1", "--format=%an%n%(trailers:key=Operation,valueonly)%(trailers:key=Path,valueonly)%(trailers:key=Mutation-Id,valueonly)%(trailers:key=Source,valueonly)%(trailers:key=Correlation-Id,valueonly)"), "\n") + "\n"
		want := fmt.Sprintf("planner\n%s\n%s\n%s\ntask-42\nrun-7\n", s.op, s.pth, m.MutationID)
		if log != want {
			t.Fatalf("step %d: git log:\n%s\nwant:\n%s", i, log, want)
		}
	}
	if n := strings.Count(storetest.Git(t, st, "rev-list", "main"), "\n"); n != len(steps)+1 {
		t.Fatalf("%d commits, want %d", n, len(steps)+1)
	}
	if got := storetest.Git(t, st, "show", "main:plan.json"); got != "{\n  \"risk\": {\n    \"level\": \"high\"\n  }\n}\n" {
		t.Fatalf("git show = %q", got)
	}
	storetest.Fsck(t, st)
}

func TestNoOpWriteMakesNoCommit(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Set(ctx, "a.json", "k", []byte(`{"b": 1, "a": [true]}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	for _, v := range []string{`{"a":[true],"b":1}`, "{\n\"b\":1,\"a\":[ true ]}"} {
		if _, err := st.Set(ctx, "a.json", "k", []byte(v), store.WriteOptions{}); !errors.Is(err, store.ErrNoChange) {
			t.Fatalf("set %s: err = %v, want ErrNoChange", v, err)
		}
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Fatal("a no-op moved the branch")
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Set(ctx, "a.json", "s", []byte(`"text"`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"malformed JSON", func() error {
			_, err := st.Set(ctx, "a.json", "x", []byte(`{"a":`), store.WriteOptions{})
			return err
		}, objects.ErrInvalidJSON},
		{"duplicate keys", func() error {
			_, err := st.Put(ctx, "a.json", []byte(`{"a":1,"a":2}`), store.WriteOptions{})
			return err
		}, objects.ErrInvalidJSON},
		{"bad key path", func() error {
			_, err := st.Set(ctx, "a.json", "a..b", []byte(`1`), store.WriteOptions{})
			return err
		}, verbiage.ErrInvalidPath},
		{"scalar as container", func() error {
			_, err := st.Set(ctx, "a.json", "s.x", []byte(`1`), store.WriteOptions{})
			return err
		}, objects.ErrNotContainer},
		{"escape the store", func() error {
			_, err := st.Set(ctx, "../x.json", "a", []byte(`1`), store.WriteOptions{})
			return err
		}, verbiage.ErrInvalidPath},
		{"absolute path", func() error {
			_, err := st.Set(ctx, "/etc/x.json", "a", []byte(`1`), store.WriteOptions{})
			return err
		}, verbiage.ErrInvalidPath},
		{"into .git", func() error {
			_, err := st.Set(ctx, ".git/x.json", "a", []byte(`1`), store.WriteOptions{})
			return err
		}, verbiage.ErrInvalidPath},
		{"store's own files", func() error {
			_, err := st.Put(ctx, ".aiwg/store.json", []byte(`{}`), store.WriteOptions{})
			return err
		}, store.ErrReadOnly},
		{"'#' in a name", func() error {
			_, err := st.Put(ctx, "a#b.json", []byte(`{}`), store.WriteOptions{})
			return err
		}, verbiage.ErrInvalidPath},
		{"case clash", func() error { _, err := st.Put(ctx, "A.json", []byte(`{}`), store.WriteOptions{}); return err }, repo.ErrInvalidName},
		{"oversize", func() error {
			_, err := st.Put(ctx, "big.json", []byte(`"`+strings.Repeat("x", 11<<20)+`"`), store.WriteOptions{})
			return err
		}, store.ErrLimit},
		{"delete missing", func() error { _, err := st.Delete(ctx, "a.json", "nope", store.WriteOptions{}); return err }, objects.ErrNotFound},
		{"batch with one bad op", func() error {
			_, err := st.Apply(ctx, []store.Op{{Op: "set", File: "a.json", Path: "ok", Value: []byte(`1`)}, {Op: "set", File: "a.json", Path: "s.x", Value: []byte(`1`)}}, store.WriteOptions{})
			return err
		}, objects.ErrNotContainer},
	}
	for _, c := range cases {
		if err := c.do(); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Fatal("bad input moved the branch")
	}
	storetest.Fsck(t, st)
}

func TestReadAtRevisions(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var times []time.Time
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 4; i++ {
		at := base.Add(time.Duration(i) * time.Hour)
		times = append(times, at)
		if _, err := st.Set(ctx, "a.json", "n", []byte(fmt.Sprint(i)), store.WriteOptions{Time: at}); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Git(t, st, "tag", "v1", "main~2")
	cases := map[string]string{
		"": "3", "HEAD": "3", "HEAD~1": "2", "main~3": "0", "v1": "1",
		times[2].Add(30 * time.Minute).Format(time.RFC3339): "2",
		times[0].Format(time.RFC3339):                       "0",
	}
	for at, want := range cases {
		got, err := st.Get(ctx, "a.json", "n", store.ReadOptions{At: at})
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("--at %q: %s, %v; want %s", at, got, err, want)
		}
	}
	if _, err := st.Get(ctx, "a.json", "n", store.ReadOptions{At: "2020-01-01T00:00:00Z"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("before history: %v", err)
	}
}

func TestExpect(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	m1, _ := st.Set(ctx, "a.json", "n", []byte(`1`), store.WriteOptions{})
	m2, _ := st.Set(ctx, "a.json", "n", []byte(`2`), store.WriteOptions{})
	_, err := st.Set(ctx, "a.json", "n", []byte(`3`), store.WriteOptions{Expect: store.Rev(m1.Commit)})
	var se *repo.StaleError
	if !errors.As(err, &se) || se.Current.String() != m2.Commit {
		t.Fatalf("err = %v; want a stale error naming %s", err, m2.Commit)
	}
	if _, err := st.Set(ctx, "a.json", "n", []byte(`3`), store.WriteOptions{Expect: store.Rev(m2.Commit)}); err != nil {
		t.Fatal(err)
	}
}

func TestLogFiltersAndFileHistoryMatchGit(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		file := []string{"a.json", "b.json", "dir/c.json"}[i%3]
		agent := []string{"alice", "bob"}[i%2]
		if _, err := st.Set(ctx, file, "n", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: agent}); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"a.json", "dir/c.json", "nope.json"} {
		var ours []string
		if err := st.Log(ctx, store.LogOptions{File: file}, func(m *store.Mutation) bool { ours = append(ours, m.Commit); return true }); err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(storetest.Git(t, st, "log", "--format=%H", "main", "--", file))
		if strings.Join(ours, " ") != strings.Join(want, " ") {
			t.Errorf("log %s = %v, git says %v", file, ours, want)
		}
	}
	var n int
	st.Log(ctx, store.LogOptions{Agent: "bob", Limit: 3}, func(m *store.Mutation) bool {
		if m.Agent != "bob" {
			t.Errorf("agent filter let %s through", m.Agent)
		}
		n++
		return true
	})
	if n != 3 {
		t.Errorf("limit: %d mutations", n)
	}
}

func TestGetResolvesStateDocumentShards(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	_, err := st.Apply(ctx, []store.Op{
		{Op: "put", File: "state/G.json", Value: []byte(`{"SUB-GOALS": {}, "TITLE": "G"}`)},
		{Op: "set", File: "state/state.json", Path: "GOALS.G", Value: []byte(`"ref file://G.json"`)},
	}, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "state/state.json", "GOALS.G.TITLE", store.ReadOptions{})
	if err != nil || string(got) != "\"G\"\n" {
		t.Fatalf("resolved get = %s, %v", got, err)
	}
	got, err = st.Get(ctx, "state/state.json", "GOALS.G", store.ReadOptions{NoResolve: true})
	if err != nil || string(got) != "\"ref file://G.json\"\n" {
		t.Fatalf("--no-resolve get = %s, %v", got, err)
	}
	// A plain set inside the mount writes the shard and keeps the ref.
	if _, err := st.Set(ctx, "state/state.json", "GOALS.G.SUMMARY", []byte(`"via the parent"`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Git(t, st, "show", "main:state/G.json"); !strings.Contains(got, `"SUMMARY": "via the parent"`) {
		t.Fatalf("the shard was not written:\n%s", got)
	}
	if got := storetest.Git(t, st, "show", "main:state/state.json"); !strings.Contains(got, `"G": "ref file://G.json"`) {
		t.Fatalf("the parent lost its ref:\n%s", got)
	}
	if n := strings.Count(storetest.Git(t, st, "show", "--name-only", "--format=", "main"), "\n"); n != 1 {
		t.Fatalf("the write touched %d files, want the shard only", n)
	}
	if _, err := st.Delete(ctx, "state/state.json", "GOALS.G.SUMMARY", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	storetest.Fsck(t, st)
}

func TestConfigChangesTheManifest(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.SetConfig(ctx, "limits.max_document_bytes", []byte(`100`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "big.json", []byte(`"`+strings.Repeat("x", 200)+`"`), store.WriteOptions{}); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("a document over the configured limit: %v", err)
	}
	if _, err := st.SetConfig(ctx, "limits.max_document_bytes", []byte(`"lots"`), store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("an invalid setting: %v", err)
	}
	if _, err := st.SetConfig(ctx, "sync", []byte(`false`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := aiwgstate.Open(ctx, st.Dir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Repo().Options().Sync {
		t.Fatal(`"sync": false in the manifest did not turn fsync off`)
	}
	storetest.Fsck(t, st)
}

func TestInitNeverTakesANonEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := aiwgstate.Init(context.Background(), dir, store.InitOptions{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("init into a non-empty directory: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "precious.txt")); err != nil || string(data) != "keep me" {
		t.Fatal("init touched the user's file")
	}
}

// TestBranchesAWriteOrReadNames: a write to a branch that does not exist
// fails and creates nothing (a mistyped --branch used to start an unrelated
// history); reads take a remote-tracking branch by its short name.
func TestBranchesAWriteOrReadNames(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Set(ctx, "a.json", "v", []byte(`1`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "a.json", "v", []byte(`2`), store.WriteOptions{Branch: "mian"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a write to a missing branch: %v", err)
	}
	if refs := storetest.Git(t, st, "for-each-ref", "--format=%(refname)", "refs/heads/"); strings.TrimSpace(refs) != "refs/heads/main" {
		t.Fatalf("refs after the refused write:\n%s", refs)
	}
	if _, err := st.CreateBranch(ctx, "feature", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "a.json", "v", []byte(`3`), store.WriteOptions{Branch: "feature"}); err != nil {
		t.Fatalf("a write to a created branch: %v", err)
	}

	// origin/main as a fetch leaves it: at the first commit with a.json.
	first := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "main"))
	storetest.Git(t, st, "update-ref", "refs/remotes/origin/main", first)
	if _, err := st.Set(ctx, "a.json", "v", []byte(`4`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "a.json", "v", store.ReadOptions{Branch: "origin/main"})
	if err != nil || strings.TrimSpace(string(got)) != "1" {
		t.Fatalf("get on origin/main = %s, %v; want 1", got, err)
	}
	if _, err := st.Get(ctx, "a.json", "v", store.ReadOptions{Branch: "nosuch"}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "branch nosuch") {
		t.Fatalf("get on a missing branch: %v", err)
	}
	if _, err := st.Set(ctx, "a.json", "v", []byte(`5`), store.WriteOptions{Branch: "origin/main"}); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("a write to a remote-tracking branch: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestAPIEdgesANewUserMet: what a review of the Go API found, each fixed:
// a time read in the second of a write, in the writing process; a
// cancelled context; a nil log callback; a second remote of one name; a
// key to diff without its file.
func TestAPIEdgesANewUserMet(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	m, err := st.Set(ctx, "a.json", "v", []byte(`1`), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Time.Nanosecond() != 0 {
		t.Errorf("mutation time %v has a fraction of a second git does not store", m.Time)
	}
	at := m.Time.UTC().Format(time.RFC3339)
	if got, err := st.Get(ctx, "a.json", "v", store.ReadOptions{At: at}); err != nil || strings.TrimSpace(string(got)) != "1" {
		t.Errorf("get at %s, the second of the write: %s, %v", at, got, err)
	}
	var logged []*store.Mutation
	if err := st.Log(ctx, store.LogOptions{Until: m.Time}, func(m *store.Mutation) bool { logged = append(logged, m); return true }); err != nil || len(logged) != 2 || !logged[0].Time.Equal(m.Time) {
		t.Errorf("log until the write's time: %d mutations, %v", len(logged), err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Set(cancelled, "a.json", "v", []byte(`2`), store.WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a write with a cancelled context: %v", err)
	}
	if err := st.Log(ctx, store.LogOptions{}, nil); !errors.Is(err, store.ErrUsage) {
		t.Errorf("log with no callback: %v", err)
	}
	if err := st.AddRemote(ctx, "origin", "/nowhere.git"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddRemote(ctx, "origin", "/elsewhere.git"); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second remote named origin: %v", err)
	}
	if _, err := st.Diff(ctx, store.DiffOptions{Key: "v"}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("a key to diff without its file: %v", err)
	}
	if n := strings.Count(storetest.Git(t, st, "rev-list", "main"), "\n"); n != 2 {
		t.Errorf("%d commits, want init and one write", n)
	}
}

// TestRulesCannotBeSetOverDocumentsThatBreakThem: declaring a document
// verbiage-ruled checks it as if it were written then, so the store never
// holds a ruled document its own reads and writes would refuse; a pattern
// that leaves the store is refused.
func TestRulesCannotBeSetOverDocumentsThatBreakThem(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Put(ctx, "a.json", []byte(`{"-key": 1, "k": 2}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	if _, err := st.SetConfig(ctx, "verbiage.documents", []byte(`["a.json"]`), store.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "a.json would be invalid") {
		t.Fatalf("ruling a document that breaks the rules: %v", err)
	}
	if _, err := st.SetConfig(ctx, "verbiage.documents", []byte(`["../x.json"]`), store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("a pattern outside the store: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Fatal("a refused setting was committed")
	}
	if _, err := st.SetConfig(ctx, "verbiage.documents", []byte(`["b.json"]`), store.WriteOptions{}); err != nil {
		t.Fatalf("ruling a document that keeps the rules: %v", err)
	}
	if _, err := st.SetConfig(ctx, "limits.max_document_bytes", []byte(`100000`), store.WriteOptions{}); err != nil {
		t.Fatalf("another setting, with the rules unchanged: %v", err)
	}
}

// TestUnchangedSinceIsPerFile: optimistic concurrency on the files a
// write changes: another agent's write to another file does not fail it
// (as --expect would), a write to the same file does, naming it.
func TestUnchangedSinceIsPerFile(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	wo := store.WriteOptions{Agent: "pulse"}
	for _, f := range []string{"agents/pulse.json", "agents/heartbeat.json"} {
		if _, err := st.Set(ctx, f, "n", []byte(`1`), wo); err != nil {
			t.Fatal(err)
		}
	}
	read := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "main"))
	if _, err := st.Set(ctx, "agents/heartbeat.json", "n", []byte(`2`), store.WriteOptions{Agent: "heartbeat"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "agents/pulse.json", "n", []byte(`2`), store.WriteOptions{Agent: "pulse", UnchangedSince: store.Rev(read)}); err != nil {
		t.Fatalf("a write after another file changed: %v", err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	_, err := st.Set(ctx, "agents/pulse.json", "n", []byte(`3`), store.WriteOptions{Agent: "pulse", UnchangedSince: store.Rev(read)})
	if !errors.Is(err, store.ErrStale) || !strings.Contains(err.Error(), "agents/pulse.json changed since "+read) {
		t.Errorf("a write to a file changed since: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Error("the refused write moved the branch")
	}
}

// TestDiscover: $AIWG_STATE_STORE wins; without it the nearest store is
// found from a subdirectory, as git finds .git, and a git clone of a store
// counts as one; with none anywhere above, ErrNotFound.
func TestDiscover(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{".aiwg/state.git/HEAD", "a/b/x", "clone/.git/HEAD", "clone/.aiwg/store.json", "clone/sub/x"} {
		path := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AIWG_STATE_STORE", "/elsewhere/state.git")
	if got, err := store.Discover(filepath.Join(root, "a", "b")); err != nil || got != "/elsewhere/state.git" {
		t.Fatalf("with AIWG_STATE_STORE: %q, %v", got, err)
	}
	t.Setenv("AIWG_STATE_STORE", "")
	for dir, want := range map[string]string{"a/b": ".aiwg/state.git", "clone/sub": "clone/.git", ".": ".aiwg/state.git"} {
		if got, err := store.Discover(filepath.Join(root, dir)); err != nil || got != filepath.Join(root, want) {
			t.Errorf("from %s: %q, %v; want %s", dir, got, err, want)
		}
	}
	if got, err := store.Discover(t.TempDir()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("with no store above: %q, %v", got, err)
	}
}
