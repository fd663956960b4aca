package frame_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

var ctx = context.Background()

func as(agent string) frame.Options { return frame.Options{Agent: agent} }

// eachMode runs a test with frames in the git directory (CLI runs) and
// held in memory (a server's).
func eachMode(t *testing.T, f func(t *testing.T, st *aiwgstate.Store)) {
	t.Run("directory", func(t *testing.T) { f(t, storetest.New(t)) })
	t.Run("memory", func(t *testing.T) {
		st := storetest.New(t)
		release := frame.Hold(st.Dir())
		defer release()
		f(t, st)
		if _, err := os.Stat(filepath.Join(st.Dir(), frame.Dir)); !os.IsNotExist(err) {
			t.Errorf("a held frame was written to disk: %v", err)
		}
	})
}

func TestSetGetListClear(t *testing.T) {
	eachMode(t, func(t *testing.T, st *aiwgstate.Store) {
		fr := st.Frames()
		if err := fr.Set(ctx, "run-1", "sum", []byte(`5`), as("a")); err != nil {
			t.Fatal(err)
		}
		if err := fr.Set(ctx, "run-1", "plan", []byte(` {"b": 1, "a": [2]} `), as("a")); err != nil {
			t.Fatal(err)
		}
		if v, err := fr.Get(ctx, "run-1", "plan", as("a")); err != nil || string(v) != `{"a":[2],"b":1}` {
			t.Fatalf("Get = %s %v", v, err)
		}
		r, err := fr.Run(ctx, "run-1", as("a"))
		if err != nil || strings.Join(r.Keys(), ",") != "plan,sum" || r.Bytes() != int64(len("plan")+len(`{"a":[2],"b":1}`)+len("sum")+1) {
			t.Fatalf("Run = %+v %v", r, err)
		}
		if err := fr.Delete(ctx, "run-1", "sum", as("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := fr.Get(ctx, "run-1", "sum", as("a")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted key: %v", err)
		}
		if err := fr.Clear(ctx, "run-1", as("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := fr.Get(ctx, "run-1", "plan", as("a")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after clear: %v", err)
		}
		if err := fr.Clear(ctx, "run-1", as("a")); err != nil {
			t.Fatalf("clearing an ended run: %v", err)
		}
		// Nothing of it is history.
		if out := storetest.Git(t, st, "log", "--all", "--oneline"); strings.Contains(out, "frame") {
			t.Fatalf("a frame write made a commit: %s", out)
		}
	})
}

