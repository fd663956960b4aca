package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// auditHistory builds a random history on main: writes through the store
// on main and on a side branch, merges made with plain git (git
// commit-tree -p A -p B, with the tree of either parent or a mix of both),
// and plain git commits the index never saw. Commit times increase by one
// second per commit, so git's date order is well defined.
type auditHistory struct {
	t     *testing.T
	st    *aiwgstate.Store
	rng   *rand.Rand
	clock time.Time
	docs  []string
	keys  []string
	side  bool
}

func newAuditHistory(t *testing.T, seed uint64) *auditHistory {
	return &auditHistory{
		t: t, st: storetest.New(t), rng: rand.New(rand.NewPCG(seed, 7)),
		clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		docs:  []string{"a.json", "dir/b.json", "dir/c.json"},
		keys:  []string{"x", "y.p", "y.q", "list.0", "list.1", "z"},
	}
}

func (h *auditHistory) tick() time.Time {
	h.clock = h.clock.Add(time.Second)
	return h.clock
}

func (h *auditHistory) gitEnv(args ...string) string {
	h.t.Helper()
	return h.gitIn(nil, "", args...)
}

func (h *auditHistory) gitIn(env []string, stdin string, args ...string) string {
	h.t.Helper()
	stamp := fmt.Sprintf("%d +0000", h.clock.Unix())
	g := testutil.Git{GitDir: h.st.Dir(), Stdin: stdin, Env: append([]string{"GIT_AUTHOR_NAME=human", "GIT_AUTHOR_EMAIL=h@example.com", "GIT_COMMITTER_NAME=human",
		"GIT_COMMITTER_EMAIL=h@example.com", "GIT_AUTHOR_DATE=" + stamp, "GIT_COMMITTER_DATE=" + stamp}, env...)}
	return strings.TrimSpace(g.Output(h.t, args...))
}

func (h *auditHistory) write(branch string) {
	ctx := context.Background()
	wo := store.WriteOptions{Branch: branch, Agent: fmt.Sprintf("agent%d", h.rng.IntN(3)), Time: h.tick()}
	doc := h.docs[h.rng.IntN(len(h.docs))]
	var err error
	switch r := h.rng.IntN(10); {
	case r < 6:
		key := h.keys[h.rng.IntN(len(h.keys))]
		_, err = h.st.Set(ctx, doc, key, []byte(fmt.Sprint(h.rng.IntN(4))), wo)
		if errors.Is(err, objects.ErrNotContainer) || errors.Is(err, objects.ErrNotFound) {
			_, err = h.st.Set(ctx, doc, strings.Split(key, ".")[0], []byte(`{}`), wo)
		}
	case r < 8:
		_, err = h.st.Delete(ctx, doc, h.keys[h.rng.IntN(len(h.keys))], wo)
	case r < 9:
		_, err = h.st.Put(ctx, doc, []byte(fmt.Sprintf(`{"x":%d,"list":[%d,%d]}`, h.rng.IntN(3), h.rng.IntN(3), h.rng.IntN(3))), wo)
	default:
		_, err = h.st.Delete(ctx, doc, "", wo)
	}
	if err != nil && !errors.Is(err, store.ErrNoChange) && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, objects.ErrNotFound) && !errors.Is(err, objects.ErrNotContainer) {
		h.t.Fatalf("write: %v", err)
	}
}

