package aiwgstate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
)

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
	st := newStore(t)
	as := func(agent, branch string) aiwgstate.WriteOptions {
		return aiwgstate.WriteOptions{Agent: agent, Branch: branch}
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
	res, err := st.Merge(ctx, "main", aiwgstate.MergeOptions{Into: "agents/heartbeat/main", Write: aiwgstate.WriteOptions{Agent: "heartbeat"}})
	if err != nil || res.Status != aiwgstate.MergeCommitted {
		t.Fatalf("merge main into heartbeat's branch: %v %+v", err, res)
	}
	// The old branch's write of protected/ was made under a policy main
	// no longer has: merging it into main is refused, and main stays.
	head, err := st.Resolve("main", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Merge(ctx, "agents/heartbeat/old", aiwgstate.MergeOptions{Into: "main", Write: aiwgstate.WriteOptions{Agent: "conductor"}})
	if !errors.Is(err, aiwgstate.ErrDenied) || !strings.Contains(err.Error(), "protected/x.json") {
		t.Fatalf("merging the old branch into main: %v", err)
	}
	if now, _ := st.Resolve("main", ""); now != head {
		t.Fatalf("main moved to %s", now)
	}
	fsck(t, st)
}