func TestRefusals(t *testing.T) {
	eachMode(t, func(t *testing.T, st *aiwgstate.Store) {
		fr := st.Frames()
		for name, err := range map[string]error{
			"empty run":     fr.Set(ctx, "", "k", []byte("1"), as("a")),
			"empty key":     fr.Set(ctx, "r", "", []byte("1"), as("a")),
			"control":       fr.Set(ctx, "r\n", "k", []byte("1"), as("a")),
			"long run":      fr.Set(ctx, strings.Repeat("r", 201), "k", []byte("1"), as("a")),
			"not JSON":      fr.Set(ctx, "r", "k", []byte("{"), as("a")),
			"path-like run": fr.Set(ctx, "../../HEAD", "k", []byte("1"), as("a")),
		} {
			if name == "path-like run" {
				// Any id is a name: it never reaches outside the frames.
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if data, _ := os.ReadFile(filepath.Join(st.Dir(), "HEAD")); !strings.HasPrefix(string(data), "ref: ") {
					t.Errorf("HEAD was overwritten: %q", data)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s: no error", name)
			}
		}
		// Another agent's run is not yours.
		if err := fr.Set(ctx, "mine", "k", []byte("1"), as("a")); err != nil {
			t.Fatal(err)
		}
		var oe *frame.OwnerError
		for name, err := range map[string]error{
			"get":   func() error { _, err := fr.Get(ctx, "mine", "k", as("b")); return err }(),
			"set":   fr.Set(ctx, "mine", "k", []byte("2"), as("b")),
			"clear": fr.Clear(ctx, "mine", as("b")),
		} {
			if !errors.As(err, &oe) || !errors.Is(err, store.ErrDenied) {
				t.Errorf("%s by another agent: %v", name, err)
			}
		}
		if v, _ := fr.Get(ctx, "mine", "k", as("a")); string(v) != "1" {
			t.Errorf("another agent changed the run: %s", v)
		}
	})
}

// TestCap: a run's frame stays within limits.max_frame_bytes; a set past
// it fails (exit 3's ErrLimit) and changes nothing.
func TestCap(t *testing.T) {
	eachMode(t, func(t *testing.T, st *aiwgstate.Store) {
		if _, err := st.SetConfig(ctx, "limits.max_frame_bytes", []byte("100"), store.WriteOptions{Agent: "admin"}); err != nil {
			t.Fatal(err)
		}
		fr := st.Frames()
		v := `"` + strings.Repeat("x", 40) + `"` // 42 bytes
		if err := fr.Set(ctx, "r", "k1", []byte(v), as("a")); err != nil {
			t.Fatal(err)
		}
		if err := fr.Set(ctx, "r", "k2", []byte(v), as("a")); err != nil { // 88 bytes
			t.Fatal(err)
		}
		var le *frame.LimitError
		if err := fr.Set(ctx, "r", "k3", []byte(v), as("a")); !errors.As(err, &le) || !errors.Is(err, store.ErrLimit) || le.Limit != 100 {
			t.Fatalf("past the cap: %v", err)
		}
		if r, _ := fr.Run(ctx, "r", as("a")); len(r.Values) != 2 {
			t.Fatalf("a refused set changed the frame: %v", r.Keys())
		}
		// Replacing a value counts it once.
		if err := fr.Set(ctx, "r", "k2", []byte(v), as("a")); err != nil {
			t.Fatalf("replacing a value: %v", err)
		}
	})
}

// TestDiscardedWhenTrajectoryCompletes: a run keyed by a trajectory id
// ends when the trajectory completes.
func TestDiscardedWhenTrajectoryCompletes(t *testing.T) {
	eachMode(t, func(t *testing.T, st *aiwgstate.Store) {
		wo := store.WriteOptions{Agent: "a"}
		id, _, err := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "test", Prompt: "p"}, wo)
		if err != nil {
			t.Fatal(err)
		}
		fr := st.Frames()
		if err := fr.Set(ctx, id, "step", []byte(`1`), as("a")); err != nil {
			t.Fatal(err)
		}
		if err := fr.Set(ctx, "other", "step", []byte(`1`), as("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := fr.Get(ctx, id, "step", as("a")); err != nil {
			t.Fatalf("before completion: %v", err)
		}
		if _, err := st.Trajectories().Complete(ctx, id, trajectory.CompletionInput{Status: "success"}, wo); err != nil {
			t.Fatal(err)
		}
		if _, err := fr.Get(ctx, id, "step", as("a")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after completion: %v", err)
		}
		if _, err := fr.Get(ctx, "other", "step", as("a")); err != nil {
			t.Fatalf("another run ended too: %v", err)
		}
	})
}

// TestPromote: a frame value becomes versioned state in one commit whose
// trailers say where it came from, as git log shows.
func TestPromote(t *testing.T) {
	st := storetest.New(t)
	fr := st.Frames()
	if err := fr.Set(ctx, "run-7", "summary", []byte(`{"risk": "low"}`), as("planner")); err != nil {
		t.Fatal(err)
	}
	m, err := fr.Promote(ctx, "run-7", "summary", "plan.json", "result", as("planner"), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := st.Get(ctx, "plan.json", "result.risk", store.ReadOptions{}); err != nil || strings.TrimSpace(string(v)) != `"low"` {
		t.Fatalf("promoted value: %s %v", v, err)
	}
	msg := storetest.Git(t, st, "log", "-1", "--format=%an%n%B", m.Commit)
	for _, want := range []string{"planner\n", "Frame-Run: run-7", "Frame-Key: summary", "Source: frame"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit lacks %q:\n%s", want, msg)
		}
	}
	if _, err := fr.Promote(ctx, "run-7", "nope", "plan.json", "x", as("planner"), store.WriteOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("promoting a missing key: %v", err)
	}
	storetest.Fsck(t, st)
}

// TestReservedPathsNeverCommitted: no write puts a file where the
// disposable tiers are reserved, whatever its kind.
func TestReservedPathsNeverCommitted(t *testing.T) {
	st := storetest.New(t)
	for _, p := range []string{".aiwg/frame/run.json", ".aiwg/cache/k.json"} {
		_, err := st.Put(ctx, p, []byte(`{"a": 1}`), store.WriteOptions{Agent: "a"})
		// The store keeps .aiwg/ to itself already; the guard holds
		// every other way in (a merge, a pull of a hand-made commit).
		if !errors.Is(err, frame.ErrReserved) && !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("put %s: %v", p, err)
		}
	}
	if out := storetest.Git(t, st, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, ".aiwg/frame") || strings.Contains(out, ".aiwg/cache") {
		t.Fatalf("reserved paths in the tree:\n%s", out)
	}
	if rule, _ := aiwgstate.ValidateKnownFile(".aiwg/cache/x", nil); rule != frame.RuleReserved {
		t.Errorf("hook check of a cache file: %q", rule)
	}
}

