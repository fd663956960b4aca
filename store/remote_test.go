package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

const ownSessionsPolicy = `{
  "roles": {"coordinator": ["conductor"], "workers": ["pulse", "heartbeat"]},
  "rules": [
    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]}
  ]
}`

func TestPolicyIsCheckedOnEveryWrite(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	if _, err := st.SetPolicy(ctx, []byte(`{"rules": [{"agents": ["a"], "paths": ["x"], "efect": "deny"}]}`), store.WriteOptions{Agent: "conductor"}); !errors.Is(err, policy.ErrInvalid) {
		t.Fatalf("invalid policy accepted: %v", err)
	}
	if _, err := st.SetPolicy(ctx, []byte(ownSessionsPolicy), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent, file string
		allowed     bool
	}{
		{"pulse", "agents/pulse/s.json", true},
		{"pulse", "agents/heartbeat/s.json", false},
		{"pulse", "global/config.json", false},
		{"conductor", "global/config.json", true},
		{"stranger", "agents/stranger/s.json", false},
	}
	for _, tt := range tests {
		_, err := st.Set(ctx, tt.file, "x", []byte("1"), store.WriteOptions{Agent: tt.agent})
		if tt.allowed != (err == nil) {
			t.Errorf("%s writes %s: %v", tt.agent, tt.file, err)
		}
		var d *policy.Denial
		if err != nil && (!errors.Is(err, store.ErrDenied) || !errors.As(err, &d) || d.Agent != tt.agent || d.Path != tt.file || d.Rule == "") {
			t.Errorf("%s writes %s: error %v does not name agent, path and rule", tt.agent, tt.file, err)
		}
	}
	// A worker cannot hand itself rights: the policy in force judges the
	// change of policy.
	if _, err := st.SetPolicy(ctx, []byte(`{"default": "allow", "rules": []}`), store.WriteOptions{Agent: "pulse"}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("a worker changed the policy: %v", err)
	}
	fsck(t, st)
}

func TestSyncAndIntegrateOverGitDaemon(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	gitserver.Bare(t, root, "s.git")
	url := gitserver.Daemon(t, root) + "s.git"
	coord := newStore(t)
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
		if _, err := st.StartAgent(ctx, a, "", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Set(ctx, "agents/"+a+"/s.json", "n", []byte("1"), store.WriteOptions{Agent: a}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Sync(ctx, "", store.SyncOptions{Merge: store.MergeOptions{Write: store.WriteOptions{Agent: a}}}); err != nil {
			t.Fatalf("%s sync: %v", a, err)
		}
		agents[a] = st
	}
	// The coordinator writes main meanwhile; integrate merges both agents.
	if _, err := coord.Set(ctx, "global/config.json", "mode", []byte(`"on"`), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	res, err := coord.Integrate(ctx, "", store.IntegrateOptions{Merge: store.MergeOptions{Write: store.WriteOptions{Agent: "conductor"}}})
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
	sres, err := p.Sync(ctx, "", store.SyncOptions{Merge: store.MergeOptions{Write: store.WriteOptions{Agent: "pulse"}}})
	if err != nil {
		t.Fatalf("pulse sync after integrate: %+v, %v", sres, err)
	}
	for _, file := range []string{"agents/heartbeat/s.json", "global/config.json", "agents/pulse/s.json"} {
		if _, err := p.Get(ctx, file, "", store.ReadOptions{}); err != nil {
			t.Errorf("pulse's branch lacks %s after sync: %v", file, err)
		}
	}
	if out := git(t, coord, "log", "--format=%an", "origin/main"); !strings.Contains(out, "heartbeat") || !strings.Contains(out, "pulse") {
		t.Fatalf("origin/main log:\n%s", out)
	}
	fsck(t, coord)
}
