package hooks

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/policy"
)

// TestMergeTakesOnlyChangesMadeSinceTheBase forges merge commits with git
// plumbing, as an attacker would, and checks what the hook counts as the
// merger's own writes: only what a clean three-way merge would not have
// produced.
func TestMergeTakesOnlyChangesMadeSinceTheBase(t *testing.T) {
	ctx := context.Background()
	_, w := setup(t, func(tb testing.TB, root string) string { return root + "/" })
	gitDir := filepath.Join(w.dir, ".git")
	rev := func(r string) string { return strings.TrimSpace(w.must("x", "rev-parse", r)) }
	c1 := w.commit("conductor", map[string]string{"protected/config.json": canon(t, `{"mode": "safe"}`)})
	c2 := w.commit("conductor", map[string]string{"protected/config.json": canon(t, `{"mode": "safer"}`)})
	// tree is the tree of base with files taken from other commits
	// (rev:path) or deleted ("").
	tree := func(base string, files map[string]string) string {
		w.must("x", "read-tree", base)
		for p, from := range files {
			if from == "" {
				w.must("x", "rm", "-q", "--cached", p)
				continue
			}
			w.must("x", "checkout", from, "--", p)
		}
		return strings.TrimSpace(w.must("x", "write-tree"))
	}
	forge := func(agent, tree string, parents ...string) string {
		args := []string{"commit-tree", tree, "-m", "merge"}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return strings.TrimSpace(w.must(agent, args...))
	}
	check := func(revs ...string) error {
		return CheckRevs(ctx, gitDir, revs, Options{PolicyFrom: c2})
	}
	refusedAt := func(name string, err error, commit, path string) {
		t.Helper()
		var re *RefusedError
		if !errors.As(err, &re) || !errors.Is(err, policy.ErrDenied) {
			t.Fatalf("%s: CheckRevs = %v; want a refusal", name, err)
		}
		for _, v := range re.Violations {
			if v.Commit == commit && v.Path == path && v.Rule == RulePolicy {
				return
			}
		}
		t.Fatalf("%s: no policy violation on %s by %s: %v", name, path, commit[:12], err)
	}

	// An old second parent brings back nothing: its entry is the base's.
	rollback := forge("pulse", tree(c2, map[string]string{"protected/config.json": c1}), c2, c1)
	refusedAt("rollback", check(rollback, "--not", c2), rollback, "protected/config.json")

	// A root-less second parent (its own history) deleting the policy.
	w.must("x", "read-tree", "--empty")
	empty := strings.TrimSpace(w.must("x", "write-tree"))
	orphan := forge("pulse", empty)
	noPolicy := forge("pulse", tree(c2, map[string]string{policy.Path: ""}), c2, orphan)
	refusedAt("policy removed", check(noPolicy, "--not", c2), noPolicy, policy.Path)

	// The first-parent trick: the merge is of the server's head, but its
	// first parent is an old commit whose entries it keeps.
	w.must("x", "reset", "-q", "--hard", c1)
	x := w.commit("pulse", map[string]string{"agents/pulse/s.json": canon(t, `{"n": 1}`)})
	kept := forge("pulse", rev(x+"^{tree}"), x, c2)
	refusedAt("a change thrown away", check(kept, "--not", c2), kept, "protected/config.json")

	// A worker merging main into its branch takes the coordinator's change.
	w.must("pulse", "merge", "-q", "--no-ff", "-m", "sync", c2)
	if err := check("HEAD", "--not", c2); err != nil {
		t.Fatalf("a clean merge of main is refused: %v", err)
	}
	synced := rev("HEAD")

	// Criss-cross: two branches merge each other, then a merge of both has
	// two merge bases.
	w.must("x", "checkout", "-q", "-b", "hb", c2)
	y := w.commit("heartbeat", map[string]string{"agents/heartbeat/s.json": canon(t, `{"n": 2}`)})
	a := forge("pulse", tree(synced, map[string]string{"agents/heartbeat/s.json": y}), synced, y)
	b := forge("heartbeat", tree(y, map[string]string{"agents/pulse/s.json": synced}), y, synced)
	if out := w.must("x", "merge-base", "--all", a, b); len(strings.Fields(out)) != 2 {
		t.Fatalf("not a criss-cross: merge bases %q", out)
	}
	clean := forge("pulse", rev(a+"^{tree}"), a, b)
	if err := check(clean, "--not", c2); err != nil {
		t.Fatalf("a clean criss-cross merge is refused: %v", err)
	}
	cross := forge("pulse", tree(a, map[string]string{"protected/config.json": c1, "agents/heartbeat/s.json": ""}), a, b)
	err := check(cross, "--not", c2)
	refusedAt("criss-cross", err, cross, "agents/heartbeat/s.json")
	refusedAt("criss-cross", err, cross, "protected/config.json")
}