// plainCommit changes a document with plain git (not canonical JSON).
func (h *auditHistory) plainCommit() {
	h.tick()
	doc := h.docs[h.rng.IntN(len(h.docs))]
	blob := h.gitIn(nil, fmt.Sprintf(`{"x": %d, "plain": true}`, h.rng.IntN(4)), "hash-object", "-w", "--stdin")
	idx := filepath.Join(h.t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	h.gitIn(env, "", "read-tree", "main")
	h.gitIn(env, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+doc)
	tree := h.gitIn(env, "", "write-tree")
	c := h.gitIn(nil, "", "commit-tree", tree, "-p", "main", "-m", "plain edit of "+doc)
	h.gitIn(nil, "", "update-ref", "refs/heads/main", c)
}

// merge merges side into main with plain git.
func (h *auditHistory) merge() {
	h.tick()
	var tree string
	switch h.rng.IntN(3) {
	case 0:
		tree = h.gitEnv("rev-parse", "main^{tree}")
	case 1:
		tree = h.gitEnv("rev-parse", "side^{tree}")
	default: // each document from either side: a merge unlike both parents
		idx := filepath.Join(h.t.TempDir(), "index")
		env := []string{"GIT_INDEX_FILE=" + idx}
		h.gitIn(env, "", "read-tree", "main")
		for _, d := range h.docs {
			if h.rng.IntN(2) == 0 {
				continue
			}
			if blob, err := exec.Command("git", "--git-dir", h.st.Dir(), "rev-parse", "side:"+d).Output(); err == nil {
				h.gitIn(env, "", "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(string(blob))+","+d)
			} else {
				h.gitIn(env, "0 0000000000000000000000000000000000000000\t"+d+"\n", "update-index", "--index-info")
			}
		}
		tree = h.gitIn(env, "", "write-tree")
	}
	c := h.gitIn(nil, "", "commit-tree", tree, "-p", "main", "-p", "side", "-m", "merge side")
	h.gitIn(nil, "", "update-ref", "refs/heads/main", c)
}

func (h *auditHistory) step() {
	switch r := h.rng.IntN(20); {
	case r < 12:
		h.write("")
	case r < 15:
		if !h.side {
			h.gitEnv("update-ref", "refs/heads/side", "main")
			h.side = true
		}
		h.write("side")
	case r < 17:
		if h.side {
			h.merge()
		}
	default:
		h.plainCommit()
	}
}

func (h *auditHistory) storeLog(file, key string, allParents bool) []string {
	h.t.Helper()
	var got []string
	err := h.st.Log(context.Background(), store.LogOptions{File: file, Key: key, AllParents: allParents}, func(m *store.Mutation) bool {
		got = append(got, m.Commit)
		return true
	})
	if err != nil {
		h.t.Fatalf("log %s#%s: %v", file, key, err)
	}
	return got
}

func (h *auditHistory) checkLogs(when string) {
	h.t.Helper()
	for _, doc := range h.docs {
		for _, all := range []bool{false, true} {
			args := []string{"log", "--format=%H", "main", "--", doc}
			if !all {
				args = []string{"log", "--first-parent", "--format=%H", "main", "--", doc}
			}
			want := strings.Fields(h.gitEnv(args...))
			if got := h.storeLog(doc, "", all); !slices.Equal(got, want) {
				h.t.Fatalf("%s: log %s (all parents %v):\n got %v\nwant %v (%s)", when, doc, all, got, want, strings.Join(args, " "))
			}
		}
	}
}

// TestLogMatchesGit: log FILE lists the commits git log -- FILE lists
// (first-parent: as git log --first-parent), on histories with merges and
// commits made by plain git, before and after the index has seen them.
func TestLogMatchesGit(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := newAuditHistory(t, seed)
			for i := 0; i < 40; i++ {
				h.step()
			}
			h.checkLogs("half way")
			for i := 0; i < 40; i++ {
				h.step()
			}
			h.checkLogs("at the end")
			// From a clean slate, the index is rebuilt the same.
			if _, err := h.st.Reindex(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			h.checkLogs("after reindex")
		})
	}
}

// replayValue is a key's value at a commit, canonical JSON, "" when absent.
func replayValue(t *testing.T, st *aiwgstate.Store, commit, file string, key verbiage.Path) string {
	data, err := st.Cat(context.Background(), file, store.ReadOptions{At: commit})
	if err != nil {
		return ""
	}
	doc, err := objects.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	v, err := objects.Get(doc, key)
	if err != nil {
		return ""
	}
	out, _ := objects.Encode(v)
	return "=" + string(out)
}

