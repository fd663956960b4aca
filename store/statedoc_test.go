package store_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/statedoc"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// plainGit runs git commands on the store as a plain git user would, with
// an index of its own; commit writes the index as a commit on main. No
// check of the store runs.
func plainGit(t *testing.T, st *aiwgstate.Store) (run func(stdin string, args ...string) string, commit func(msg string)) {
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index"),
		"GIT_AUTHOR_NAME=plain", "GIT_AUTHOR_EMAIL=p@x", "GIT_COMMITTER_NAME=plain", "GIT_COMMITTER_EMAIL=p@x"}
	run = func(stdin string, args ...string) string {
		t.Helper()
		return strings.TrimSpace(testutil.Git{GitDir: st.Dir(), Env: env, Stdin: stdin}.Run(t, args...))
	}
	run("", "read-tree", "HEAD")
	commit = func(msg string) {
		tree := run("", "write-tree")
		c := run(msg, "commit-tree", tree, "-p", "HEAD")
		run("", "update-ref", "refs/heads/main", c)
	}
	return run, commit
}

// gitWrite commits files with the git CLI alone, as a plain git push
// would. mode "120000" makes a symlink.
func gitWrite(t *testing.T, st *aiwgstate.Store, mode string, files map[string]string) {
	t.Helper()
	run, commit := plainGit(t, st)
	for path, content := range files {
		blob := run(content, "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", mode+","+blob+","+path)
	}
	commit("plain write\n")
}

// gitMove renames a file with the git CLI alone, as git mv would.
func gitMove(t *testing.T, st *aiwgstate.Store, from, to string) {
	t.Helper()
	run, commit := plainGit(t, st)
	blob := run("", "rev-parse", "HEAD:"+from)
	run("0 "+strings.Repeat("0", 40)+"\t"+from+"\n", "update-index", "--index-info") // mode 0 removes it
	run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+to)
	commit("git mv " + from + " " + to + "\n")
}

func edit(t *testing.T, st *aiwgstate.Store, subject string, e store.StateEdit) *store.Mutation {
	t.Helper()
	m, err := st.EditState(context.Background(), "", store.WriteOptions{Agent: "tester"}, subject, e)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	storetest.Fsck(t, st)
	return m
}

