package merge_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
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

// withCarol is ownSessionsPolicy with a third worker.
var withCarol = strings.Replace(ownSessionsPolicy, `"heartbeat"]`, `"heartbeat", "carol"]`, 1)

// weakSessionsPolicy also lets workers write protected/.
var weakSessionsPolicy = strings.Replace(ownSessionsPolicy, `"paths": ["agents/{agent}/**"]`, `"paths": ["agents/{agent}/**", "protected/**"]`, 1)

// TestMergeBringsCommitsUnderThePolicyTheyCameWith: a worker merging main
// brings a policy change and commits the new policy allows; the policy a
// brought commit is judged by only ever comes from the branch merged into
// or from a brought commit allowed to write it, never from an older
// commit's tree.
func TestMergeBringsCommitsUnderThePolicyTheyCameWith(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	as := func(agent, branch string) store.WriteOptions {
		return store.WriteOptions{Agent: agent, Branch: branch}
	}
	if _, err := st.SetPolicy(ctx, []byte(weakSessionsPolicy), as("conductor", "main")); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"agents/heartbeat/main", "agents/heartbeat/old"} {
		if _, err := st.CreateBranch(ctx, b, "main"); err != nil {
			t.Fatal(err)
		}
	}
	// Under the weak policy of its branch, heartbeat writes protected/.
	if _, err := st.Set(ctx, "agents/heartbeat/a.json", "n", []byte("1"), as("heartbeat", "agents/heartbeat/old")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "protected/x.json", "n", []byte("1"), as("heartbeat", "agents/heartbeat/old")); err != nil {
		t.Fatal(err)
	}
	// main tightens the policy, then adds carol, who writes.
	if _, err := st.SetPolicy(ctx, []byte(ownSessionsPolicy), as("conductor", "main")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetPolicy(ctx, []byte(withCarol), as("conductor", "main")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "agents/carol/s.json", "n", []byte("1"), as("carol", "main")); err != nil {
		t.Fatal(err)
	}
	// heartbeat's own branch (still under the weak policy) merges main:
	// the policy changes are the conductor's, allowed, and carol's write is
	// allowed by the policy they brought.
	if _, err := st.Set(ctx, "agents/heartbeat/s.json", "n", []byte("1"), as("heartbeat", "agents/heartbeat/main")); err != nil {
		t.Fatal(err)
	}
	res, err := st.Merges().Merge(ctx, "main", merge.MergeOptions{Into: "agents/heartbeat/main", Write: store.WriteOptions{Agent: "heartbeat"}})
	if err != nil || res.Status != merge.MergeCommitted {
		t.Fatalf("merge main into heartbeat's branch: %v %+v", err, res)
	}
	// The old branch's write of protected/ was made under a policy main
	// no longer has: merging it into main is refused, and main stays.
	head, err := st.Resolve("main", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Merges().Merge(ctx, "agents/heartbeat/old", merge.MergeOptions{Into: "main", Write: store.WriteOptions{Agent: "conductor"}})
	if !errors.Is(err, store.ErrDenied) || !strings.Contains(err.Error(), "protected/x.json") {
		t.Fatalf("merging the old branch into main: %v", err)
	}
	if now, _ := st.Resolve("main", ""); now != head {
		t.Fatalf("main moved to %s", now)
	}
	storetest.Fsck(t, st)
}

// TestMergeFirstParent: a branch that merged main in is merged into main
// with a commit whose first parent is main's head, not fast-forwarded
// onto; a branch that only adds to main's head still fast-forwards.
func TestMergeFirstParent(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	as := func(agent, branch string) store.WriteOptions {
		return store.WriteOptions{Agent: agent, Branch: branch}
	}
	if _, err := st.CreateBranch(ctx, "agents/a/main", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "agents/a/s.json", "n", []byte("1"), as("a", "agents/a/main")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "global/x.json", "n", []byte("1"), as("conductor", "main")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Merges().Merge(ctx, "main", merge.MergeOptions{Into: "agents/a/main", Write: store.WriteOptions{Agent: "a"}}); err != nil {
		t.Fatal(err)
	}
	head, _ := st.Resolve("main", "")
	res, err := st.Merges().Merge(ctx, "agents/a/main", merge.MergeOptions{Into: "main", FirstParent: true, Write: store.WriteOptions{Agent: "conductor"}})
	if err != nil || res.Status != merge.MergeCommitted {
		t.Fatalf("merge: %v %+v", err, res)
	}
	if first := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "main^1")); first != head.String() {
		t.Fatalf("main's first parent is %s, not its previous head %s", first, head)
	}
	// The agent takes main (a fast-forward of its own branch), writes,
	// and main fast-forwards over the write.
	if res, err := st.Merges().Merge(ctx, "main", merge.MergeOptions{Into: "agents/a/main", Write: store.WriteOptions{Agent: "a"}}); err != nil || res.Status != merge.MergeFastForward {
		t.Fatalf("agent takes main: %v %+v", err, res)
	}
	if _, err := st.Set(ctx, "agents/a/s.json", "n", []byte("2"), as("a", "agents/a/main")); err != nil {
		t.Fatal(err)
	}
	res, err = st.Merges().Merge(ctx, "agents/a/main", merge.MergeOptions{Into: "main", FirstParent: true, Write: store.WriteOptions{Agent: "conductor"}})
	if err != nil || res.Status != merge.MergeFastForward {
		t.Fatalf("merge of a write on main's head: %v %+v", err, res)
	}
	storetest.Fsck(t, st)
}