// TestBlameAndKeyLogMatchReplay: for random histories, every leaf's blame
// commit is the newest first-parent commit whose change altered that key,
// and the keyed log lists exactly the commits that altered it, checked by
// replaying every version of the document.
func TestBlameAndKeyLogMatchReplay(t *testing.T) {
	seeds := []uint64{11, 12, 13}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := newAuditHistory(t, seed)
			for i := 0; i < 70; i++ {
				h.step()
			}
			chain := strings.Fields(h.gitEnv("rev-list", "--first-parent", "main"))
			for _, doc := range h.docs {
				if _, err := h.st.Cat(context.Background(), doc, store.ReadOptions{}); err != nil {
					continue
				}
				blame, err := h.st.Blame(context.Background(), doc, store.ReadOptions{}, store.BlameOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range blame {
					key := verbiage.MustParsePath(b.Path)
					if b.Path == "" {
						key = verbiage.Path{}
					}
					var want string
					var changes []string
					for i, c := range chain {
						parent := ""
						if i+1 < len(chain) {
							parent = chain[i+1]
						}
						now := replayValue(t, h.st, c, doc, key)
						before := ""
						if parent != "" {
							before = replayValue(t, h.st, parent, doc, key)
						}
						if now != before {
							changes = append(changes, c)
							if want == "" {
								want = c
							}
						}
					}
					if b.Commit != want {
						t.Fatalf("blame %s#%s = %s, replay says %s", doc, b.Path, b.Commit, want)
					}
					if got := h.storeLog(doc, b.Path, false); !slices.Equal(got, changes) && b.Path != "" {
						t.Fatalf("log %s#%s:\n got %v\nwant %v", doc, b.Path, got, changes)
					}
				}
			}
		})
	}
}

func TestLogFollowAndBlameAcrossMove(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "planner"}
	m1, _ := st.Set(ctx, "plan.json", "risk.level", []byte(`"low"`), wo)
	m2, _ := st.Set(ctx, "plan.json", "owner", []byte(`"ops"`), store.WriteOptions{Agent: "bob"})
	mv, err := st.Move(ctx, "plan.json", "docs/plan.json", wo)
	if err != nil {
		t.Fatal(err)
	}
	m4, _ := st.Set(ctx, "docs/plan.json", "risk.level", []byte(`"high"`), wo)
	var got []string
	err = st.Log(ctx, store.LogOptions{File: "docs/plan.json", Key: "risk.level", Follow: true}, func(m *store.Mutation) bool {
		got = append(got, m.Value.Op+" "+string(m.Value.Old)+" "+string(m.Value.New)+" "+m.MutationID)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`update "low" "high" ` + m4.MutationID, `rename "low" "low" ` + mv.MutationID, `create  "low" ` + m1.MutationID}
	if !slices.Equal(got, want) {
		t.Fatalf("log --follow:\n got %q\nwant %q", got, want)
	}
	byPath := blameByPath(t, st, "docs/plan.json")
	if byPath["owner"] != m2.MutationID+" bob" || byPath["risk.level"] != m4.MutationID+" planner" {
		t.Fatalf("blame across the move: %v", byPath)
	}
	// Show finds a mutation by id through the index.
	m, err := st.Show(ctx, m2.MutationID, store.ReadOptions{})
	if err != nil || m.Commit != m2.Commit {
		t.Fatalf("show %s = %v, %v", m2.MutationID, m, err)
	}
	if _, err := st.Show(ctx, "mut-00000000", store.ReadOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("show of an unknown id: %v", err)
	}
}