func TestStateDocumentWithShards(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	edit(t, st, "goal create", func(d any) (any, []verbiage.Path, error) { return statedoc.CreateGoal(d, "ops", "") })
	// Mount a sub-goal with an inline init: the shard and the parent's ref
	// land in one commit.
	m := edit(t, st, "mount", func(d any) (any, []verbiage.Path, error) {
		return statedoc.SetPath(d, verbiage.MustParsePath("GOALS.OPS.SUB-GOALS.QUEUE"),
			`ref file://state/OPS/QUEUE.json {"title": "QUEUE", "events": [], "in-flight": false, "last-seen-idx": -1}`)
	})
	if got := storetest.Git(t, st, "show", "--name-only", "--format=", m.Commit); got != "state/OPS/QUEUE.json\nstate/state.json\n" {
		t.Fatalf("the mount commit changed:\n%s", got)
	}
	if got := storetest.Git(t, st, "show", "main:state/state.json"); !strings.Contains(got, `"QUEUE": "ref file://state/OPS/QUEUE.json"`) {
		t.Fatalf("parent:\n%s", got)
	}
	// A write inside the mount changes the shard only; the parent keeps its ref.
	parent := storetest.Git(t, st, "rev-parse", "main:state/state.json")
	m = edit(t, st, "event add", func(d any) (any, []verbiage.Path, error) {
		return statedoc.AddEvent(d, "ops", "queue", statedoc.Event{ID: "E1", Type: "reply", Body: "hi", CreatedAt: time.Now()})
	})
	if got := storetest.Git(t, st, "show", "--name-only", "--format=", m.Commit); got != "state/OPS/QUEUE.json\n" {
		t.Fatalf("event add changed:\n%s", got)
	}
	if storetest.Git(t, st, "rev-parse", "main:state/state.json") != parent {
		t.Fatal("the parent document changed")
	}
	if len(m.Changes) != 1 || m.Changes[0].Path() != "state/OPS/QUEUE.json#EVENTS" {
		t.Fatalf("changes = %+v", m.Changes)
	}
	// Reads resolve, or show refs as stored.
	v, err := st.GetState(ctx, "", "GOALS.OPS.SUB-GOALS.QUEUE.EVENTS.0.BODY", store.ReadOptions{}, false)
	if err != nil || string(v) != "\"hi\"\n" {
		t.Fatalf("resolved get = %s, %v", v, err)
	}
	// ReadOptions.NoResolve says the same as the argument.
	if v, err := st.GetState(ctx, "", "GOALS.OPS.SUB-GOALS", store.ReadOptions{NoResolve: true}, false); err != nil || !strings.Contains(string(v), `"ref file://state/OPS/QUEUE.json"`) {
		t.Errorf("GetState with ReadOptions.NoResolve: %s %v", v, err)
	}
	v, err = st.GetState(ctx, "", "GOALS.OPS.SUB-GOALS", store.ReadOptions{}, true)
	if err != nil || !strings.Contains(string(v), `"ref file://state/OPS/QUEUE.json"`) {
		t.Fatalf("no-resolve get = %s, %v", v, err)
	}
	file, key, err := st.LocateState(ctx, "", "GOALS.OPS.SUB-GOALS.QUEUE.EVENTS.0.SEEN", store.ReadOptions{})
	if err != nil || file != "state/OPS/QUEUE.json" || key != "EVENTS.0.SEEN" {
		t.Fatalf("locate = %s %s %v", file, key, err)
	}
	// Reads at an older revision see the document as it was.
	if _, err := st.GetState(ctx, "", "GOALS.OPS.SUB-GOALS.QUEUE.EVENTS.0", store.ReadOptions{At: "HEAD~1"}, false); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("read at HEAD~1: %v", err)
	}
	// Domain errors change nothing.
	head := storetest.Git(t, st, "rev-parse", "main")
	_, err = st.EditState(ctx, "", store.WriteOptions{}, "", func(d any) (any, []verbiage.Path, error) {
		return statedoc.SetPath(d, verbiage.MustParsePath("GOALS.OPS.SUB-GOALS.OTHER"), "ref file://state/OPS/QUEUE.json {}")
	})
	if !errors.Is(err, statedoc.ErrExists) {
		t.Fatalf("init over a mounted shard: %v", err)
	}
	if _, err := st.ResetState(ctx, "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Git(t, st, "show", "main:state/state.json"); got != string(statedoc.DefaultStateDocument()) {
		t.Fatalf("after reset:\n%s", got)
	}
	if storetest.Git(t, st, "rev-parse", "main~1") != head {
		t.Fatal("the refused init wrote a commit")
	}
	storetest.Fsck(t, st)
}

func TestRuledDocumentsCheckedOnEveryWrite(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	wo := store.WriteOptions{}
	// init wrote the default state document.
	if got, err := st.Cat(ctx, "state/state.json", store.ReadOptions{}); err != nil || !bytes.Equal(got, statedoc.DefaultStateDocument()) {
		t.Fatalf("init's state document: %s (%v)", got, err)
	}
	if _, err := st.Set(ctx, "state/state.json", "GOALS.G", []byte(`"ref file://G.json"`), wo); !errors.Is(err, statedoc.ErrInvalidState) {
		t.Fatalf("a ref to a missing shard: %v", err)
	}
	if _, err := st.Apply(ctx, []store.Op{
		{Op: "put", File: "state/G.json", Value: []byte(`{"SUB-GOALS": {}}`)},
		{Op: "set", File: "state/state.json", Path: "GOALS.G", Value: []byte(`"ref file://G.json"`)},
	}, wo); err != nil {
		t.Fatalf("a shard and its ref in one batch: %v", err)
	}
	head := storetest.Git(t, st, "rev-parse", "main")
	refused := []struct {
		name string
		op   store.Op
		want error
	}{
		{"lowercase key in the document", store.Op{Op: "set", File: "state/state.json", Path: "GOALS.lower", Value: []byte(`{}`)}, verbiage.ErrInvalidKey},
		{"bad key in a mounted shard", store.Op{Op: "set", File: "state/G.json", Path: "bad_key", Value: []byte(`1`)}, verbiage.ErrInvalidKey},
		{"bad shape in a mounted shard", store.Op{Op: "set", File: "state/G.json", Path: "SUB-GOALS", Value: []byte(`[]`)}, statedoc.ErrInvalidState},
		{"deleting a mounted shard", store.Op{Op: "del", File: "state/G.json"}, statedoc.ErrInvalidState},
		{"a cycle", store.Op{Op: "set", File: "state/G.json", Path: "SUB-GOALS.S", Value: []byte(`"ref file://state.json"`)}, statedoc.ErrInvalidState},
		{"an escape", store.Op{Op: "set", File: "state/state.json", Path: "GOALS.E", Value: []byte(`"ref file://../../x.json"`)}, verbiage.ErrInvalidPath},
		{"losing the shape", store.Op{Op: "del", File: "state/state.json", Path: "ITEMS"}, statedoc.ErrInvalidState},
	}
	for _, c := range refused {
		if _, err := st.Apply(ctx, []store.Op{c.op}, wo); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Fatal("a refused write made a commit")
	}
	// Other documents are not ruled, and an unmounted file is free.
	if _, err := st.Set(ctx, "docs/free.json", "lower_case", []byte(`1`), wo); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "state/UNMOUNTED.json", "lower_case", []byte(`1`), wo); err != nil {
		t.Fatal(err)
	}
	storetest.Fsck(t, st)
}