// TestProfile: the frame is every profile's unless it says not, within
// the profile's bound.
func TestProfile(t *testing.T) {
	st := storetest.New(t)
	pol := `{"default": "allow", "rules": [],
	  "profiles": {"sealed": {"frame": {"allowed": false}}, "small": {"frame": {"max_bytes": 20}}},
	  "sandbox": [{"agents": ["m"], "profile": "minimal"}, {"agents": ["s"], "profile": "sealed"}, {"agents": ["t"], "profile": "small"}]}`
	if _, err := st.SetPolicy(ctx, []byte(pol), store.WriteOptions{Agent: "admin"}); err != nil {
		t.Fatal(err)
	}
	fr := st.Frames()
	if err := fr.Set(ctx, "r1", "k", []byte(`1`), as("m")); err != nil {
		t.Errorf("minimal: %v", err)
	}
	var pe *policy.ProfileError
	if err := fr.Set(ctx, "r2", "k", []byte(`1`), as("s")); !errors.As(err, &pe) || pe.Rule != "frame.allowed" || pe.Profile != "sealed" {
		t.Errorf("sealed: %v", err)
	}
	if err := fr.Set(ctx, "r3", "k", []byte(`"`+strings.Repeat("x", 30)+`"`), as("t")); !errors.As(err, &pe) || pe.Rule != "frame.max_bytes" {
		t.Errorf("small: %v", err)
	}
}

// TestMergeOfAHandMadeCommit: a branch made with plain git that commits a
// disposable tier's file is refused by a merge, fast-forward or not.
func TestMergeOfAHandMadeCommit(t *testing.T) {
	st := storetest.New(t)
	if _, err := st.Put(ctx, "a.json", []byte(`{"a": 1}`), store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	c := storetest.PlainCommit(t, st, ".aiwg/cache/0123", "{}\n")
	storetest.Git(t, st, "update-ref", "refs/heads/hand", c)
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	for _, noFF := range []bool{false, true} {
		_, err := st.Merges().Merge(ctx, "hand", merge.MergeOptions{NoFF: noFF, Write: store.WriteOptions{Agent: "a"}})
		if !errors.Is(err, frame.ErrReserved) {
			t.Errorf("merge (no-ff %v): %v", noFF, err)
		}
	}
	if now := storetest.Git(t, st, "rev-parse", "HEAD"); now != head {
		t.Fatal("a refused merge moved the branch")
	}
	storetest.Fsck(t, st)
}

// TestReservedUnderAnySpelling: the one check of the guard and the hook
// folds case and NFKC, and takes a file standing where a tier's directory
// is; a name that only starts alike is not reserved.
func TestReservedUnderAnySpelling(t *testing.T) {
	for _, p := range []string{".aiwg/frame/r.json", ".aiwg/Frame/r.json", ".AIWG/CACHE/k", ".aiwg/ｆrame/x.json", ".aiwg/frame", ".aiwg/Cache"} {
		if rule, _ := frame.ValidateFile(p, nil); rule != frame.RuleReserved {
			t.Errorf("%s: rule %q", p, rule)
		}
	}
	for _, p := range []string{".aiwg/frames.json", ".aiwg/cached/x.json", "frame/x.json", "agents/a/.aiwg/frame/x.json"} {
		if rule, _ := frame.ValidateFile(p, nil); rule != "" {
			t.Errorf("%s: rule %q", p, rule)
		}
	}
}

// TestFrameTTLIsBounded: a frame's time to live has a ceiling, so that no
// run holds memory or disk for years.
func TestFrameTTLIsBounded(t *testing.T) {
	st := storetest.New(t)
	fr := st.Frames()
	ctx := context.Background()
	if err := fr.Set(ctx, "r", "k", []byte("1"), frame.Options{Agent: "a", TTL: 87600 * time.Hour}); !errors.Is(err, frame.ErrInvalid) {
		t.Fatalf("ttl of ten years: %v", err)
	}
	if err := fr.Set(ctx, "r", "k", []byte("1"), frame.Options{Agent: "a", TTL: frame.MaxTTL}); err != nil {
		t.Fatal(err)
	}
}