// TestBisect finds the first commit at which a predicate holds, reading
// O(log n) states, and agrees with a linear scan.
func TestBisect(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var commits []string
	for i := 0; i < 100; i++ {
		m, err := st.Set(ctx, "budget.json", "spent", []byte(fmt.Sprint(i*10)), store.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, m.Commit)
	}
	cases := []struct {
		pred, good, bad string
		want            int // index into commits, -1: error
	}{
		{"budget.json#spent > 500", "", "", 51},
		{"budget.json#spent >= 500", "", "", 50},
		{"budget.json#spent < 35", "", commits[3], 0},
		{"budget.json#spent == 0", "", "", -1}, // false at HEAD
		{"budget.json exists", "", "", 0},
		{"budget.json#spent > 100", commits[5], commits[60], 11},
		{"budget.json#spent > 5000", "", "", -1},         // never holds
		{"budget.json#spent > 100", commits[50], "", -1}, // already holds at good
		{"budget.json#spent >", "", "", -1},
	}
	for _, c := range cases {
		res, err := st.Bisect(ctx, store.BisectOptions{Predicate: c.pred, Good: c.good, Bad: c.bad})
		if c.want < 0 {
			if err == nil {
				t.Errorf("bisect %q: want an error, got %s", c.pred, res.Mutation.Commit)
			}
			continue
		}
		if err != nil {
			t.Fatalf("bisect %q: %v", c.pred, err)
		}
		if res.Mutation.Commit != commits[c.want] {
			t.Errorf("bisect %q = %s, want commit %d", c.pred, res.Mutation.Subject, c.want)
		}
		if res.Reads > 10 { // log2(101) + 2
			t.Errorf("bisect %q read %d states", c.pred, res.Reads)
		}
	}
}

// TestBlameAllParentsFollowsMerges: a key set on a branch (two merges
// away) is blamed on the agent that set it there, as git blame says of
// its line; first-parent blame names the merge that brought it in.
func TestBlameAllParentsFollowsMerges(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wo := func(agent, branch string, s int) store.WriteOptions {
		return store.WriteOptions{Agent: agent, Branch: branch, Time: t0.Add(time.Duration(s) * time.Second)}
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Put(ctx, "d.json", []byte(`{"a":0,"b":0,"c":0}`), wo("init", "main", 0)))
	must(st.CreateBranch(ctx, "feat", "main"))
	must(st.Set(ctx, "d.json", "b", []byte("1"), wo("bob", "feat", 1)))
	must(st.CreateBranch(ctx, "sub", "feat"))
	must(st.Set(ctx, "d.json", "d", []byte("5"), wo("carol", "sub", 2)))
	must(st.Set(ctx, "d.json", "c", []byte("2"), wo("alice", "main", 3)))
	must(st.Set(ctx, "d.json", "a", []byte("7"), wo("bob", "feat", 4)))
	must(st.Merges().Merge(ctx, "sub", merge.MergeOptions{Into: "feat", NoFF: true, Write: wo("bob", "", 5)}))
	must(st.Merges().Merge(ctx, "feat", merge.MergeOptions{Into: "main", NoFF: true, Write: wo("coord", "", 6)}))

	agents := func(bo store.BlameOptions) map[string]string {
		bl, err := st.Blame(ctx, "d.json", store.ReadOptions{}, bo)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range bl {
			out[e.Path] = e.Agent + " " + e.Commit
		}
		return out
	}
	first, all := agents(store.BlameOptions{}), agents(store.BlameOptions{AllParents: true})
	for key, want := range map[string]string{"a": "coord", "b": "coord", "c": "alice", "d": "coord"} {
		if got := strings.Fields(first[key])[0]; got != want {
			t.Errorf("first-parent blame of %s: %s, want %s", key, got, want)
		}
	}
	for key, want := range map[string]string{"a": "bob", "b": "bob", "c": "alice", "d": "carol"} {
		if got := strings.Fields(all[key])[0]; got != want {
			t.Errorf("all-parents blame of %s: %s, want %s", key, got, want)
		}
	}
	// git blame (which follows every parent) agrees line by line: each
	// key is on a line of its own in the canonical file. Not for c: the
	// merge gave its line a comma (d follows it now), so git blames the
	// line on the merge while the key's value is alice's.
	porcelain := storetest.Git(t, st, "blame", "--line-porcelain", "main", "--", "d.json")
	commit, compared := "", 0
	for _, l := range strings.Split(porcelain, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && len(f[0]) == 40 {
			commit = f[0]
		}
		if text, ok := strings.CutPrefix(l, "\t"); ok {
			if key, _, ok := strings.Cut(strings.TrimSpace(text), ":"); ok {
				key = strings.Trim(key, `"`)
				if key == "c" {
					continue
				}
				if got := strings.Fields(all[key])[1]; got != commit {
					t.Errorf("key %s: all-parents blame says %s, git blame %s", key, got, commit)
				}
				compared++
			}
		}
	}
	if compared != 3 {
		t.Fatalf("compared %d keys with git blame, want 3 (a, b, d):\n%s", compared, porcelain)
	}
}

