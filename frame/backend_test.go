package frame

import (
	"encoding/json"
	"errors"
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
// one past that is refused until one ends or passes its time.
func TestHeldRunsAreBounded(t *testing.T) {
	defer func(n int) { maxHeldRuns = n }(maxHeldRuns)
	maxHeldRuns = 3
	m := &memBackend{runs: map[string]*Run{}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := func(id string, ttl time.Duration) error {
		return m.update(id, now, func(*Run) (*Run, error) {
			return &Run{ID: id, Agent: "a", Expires: now.Add(ttl), Values: map[string]json.RawMessage{}}, nil
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
