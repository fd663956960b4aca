package aiwgstate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/lease"
)

// TestLeaseExcludesAcrossStores: agents with stores of their own (as
// separate processes have) take turns on one exclusive lease, waiting in
// the queue: never two inside at once, every turn served, and the history
// of the resource's file is every acquire and release, one commit each.
func TestLeaseExcludesAcrossStores(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	const agents, turns = 5, 3
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			s, err := aiwgstate.Open(ctx, st.Dir(), aiwgstate.Options{NoSync: true})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			wo := aiwgstate.WriteOptions{Agent: fmt.Sprintf("agent-%d", a)}
			for i := 0; i < turns; i++ {
				res, err := s.Acquire(ctx, "tasks/t-1", aiwgstate.LeaseOptions{TTL: time.Minute, Wait: time.Minute, Poll: time.Millisecond}, wo)
				if err != nil {
					errs <- fmt.Errorf("%s turn %d: %w", wo.Agent, i, err)
					return
				}
				if res.Lease.Holder != wo.Agent {
					errs <- fmt.Errorf("granted %+v to %s", res.Lease, wo.Agent)
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				inside.Add(-1)
				if _, _, err := s.Release(ctx, "tasks/t-1", aiwgstate.ReleaseOptions{}, wo); err != nil {
					errs <- fmt.Errorf("%s release: %w", wo.Agent, err)
					return
				}
			}
		}(a)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if most.Load() != 1 {
		t.Errorf("%d agents held the exclusive lease at once", most.Load())
	}
	fsck(t, st)
	ops := map[string]int{}
	for _, l := range strings.Fields(git(t, st, "log", "--format=%(trailers:key=Lease,valueonly)", "--", "leases/tasks/t-1.json")) {
		ops[l]++
	}
	if ops["acquire"] != agents*turns || ops["release"] != agents*turns {
		t.Errorf("the file's history has %v, want %d acquires and releases", ops, agents*turns)
	}
	if out := git(t, st, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, "leases/") {
		t.Errorf("a resource nobody holds or waits for keeps its file:\n%s", out)
	}
}