// TestFollowAndBlameAcrossAPlainGitMove: a rename made with plain git (no
// trailers) is detected as git detects an exact rename, so log --follow
// and blame continue under the old name; git log --follow agrees.
func TestFollowAndBlameAcrossAPlainGitMove(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	m1, _ := st.Set(ctx, "plan.json", "risk.level", []byte(`"low"`), store.WriteOptions{Agent: "planner"})
	m2, _ := st.Set(ctx, "plan.json", "owner", []byte(`"ops"`), store.WriteOptions{Agent: "bob"})
	gitMove(t, st, "plan.json", "docs/plan.json")
	m4, _ := st.Set(ctx, "docs/plan.json", "risk.level", []byte(`"high"`), store.WriteOptions{Agent: "planner"})

	var got []string
	err := st.Log(ctx, store.LogOptions{File: "docs/plan.json", Follow: true}, func(m *store.Mutation) bool {
		got = append(got, m.Commit)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(storetest.Git(t, st, "log", "--follow", "--format=%H", "main", "--", "docs/plan.json"))
	if !slices.Equal(got, want) || len(want) != 4 {
		t.Fatalf("log --follow across git mv:\n got %v\nwant %v (git log --follow)", got, want)
	}
	var keyLog []string
	var moved *store.ValueChange
	st.Log(ctx, store.LogOptions{File: "docs/plan.json", Key: "risk.level", Follow: true}, func(m *store.Mutation) bool {
		keyLog = append(keyLog, m.Commit)
		if m.Value != nil && m.Value.File == "docs/plan.json" && m.Commit != m4.Commit {
			moved = m.Value
		}
		return true
	})
	if len(keyLog) != 3 || keyLog[0] != m4.Commit || keyLog[len(keyLog)-1] != m1.Commit {
		t.Fatalf("key log --follow across git mv: %v, want %s first and %s last", keyLog, m4.Commit, m1.Commit)
	}
	// The git mv is told as the move it is, not as a creation.
	if moved == nil || moved.Op != store.OpRename || moved.From != "plan.json" || string(moved.Old) != `"low"` {
		t.Fatalf("the git mv in the key log: %+v", moved)
	}
	byPath := blameByPath(t, st, "docs/plan.json")
	if byPath["owner"] != m2.MutationID+" bob" || byPath["risk.level"] != m4.MutationID+" planner" {
		t.Fatalf("blame across git mv: %v", byPath)
	}
}

// blameByPath blames file along first parents: key path -> "mutation-id agent".
func blameByPath(t *testing.T, st *aiwgstate.Store, file string) map[string]string {
	t.Helper()
	blame, err := st.Blame(context.Background(), file, store.ReadOptions{}, store.BlameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range blame {
		out[b.Path] = b.MutationID + " " + b.Agent
	}
	return out
}