func TestManifestDeclaresRuledDocuments(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	gitWrite(t, st, "100644", map[string]string{
		store.ManifestPath: `{"format": 1, "limits": {"max_document_bytes": 10485760}, "verbiage": {"documents": ["agents/*/state.json"]}}`,
	})
	// state/state.json is no longer ruled; agents/*/state.json are.
	if _, err := st.Set(ctx, "state/state.json", "lower", []byte(`1`), store.WriteOptions{}); err != nil {
		t.Fatalf("an undeclared document: %v", err)
	}
	// A declared document's keys are normalized where they can be, and
	// refused where they cannot.
	if _, err := st.Set(ctx, "agents/a1/state.json", "bad_key", []byte(`1`), store.WriteOptions{}); !errors.Is(err, verbiage.ErrInvalidKey) {
		t.Fatalf("a declared document: %v", err)
	}
	m, err := st.EditState(ctx, "agents/a1/state.json", store.WriteOptions{}, "goal", func(d any) (any, []verbiage.Path, error) {
		return statedoc.CreateGoal(d, "g", "")
	})
	if err != nil || m.Changes[0].Path() != "agents/a1/state.json#GOALS.G" {
		t.Fatalf("edit of a declared document: %+v %v", m, err)
	}
	if _, err := st.StateDoc(ctx, "state/state.json", store.ReadOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Fatalf("state verbs on an undeclared document: %v", err)
	}
	storetest.Fsck(t, st)
}

func TestInvalidStateFromPlainGit(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		mode  string
		files map[string]string
		also  error
	}{
		{"bad key", "100644", map[string]string{"state/state.json": `{"ACTIVE-PROJECT": {}, "GOALS": {"lower": {}}, "ITEMS": {}}`}, verbiage.ErrInvalidKey},
		{"bad shape", "100644", map[string]string{"state/state.json": `{"GOALS": {}}`}, nil},
		{"escaping ref", "100644", map[string]string{"state/state.json": `{"ACTIVE-PROJECT": {}, "GOALS": {"X": "ref file://../../x.json"}, "ITEMS": {}}`}, verbiage.ErrInvalidPath},
		{"not JSON", "100644", map[string]string{"state/state.json": `{`}, objects.ErrInvalidJSON},
	}
	for _, c := range cases {
		st := storetest.New(t)
		gitWrite(t, st, c.mode, c.files)
		_, err := st.StateDoc(ctx, "", store.ReadOptions{})
		if !errors.Is(err, statedoc.ErrInvalidState) || (c.also != nil && !errors.Is(err, c.also)) {
			t.Errorf("%s: read err = %v", c.name, err)
		}
		// Writes to it are refused too; unrelated writes are not held up.
		if _, err := st.EditState(ctx, "", store.WriteOptions{}, "", func(d any) (any, []verbiage.Path, error) {
			return statedoc.CreateGoal(d, "g", "")
		}); !errors.Is(err, statedoc.ErrInvalidState) {
			t.Errorf("%s: edit err = %v", c.name, err)
		}
		if _, err := st.Set(ctx, "docs/x.json", "a", []byte(`1`), store.WriteOptions{}); err != nil {
			t.Errorf("%s: an unrelated write: %v", c.name, err)
		}
	}
}

func TestSymlinkShardRefused(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	gitWrite(t, st, "100644", map[string]string{
		"state/state.json": `{"ACTIVE-PROJECT": {}, "GOALS": {"X": "ref file://LINK.json"}, "ITEMS": {}}`,
	})
	gitWrite(t, st, "120000", map[string]string{"state/LINK.json": "/etc/passwd"})
	_, err := st.StateDoc(ctx, "", store.ReadOptions{})
	if !errors.Is(err, verbiage.ErrInvalidPath) || !errors.Is(err, statedoc.ErrInvalidState) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlink shard: %v", err)
	}
}
