package sandbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aiwg/aiwg-state/internal/sandbox"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

// TestProfileFollowsTheHead: the parsed policy is kept while the branch
// head stays; a new policy is in force from its commit on.
func TestProfileFollowsTheHead(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	if pr, err := sandbox.ProfileOf(ctx, st.Store, "a"); pr != nil || err != nil {
		t.Fatalf("no policy: %v %v", pr, err)
	}
	set := func(doc string) {
		t.Helper()
		if _, err := st.SetPolicy(ctx, []byte(doc), store.WriteOptions{Agent: "admin"}); err != nil {
			t.Fatal(err)
		}
	}
	set(`{"default": "allow", "rules": [], "sandbox": [{"agents": ["a"], "profile": "minimal"}]}`)
	pr, err := sandbox.ProfileOf(ctx, st.Store, "a")
	if err != nil || pr == nil || pr.Name() != "minimal" {
		t.Fatalf("minimal: %v %v", pr, err)
	}
	var pe *policy.ProfileError
	if err := sandbox.CheckRead(ctx, st.Store, "a", "x.json"); !errors.As(err, &pe) {
		t.Fatalf("read under minimal: %v", err)
	}
	if err := sandbox.CheckRead(ctx, st.Store, "", "x.json"); err != nil {
		t.Fatalf("an unnamed reader is bounded: %v", err)
	}
	set(`{"default": "allow", "rules": [], "sandbox": [{"agents": ["a"], "profile": "operator-controlled"}]}`)
	if pr, _ := sandbox.ProfileOf(ctx, st.Store, "a"); pr == nil || pr.Name() != "operator-controlled" {
		t.Fatalf("after the policy changed: %v", pr)
	}
	if err := sandbox.CheckRead(ctx, st.Store, "a", "x.json"); err != nil {
		t.Fatal(err)
	}
}

// TestProfileIsTheDefaultBranchs: a store opened on another branch (-b, a
// served command's branch) or on none that exists still answers with the
// profile of the default branch's policy.
func TestProfileIsTheDefaultBranchs(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	if _, err := st.SetPolicy(ctx, []byte(`{"default": "allow", "rules": [], "sandbox": [{"agents": ["a"], "profile": "minimal"}]}`), store.WriteOptions{Agent: "admin"}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"nosuch", "main"} {
		other, err := store.Open(ctx, st.Dir(), store.Options{Branch: b})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := sandbox.ProfileOf(ctx, other, "a")
		other.Close()
		if err != nil || pr == nil || pr.Name() != "minimal" {
			t.Errorf("opened on %s: %v %v", b, pr, err)
		}
	}
}
