package remote_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// swarmServer is a bare server with a main pushed by a coordinator store,
// behind git daemon and a proxy that counts the bytes clients fetch.
type swarmServer struct {
	dir, url string
	bytes    *gitserver.Counter
	coord    *aiwgstate.Store
}

func newSwarmServer(t *testing.T) *swarmServer {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	srv := &swarmServer{dir: gitserver.Bare(t, root, "s.git")}
	base, counter := gitserver.Counting(t, gitserver.Daemon(t, root))
	srv.url, srv.bytes = base+"s.git", counter
	srv.coord = storetest.New(t)
	if _, err := srv.coord.Set(ctx, "global/config.json", "mode", []byte(`"on"`), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.coord.AddRemote(ctx, "origin", srv.url); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.coord.Push(ctx, "", store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "--git-dir", srv.dir, "symbolic-ref", "HEAD", "refs/heads/main").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return srv
}

// agent clones the server and starts agent id on its own branch.
func (srv *swarmServer) agent(t *testing.T, id string) *aiwgstate.Store {
	t.Helper()
	ctx := context.Background()
	st, err := aiwgstate.Clone(ctx, srv.url, filepath.Join(t.TempDir(), id+".git"), store.CloneOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Swarm().StartAgent(ctx, id, "", ""); err != nil {
		t.Fatal(err)
	}
	return st
}

func sync(t *testing.T, st *aiwgstate.Store, id string, so remote.SyncOptions) *remote.SyncResult {
	t.Helper()
	so.Merge.Write.Agent = id
	res, err := st.Swarm().Sync(context.Background(), "", so)
	if err != nil {
		t.Fatalf("%s sync: %+v, %v", id, res, err)
	}
	return res
}

func set(t *testing.T, st *aiwgstate.Store, id, file, key, value string) {
	t.Helper()
	if _, err := st.Set(context.Background(), file, key, []byte(value), store.WriteOptions{Agent: id}); err != nil {
		t.Fatal(err)
	}
}

func (srv *swarmServer) integrate(t *testing.T, io remote.IntegrateOptions) *remote.IntegrateResult {
	t.Helper()
	io.Merge.Write.Agent = "conductor"
	res, err := srv.coord.Swarm().Integrate(context.Background(), "", io)
	if err != nil && !errors.Is(err, store.ErrConflict) {
		t.Fatalf("integrate: %+v, %v", res, err)
	}
	return res
}

// pushOther makes n agent branches on the server, each with a document of
// its own (about 2 KB that compresses badly), as other agents would.
func (srv *swarmServer) pushOthers(t *testing.T, from, n int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("other%03d", i)
		br := "agents/" + id + "/main"
		if _, err := srv.coord.CreateBranch(ctx, br, "main"); err != nil {
			t.Fatal(err)
		}
		var noise strings.Builder
		for h := sha256.Sum256([]byte(id)); noise.Len() < 2000; h = sha256.Sum256(h[:]) {
			noise.WriteString(hex.EncodeToString(h[:]))
		}
		if _, err := srv.coord.Set(ctx, "agents/"+id+"/notes.json", "text", []byte(`"`+noise.String()+`"`), store.WriteOptions{Agent: id, Branch: br}); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.coord.Push(ctx, "", store.PushOptions{Branch: br}); err != nil {
			t.Fatal(err)
		}
	}
}

// An agent's sync fetches its own branch and main only: what it costs on
// the wire does not grow with the other agents' branches on the server.
func TestSyncIsNarrow(t *testing.T) {
	srv := newSwarmServer(t)
	a := srv.agent(t, "pulse")
	set(t, a, "pulse", "agents/pulse/s.json", "n", "0")
	sync(t, a, "pulse", remote.SyncOptions{})
	cost := func(round int) int64 {
		set(t, a, "pulse", "agents/pulse/s.json", "n", fmt.Sprint(round))
		before := srv.bytes.FetchDown.Load()
		sync(t, a, "pulse", remote.SyncOptions{})
		return srv.bytes.FetchDown.Load() - before
	}
	srv.pushOthers(t, 0, 2)
	few := cost(1)
	srv.pushOthers(t, 2, 30)
	many := cost(2)
	if many > few+few/10 {
		t.Fatalf("a sync fetched %d bytes with 2 other agents, %d with 32", few, many)
	}
	refs := storetest.Git(t, a, "for-each-ref", "--format=%(refname)")
	if strings.Contains(refs, "other") {
		t.Fatalf("the agent fetched other agents' branches:\n%s", refs)
	}
	// For people, fetch still brings everything.
	if _, err := a.Fetch(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if refs := storetest.Git(t, a, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/agents/"); strings.Count(refs, "other") != 32 {
		t.Fatalf("fetch brought:\n%s", refs)
	}
	storetest.Fsck(t, a)
	fsckServer(t, srv.dir)
}

func fsckServer(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict on the server: %v\n%s", err, out)
	}
}

// A pass merges only the branches that moved since the last one, and a
// pass with nothing moved fetches nothing and pushes nothing.
func TestIntegrateIsIncremental(t *testing.T) {
	srv := newSwarmServer(t)
	ids := []string{"a1", "a2", "a3"}
	agents := map[string]*aiwgstate.Store{}
	for _, id := range ids {
		agents[id] = srv.agent(t, id)
		set(t, agents[id], id, "agents/"+id+"/s.json", "n", "1")
		sync(t, agents[id], id, remote.SyncOptions{})
	}
	res := srv.integrate(t, remote.IntegrateOptions{})
	if len(res.Agents) != 3 || res.Unmoved != 0 || len(res.Pushed) != 1 {
		t.Fatalf("first pass: %+v", res)
	}
	set(t, agents["a2"], "a2", "agents/a2/s.json", "n", "2")
	sync(t, agents["a2"], "a2", remote.SyncOptions{})
	res = srv.integrate(t, remote.IntegrateOptions{})
	if len(res.Agents) != 1 || res.Agents[0].Agent != "a2" || res.Unmoved != 2 {
		t.Fatalf("second pass: %+v", res)
	}
	before := srv.bytes.FetchDown.Load()
	res = srv.integrate(t, remote.IntegrateOptions{})
	if len(res.Agents) != 0 || res.Pushed != nil || res.Unmoved != 3 {
		t.Fatalf("quiet pass: %+v", res)
	}
	// One advertisement of a handful of refs: no pack.
	if got := srv.bytes.FetchDown.Load() - before; got > 2000 {
		t.Fatalf("a pass with nothing moved fetched %d bytes", got)
	}
	// --all merges everything again (all up to date).
	res = srv.integrate(t, remote.IntegrateOptions{All: true})
	if len(res.Agents) != 3 {
		t.Fatalf("--all pass: %+v", res)
	}
	for _, am := range res.Agents {
		if am.Status != merge.MergeUpToDate {
			t.Fatalf("--all pass: %+v", am)
		}
	}
	got, err := srv.coord.Get(context.Background(), "agents/a2/s.json", "n", store.ReadOptions{Branch: "origin/main"})
	if err != nil || strings.TrimSpace(string(got)) != "2" {
		t.Fatalf("origin/main a2 n = %s, %v", got, err)
	}
	storetest.Fsck(t, srv.coord)
	fsckServer(t, srv.dir)
}

// A branch that conflicts gets a record in main; the agent's next sync
// shows it and settles it; the next pass merges the branch and drops the
// record.
func TestConflictRecordLoop(t *testing.T) {
	ctx := context.Background()
	srv := newSwarmServer(t)
	a, b := srv.agent(t, "a"), srv.agent(t, "b")
	set(t, a, "a", "shared/plan.json", "owner", `"a"`)
	set(t, a, "a", "agents/a/s.json", "n", "1")
	set(t, b, "b", "shared/plan.json", "owner", `"b"`)
	set(t, b, "b", "agents/b/s.json", "n", "1")
	sync(t, a, "a", remote.SyncOptions{})
	sync(t, b, "b", remote.SyncOptions{})
	res := srv.integrate(t, remote.IntegrateOptions{})
	if got := res.Conflicted(); len(got) != 1 || got[0] != "agents/b/main" {
		t.Fatalf("conflicted = %v (%+v)", got, res)
	}
	// b's own file is out of main with the rest of its branch, and main
	// holds the record of why.
	if _, err := srv.coord.Get(ctx, "agents/b/s.json", "", store.ReadOptions{Branch: "origin/main"}); err == nil {
		t.Fatal("b's branch was merged")
	}
	rec, err := srv.coord.Get(ctx, "swarm/conflicts/b/main.json", "", store.ReadOptions{Branch: "origin/main"})
	if err != nil || !strings.Contains(string(rec), `"agent":"\"b\""`) && !strings.Contains(string(rec), `"agent": "b"`) {
		t.Fatalf("record = %s, %v", rec, err)
	}
	// b's sync without --resolve: the record, and the merge of main stops
	// on the same key.
	_, err = b.Swarm().Sync(ctx, "", remote.SyncOptions{Merge: merge.MergeOptions{Write: store.WriteOptions{Agent: "b"}}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("sync over a recorded conflict: %v", err)
	}
	// --resolve settles the merge the plain sync left in progress.
	sres := sync(t, b, "b", remote.SyncOptions{Resolve: "theirs"})
	if sres.Conflict == nil || len(sres.Conflict.Conflicts) != 1 || sres.Conflict.Conflicts[0].Key != "owner" ||
		string(sres.Conflict.Conflicts[0].Into) != `"a"` || string(sres.Conflict.Conflicts[0].Agent) != `"b"` || sres.Resolved != 1 {
		t.Fatalf("sync --resolve theirs: %+v (record %+v)", sres, sres.Conflict)
	}
	res = srv.integrate(t, remote.IntegrateOptions{})
	if len(res.Agents) != 1 || len(res.Conflicted()) != 0 {
		t.Fatalf("pass after the resolution: %+v", res)
	}
	for file, want := range map[string]string{"agents/b/s.json": `{"n":1}`, "shared/plan.json": `{"owner":"a"}`} {
		got, err := srv.coord.Cat(ctx, file, store.ReadOptions{Branch: "origin/main"})
		if err != nil || strings.Join(strings.Fields(string(got)), "") != want {
			t.Fatalf("%s on main = %s, %v", file, got, err)
		}
	}
	if _, err := srv.coord.Get(ctx, "swarm/conflicts/b/main.json", "", store.ReadOptions{Branch: "origin/main"}); !store.IsNotFound(err) {
		t.Fatalf("the record outlived the resolution: %v", err)
	}
	if sres := sync(t, b, "b", remote.SyncOptions{}); sres.Conflict != nil {
		t.Fatalf("a record after the resolution: %+v", sres.Conflict)
	}
	storetest.Fsck(t, b)
	fsckServer(t, srv.dir)
}

// An agent's shard depends on its id and the number of shards only:
// agents joining move no one, and a fifth shard takes about a fifth.
func TestShardOfIsStable(t *testing.T) {
	before := map[string]int{}
	counts := make([]int, 4)
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("agent-%d", i)
		before[id] = remote.ShardOf(id, 4)
		counts[before[id]]++
	}
	for k, n := range counts {
		if n < 200 || n > 300 {
			t.Errorf("shard %d of 4 holds %d of 1000 agents", k, n)
		}
	}
	moved := 0
	for id, k := range before {
		switch k5 := remote.ShardOf(id, 5); {
		case k5 == k:
		case k5 == 4:
			moved++
		default:
			t.Fatalf("%s moved from shard %d to %d, not to the new one", id, k, k5)
		}
	}
	if moved < 150 || moved > 250 {
		t.Fatalf("a fifth shard took %d of 1000 agents", moved)
	}
	for _, bad := range []string{"", "1", "4/4", "-1/2", "a/b", "01/2", "1/2/3"} {
		if _, _, err := remote.ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if k, n, err := remote.ParseShard("3/8"); k != 3 || n != 8 || err != nil {
		t.Fatalf("ParseShard(3/8) = %d, %d, %v", k, n, err)
	}
}

// Shards integrate their agents into integration/K, and a top-level pass
// merges the shards into main, whose first-parent history is a line of
// integration merges.
func TestShardedIntegration(t *testing.T) {
	ctx := context.Background()
	srv := newSwarmServer(t)
	ids := []string{"a0", "a1", "a2", "a3", "a4"}
	for _, id := range ids {
		st := srv.agent(t, id)
		set(t, st, id, "agents/"+id+"/s.json", "n", "1")
		sync(t, st, id, remote.SyncOptions{})
	}
	shards := map[int]int{}
	for k := 0; k < 2; k++ {
		res := srv.integrate(t, remote.IntegrateOptions{Shard: k, Shards: 2})
		if res.Into != remote.ShardFor(k) {
			t.Fatalf("shard %d went into %s", k, res.Into)
		}
		for _, am := range res.Agents {
			if remote.ShardOf(am.Agent, 2) != k {
				t.Fatalf("shard %d merged %s", k, am.Agent)
			}
			shards[k]++
		}
	}
	if shards[0]+shards[1] != len(ids) {
		t.Fatalf("shards merged %v", shards)
	}
	main0, _ := srv.coord.Repo().Ref("refs/remotes/origin/main")
	res := srv.integrate(t, remote.IntegrateOptions{From: "integration/"})
	if len(res.Agents) != 2 || len(res.Conflicted()) != 0 {
		t.Fatalf("top-level pass: %+v", res)
	}
	for _, id := range ids {
		if _, err := srv.coord.Get(ctx, "agents/"+id+"/s.json", "", store.ReadOptions{Branch: "origin/main"}); err != nil {
			t.Fatalf("%s not on main: %v", id, err)
		}
	}
	line := storetest.Git(t, srv.coord, "log", "--first-parent", "--format=%s", main0.String()+"..origin/main")
	for _, s := range strings.Split(strings.TrimSpace(line), "\n") {
		if !strings.HasPrefix(s, "merge origin/integration/") {
			t.Fatalf("main's first-parent history:\n%s", line)
		}
	}
	storetest.Fsck(t, srv.coord)
	fsckServer(t, srv.dir)
}

// Names that end up in refspecs and paths are refused before anything
// runs: a branch git would read as two refs or a pattern, a remote name
// that would climb out of the git directory, an unknown resolution.
func TestSwarmRefusesBadNames(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	w := st.Swarm()
	if _, err := w.FetchBranches(ctx, "origin", "main:refs/heads/evil"); !errors.Is(err, verbiage.ErrInvalidName) {
		t.Errorf("fetch main:refs/heads/evil: %v", err)
	}
	if _, err := w.FetchBranches(ctx, "origin", "agents/*"); !errors.Is(err, verbiage.ErrInvalidName) {
		t.Errorf("fetch agents/*: %v", err)
	}
	if _, err := w.Sync(ctx, "", remote.SyncOptions{Upstream: "main:x"}); !errors.Is(err, verbiage.ErrInvalidName) {
		t.Errorf("sync --upstream main:x: %v", err)
	}
	if _, err := w.Sync(ctx, "", remote.SyncOptions{Resolve: "mine"}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("sync --resolve mine: %v", err)
	}
	if _, err := w.Integrate(ctx, "../../x", remote.IntegrateOptions{}); !errors.Is(err, repo.ErrInvalidName) {
		t.Errorf("integrate ../../x: %v", err)
	}
	if _, err := w.Integrate(ctx, "", remote.IntegrateOptions{Shard: 3, Shards: 2}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("integrate --shard 3/2: %v", err)
	}
}