// TestLeaseExpires: a lease that ran out is taken by the next agent, whose
// commit names the expired one; its holder can then neither renew nor
// release it.
func TestLeaseExpires(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	t0 := time.Now().Add(time.Hour).Truncate(time.Second)
	at := func(agent string, d time.Duration) aiwgstate.WriteOptions {
		return aiwgstate.WriteOptions{Agent: agent, Time: t0.Add(d)}
	}
	a, err := st.Acquire(ctx, "global.config", aiwgstate.LeaseOptions{TTL: time.Second}, at("pulse", 0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Acquire(ctx, "global.config", aiwgstate.LeaseOptions{TTL: time.Second}, at("beat", 999*time.Millisecond))
	if !errors.Is(err, lease.ErrHeld) || !strings.Contains(err.Error(), "pulse holds global.config") {
		t.Fatalf("acquire of a held lease: %v", err)
	}
	b, err := st.Acquire(ctx, "global.config", aiwgstate.LeaseOptions{TTL: time.Second, Type: lease.Shared}, at("beat", time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, st, "log", "-1", "--format=%(trailers:key=Lease-Expired,valueonly)"); strings.TrimSpace(got) != a.Lease.ID {
		t.Errorf("Lease-Expired %q, want %s", got, a.Lease.ID)
	}
	if _, err := st.Renew(ctx, "global.config", "", time.Minute, at("pulse", time.Second)); !errors.Is(err, lease.ErrNotHolder) {
		t.Errorf("renew of an expired lease: %v", err)
	}
	if _, _, err := st.Release(ctx, "global.config", aiwgstate.ReleaseOptions{}, at("pulse", time.Second)); !errors.Is(err, lease.ErrNotHolder) {
		t.Errorf("release of an expired lease: %v", err)
	}
	// A shared lease is shared; a forced release takes them all, with the
	// reason in the commit.
	if _, err := st.Acquire(ctx, "global.config", aiwgstate.LeaseOptions{TTL: time.Minute, Type: lease.Shared}, at("pulse", time.Second)); err != nil {
		t.Fatal(err)
	}
	infos, err := st.Leases(ctx, "", aiwgstate.ReadOptions{})
	if err != nil || len(infos) != 1 || len(infos[0].Locks) != 2 {
		t.Fatalf("leases: %+v %v", infos, err)
	}
	got, _, err := st.Release(ctx, "global.config", aiwgstate.ReleaseOptions{Force: true, Reason: "rebalancing"}, at("conductor", 2*time.Second))
	if err != nil || len(got) != 1 || got[0].Holder != "pulse" {
		// beat's shared lease ran out at 2s: only pulse's was live.
		t.Fatalf("forced release: %+v %v (beat's ran out at %s)", got, err, b.Lease.ExpiresAt)
	}
	if r := git(t, st, "log", "-1", "--format=%an %(trailers:key=Reason,valueonly)"); strings.TrimSpace(r) != "conductor rebalancing" {
		t.Errorf("forced release commit: %q", r)
	}
	fsck(t, st)
}

// TestLeaseWaitGivesUp: a waiter whose wait runs out fails as held, and
// leaves the queue, so that it does not hold up the agents behind it.
func TestLeaseWaitGivesUp(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	if _, err := st.Acquire(ctx, "r", aiwgstate.LeaseOptions{TTL: time.Minute}, aiwgstate.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := st.Acquire(ctx, "r", aiwgstate.LeaseOptions{TTL: time.Minute, Wait: 150 * time.Millisecond, Poll: 10 * time.Millisecond}, aiwgstate.WriteOptions{Agent: "b"})
	if !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("wait on a held lease: %v", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("gave up after %s of a 150ms wait", waited)
	}
	infos, err := st.Leases(ctx, "r", aiwgstate.ReadOptions{})
	if err != nil || len(infos) != 1 || len(infos[0].WaitQueue) != 0 {
		t.Fatalf("after giving up: %+v %v", infos, err)
	}
	ops := strings.Fields(git(t, st, "log", "--format=%(trailers:key=Lease,valueonly)"))
	if strings.Join(ops, " ") != "give-up wait acquire" {
		t.Errorf("lease commits %v", ops)
	}
}

// TestLeaseRefusesBadRequests: bad names and options change nothing.
func TestLeaseRefusesBadRequests(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	head := git(t, st, "rev-parse", "HEAD")
	for _, tc := range []struct {
		resource string
		lo       aiwgstate.LeaseOptions
	}{
		{"../x", aiwgstate.LeaseOptions{TTL: time.Second}},
		{"", aiwgstate.LeaseOptions{TTL: time.Second}},
		{"x/", aiwgstate.LeaseOptions{TTL: time.Second}},
		{"x", aiwgstate.LeaseOptions{}},
		{"x", aiwgstate.LeaseOptions{TTL: time.Second, Type: "rw"}},
		{"x", aiwgstate.LeaseOptions{TTL: time.Second, Priority: "urgent"}},
		{"x", aiwgstate.LeaseOptions{TTL: time.Second, Wait: -time.Second}},
	} {
		if _, err := st.Acquire(ctx, tc.resource, tc.lo, aiwgstate.WriteOptions{Agent: "a"}); err == nil {
			t.Errorf("acquire %q %+v: no error", tc.resource, tc.lo)
		}
	}
	if _, _, err := st.Release(ctx, "x", aiwgstate.ReleaseOptions{Reason: "why"}, aiwgstate.WriteOptions{}); !errors.Is(err, aiwgstate.ErrUsage) {
		t.Errorf("a reason without force: %v", err)
	}
	if got := git(t, st, "rev-parse", "HEAD"); got != head {
		t.Error("a refused request made a commit")
	}
}
