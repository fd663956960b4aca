package remote_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/store"
)

// ownSessionsPolicy lets each worker write its own sessions only.
const ownSessionsPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`

func TestSyncAndIntegrateOverGitDaemon(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	gitserver.Bare(t, root, "s.git")
	url := gitserver.Daemon(t, root) + "s.git"
	coord := storetest.New(t)
	if _, err := coord.SetPolicy(ctx, []byte(ownSessionsPolicy), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	if err := coord.AddRemote(ctx, "origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := coord.Push(ctx, "", store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	agents := map[string]*aiwgstate.Store{}
	for _, a := range []string{"pulse", "heartbeat"} {
		st, err := aiwgstate.Clone(ctx, url, filepath.Join(t.TempDir(), a+".git"), store.CloneOptions{Options: store.Options{NoSync: true}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if _, err := st.Swarm().StartAgent(ctx, a, "", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Set(ctx, "agents/"+a+"/s.json", "n", []byte("1"), store.WriteOptions{Agent: a}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Swarm().Sync(ctx, "", remote.SyncOptions{Merge: merge.MergeOptions{Write: store.WriteOptions{Agent: a}}}); err != nil {
			t.Fatalf("%s sync: %v", a, err)
		}
		agents[a] = st
	}
	// The coordinator writes main meanwhile; integrate merges both agents.
	if _, err := coord.Set(ctx, "global/config.json", "mode", []byte(`"on"`), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	res, err := coord.Swarm().Integrate(ctx, "", remote.IntegrateOptions{Merge: merge.MergeOptions{Write: store.WriteOptions{Agent: "conductor"}}})
	if err != nil || len(res.Agents) != 2 || len(res.Conflicted()) != 0 {
		t.Fatalf("integrate = %+v, %v", res, err)
	}
	// An agent's sync merges the new main (others' paths included) into its
	// branch: the merge brings them, it does not write them, so the policy
	// lets the worker's merge commit through, here and on the server.
	p := agents["pulse"]
	if _, err := p.Set(ctx, "agents/pulse/s.json", "n", []byte("2"), store.WriteOptions{Agent: "pulse"}); err != nil {
		t.Fatal(err)
	}
	sres, err := p.Swarm().Sync(ctx, "", remote.SyncOptions{Merge: merge.MergeOptions{Write: store.WriteOptions{Agent: "pulse"}}})
	if err != nil {
		t.Fatalf("pulse sync after integrate: %+v, %v", sres, err)
	}
	for _, file := range []string{"agents/heartbeat/s.json", "global/config.json", "agents/pulse/s.json"} {
		if _, err := p.Get(ctx, file, "", store.ReadOptions{}); err != nil {
			t.Errorf("pulse's branch lacks %s after sync: %v", file, err)
		}
	}
	if out := storetest.Git(t, coord, "log", "--format=%an", "origin/main"); !strings.Contains(out, "heartbeat") || !strings.Contains(out, "pulse") {
		t.Fatalf("origin/main log:\n%s", out)
	}
	storetest.Fsck(t, coord)
}
