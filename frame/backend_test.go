package frame

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/store"
)

// TestBackendsExpire: a run past its time to live is gone, from memory
// and from the directory alike, and prune discards it.
func TestBackendsExpire(t *testing.T) {
	for name, b := range map[string]backend{
		"memory":    &memBackend{runs: map[string]*Run{}},
		"directory": dirBackend{dir: t.TempDir()},
	} {
		t.Run(name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, id := range []string{"short", "long"} {
				ttl := time.Minute
				if id == "long" {
					ttl = time.Hour
				}
				err := b.update(id, now, func(r *Run) (*Run, error) {
					if r != nil {
						t.Fatalf("run %s exists already", id)
					}
					return &Run{ID: id, Agent: "a", Expires: now.Add(ttl), Values: map[string]json.RawMessage{"k": json.RawMessage("1")}}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if r, _ := b.load("short", now.Add(59*time.Second)); r == nil || string(r.Values["k"]) != "1" {
				t.Fatalf("before its time: %+v", r)
			}
			if n, err := b.prune(now.Add(2 * time.Minute)); err != nil || n != 1 {
				t.Fatalf("prune = %d %v", n, err)
			}
			if r, _ := b.load("short", now.Add(time.Minute)); r != nil {
				t.Fatalf("at its time: %+v", r)
			}
			if r, _ := b.load("long", now.Add(2*time.Minute)); r == nil {
				t.Fatal("the long run went too")
			}
			// A failed update changes nothing.
			_ = b.update("long", now, func(r *Run) (*Run, error) {
				r.Values["k"] = json.RawMessage("2")
				return nil, ErrInvalid
			})
			if r, _ := b.load("long", now); string(r.Values["k"]) != "1" {
				t.Fatalf("a failed update changed the run: %s", r.Values["k"])
			}
			if err := b.remove("long"); err != nil {
				t.Fatal(err)
			}
			if r, _ := b.load("long", now); r != nil {
				t.Fatal("removed run still there")
			}
		})
	}
}

// TestHeldRunsAreBounded: a process holds so many runs at most; a new
// one past that is refused until one ends or passes its time, when the
// runs held are other agents'.
func TestHeldRunsAreBounded(t *testing.T) {
	defer func(n int) { maxHeldRuns = n }(maxHeldRuns)
	maxHeldRuns = 3
	m := &memBackend{runs: map[string]*Run{}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := func(id string, ttl time.Duration) error {
		return m.update(id, now, func(*Run) (*Run, error) {
			return &Run{ID: id, Agent: "agent-" + id, Expires: now.Add(ttl), Values: map[string]json.RawMessage{}}, nil
		})
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := start(id, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var tm *TooManyRunsError
	if err := start("d", time.Minute); !errors.As(err, &tm) || !errors.Is(err, store.ErrLimit) {
		t.Fatalf("a fourth run: %v", err)
	}
	if err := start("a", time.Hour); err != nil {
		t.Fatalf("renewing a held run: %v", err)
	}
	now = now.Add(2 * time.Minute) // b and c have passed their time
	if err := start("d", time.Minute); err != nil {
		t.Fatalf("a run once others passed their time: %v", err)
	}
}

// TestOneAgentCannotLockOthersOut: an agent that starts run after run,
// with the longest time to live, only displaces its own older runs; every
// other agent still starts one, and the memory counted includes what
// holding many tiny keys costs.
func TestOneAgentCannotLockOthersOut(t *testing.T) {
	defer func(n, a int, b, ab int64) { maxHeldRuns, maxAgentRuns, maxHeldBytes, maxAgentBytes = n, a, b, ab }(maxHeldRuns, maxAgentRuns, maxHeldBytes, maxAgentBytes)
	maxHeldRuns, maxAgentRuns = 10, 4
	m := &memBackend{runs: map[string]*Run{}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	set := func(agent, id string, keys int) error {
		return m.update(id, now, func(*Run) (*Run, error) {
			r := &Run{ID: id, Agent: agent, Expires: now.Add(MaxTTL), Values: map[string]json.RawMessage{}}
			for i := range keys {
				r.Values[fmt.Sprint(i)] = json.RawMessage("1")
			}
			return r, nil
		})
	}
	for i := range 100 {
		now = now.Add(time.Second)
		if err := set("alice", fmt.Sprint("flood-", i), 1); err != nil {
			t.Fatalf("alice's run %d: %v", i, err)
		}
	}
	if len(m.runs) != 4 || m.runs["flood-99"] == nil || m.runs["flood-0"] != nil {
		t.Fatalf("alice holds %d runs; want her 4 newest", len(m.runs))
	}
	for _, b := range []string{"bob", "carol"} {
		if err := set(b, b+"-run", 1); err != nil {
			t.Fatalf("%s locked out: %v", b, err)
		}
	}
	// Bytes, honestly counted: 1000 one-byte keys cost far more than 2000.
	maxAgentBytes = 50_000
	if err := set("dave", "tiny", 1000); err == nil || memBytes(&Run{Values: map[string]json.RawMessage{"k": nil}}) <= 1 {
		t.Fatalf("1000 tiny keys past the agent's bytes: %v", err)
	}
	if err := set("bob", "bob-run", 1); err != nil {
		t.Fatal(err)
	}
}

// TestDiskRunsAreBounded: the runs kept on disk are bounded in number and
// in size as the disk counts it (whole blocks); runs past their time, then
// the agent's own older runs, make room for new ones, never another's.
func TestDiskRunsAreBounded(t *testing.T) {
	defer func(n, a int, b int64) { maxDiskRuns, maxDiskAgentRuns, maxDiskBytes = n, a, b }(maxDiskRuns, maxDiskAgentRuns, maxDiskBytes)
	maxDiskRuns, maxDiskAgentRuns, maxDiskBytes = 3, 2, 1<<20
	d := dirBackend{dir: t.TempDir()}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := func(agent, id string, ttl time.Duration) error {
		return d.update(id, now, func(*Run) (*Run, error) {
			return &Run{ID: id, Agent: agent, Expires: now.Add(ttl), Values: map[string]json.RawMessage{"k": json.RawMessage("1")}}, nil
		})
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := start("agent-"+id, id, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var tm *TooManyRunsError
	if err := start("agent-d", "d", time.Minute); !errors.As(err, &tm) {
		t.Fatalf("a fourth agent's run on a full disk: %v", err)
	}
	if err := start("agent-a", "a", time.Hour); err != nil {
		t.Fatalf("renewing a run: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := start("agent-d", "d", time.Minute); err != nil {
		t.Fatalf("once b and c passed their time: %v", err)
	}
	// An agent past its own share displaces its own oldest run.
	if err := start("agent-a", "a2", time.Hour); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if err := start("agent-a", "a3", 2*time.Hour); err != nil {
		t.Fatalf("a third run of one agent: %v", err)
	}
	if r, _ := d.load("a", now); r != nil {
		t.Error("agent-a's oldest run was kept")
	}
	if r, _ := d.load("d", now); r == nil {
		t.Error("another agent's run was displaced")
	}
	// 3 one-byte runs count as 3 blocks, not 3 bytes.
	maxDiskRuns, maxDiskAgentRuns, maxDiskBytes = 100, 100, 2*diskBlock
	if err := start("agent-e", "e", time.Minute); !errors.As(err, &tm) {
		t.Fatalf("a third block: %v", err)
	}
}
