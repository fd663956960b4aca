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
				if _, err := s.Release(ctx, "tasks/t-1", aiwgstate.ReleaseOptions{}, wo); err != nil {
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
	if _, err := st.Release(ctx, "global.config", aiwgstate.ReleaseOptions{}, at("pulse", time.Second)); !errors.Is(err, lease.ErrNotHolder) {
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
	rel, err := st.Release(ctx, "global.config", aiwgstate.ReleaseOptions{Force: true, Reason: "rebalancing"}, at("conductor", 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := rel.Leases; len(got) != 1 || got[0].Holder != "pulse" {
		// beat's shared lease ran out at 2s: only pulse's was live.
		t.Fatalf("forced release: %+v (beat's ran out at %s)", got, b.Lease.ExpiresAt)
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
		{"x", aiwgstate.LeaseOptions{TTL: time.Microsecond}},
		{"x.json", aiwgstate.LeaseOptions{TTL: time.Second}},
		{"a.json/b", aiwgstate.LeaseOptions{TTL: time.Second}},
	} {
		if _, err := st.Acquire(ctx, tc.resource, tc.lo, aiwgstate.WriteOptions{Agent: "a"}); err == nil {
			t.Errorf("acquire %q %+v: no error", tc.resource, tc.lo)
		}
	}
	if _, err := st.Release(ctx, "x", aiwgstate.ReleaseOptions{Reason: "why"}, aiwgstate.WriteOptions{}); !errors.Is(err, aiwgstate.ErrUsage) {
		t.Errorf("a reason without force: %v", err)
	}
	if got := git(t, st, "rev-parse", "HEAD"); got != head {
		t.Error("a refused request made a commit")
	}
}

// TestLeaseSameAgentProcessesExclude: processes of one agent (stores of
// their own, one agent name) are excluded from each other as any two
// agents are.
func TestLeaseSameAgentProcessesExclude(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	const procs = 4
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := aiwgstate.Open(ctx, st.Dir(), aiwgstate.Options{NoSync: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			wo := aiwgstate.WriteOptions{Agent: "worker"}
			res, err := s.Acquire(ctx, "job", aiwgstate.LeaseOptions{TTL: time.Minute, Wait: time.Minute, Poll: time.Millisecond}, wo)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			inside.Add(-1)
			if _, err := s.Release(ctx, "job", aiwgstate.ReleaseOptions{ID: res.Lease.ID}, wo); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d processes of one agent held the exclusive lease at once", most.Load())
	}
}

// TestLeaseWaitsAreBounded: a queued request lives for half a minute at
// a time however long its wait, so a killed waiter cannot hold a free
// resource up for long; a forced release withdraws it at once.
func TestLeaseWaitsAreBounded(t *testing.T) {
	st := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := st.Acquire(ctx, "r", aiwgstate.LeaseOptions{TTL: time.Minute}, aiwgstate.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Acquire(ctx, "r", aiwgstate.LeaseOptions{TTL: time.Minute, Wait: time.Hour, Poll: time.Millisecond}, aiwgstate.WriteOptions{Agent: "b"})
		done <- err
	}()
	var q []lease.Request
	for deadline := time.Now().Add(10 * time.Second); len(q) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if infos, err := st.Leases(ctx, "r", aiwgstate.ReadOptions{}); err == nil && len(infos) == 1 {
			q = infos[0].WaitQueue
		}
	}
	if len(q) != 1 || q[0].Timeout > 31_000 {
		t.Fatalf("the queued request of an hour's wait: %+v", q)
	}
	// The waiter is interrupted: its request goes, and it says so.
	cancel()
	if err := <-done; !errors.Is(err, lease.ErrHeld) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "withdrawn") {
		t.Errorf("an interrupted wait: %v", err)
	}
	if infos, _ := st.Leases(context.Background(), "r", aiwgstate.ReadOptions{}); len(infos[0].WaitQueue) != 0 {
		t.Errorf("an interrupted waiter stays queued: %+v", infos[0].WaitQueue)
	}
}

// TestLeaseUpgradeDeadlockFailsAtOnce: two shared holders both asking to
// upgrade could never be served; the second is refused at once.
func TestLeaseUpgradeDeadlockFailsAtOnce(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	shared := aiwgstate.LeaseOptions{TTL: time.Minute, Type: lease.Shared}
	la, err := st.Acquire(ctx, "doc", shared, aiwgstate.WriteOptions{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := st.Acquire(ctx, "doc", shared, aiwgstate.WriteOptions{Agent: "b"})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := st.Acquire(ctx, "doc", aiwgstate.LeaseOptions{TTL: time.Minute, ID: la.Lease.ID, Wait: 2 * time.Second, Poll: time.Millisecond}, aiwgstate.WriteOptions{Agent: "a"})
		waiting <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if infos, _ := st.Leases(ctx, "doc", aiwgstate.ReadOptions{}); len(infos) == 1 && len(infos[0].WaitQueue) == 1 {
			break
		}
	}
	start := time.Now()
	_, err = st.Acquire(ctx, "doc", aiwgstate.LeaseOptions{TTL: time.Minute, ID: lb.Lease.ID, Wait: time.Minute}, aiwgstate.WriteOptions{Agent: "b"})
	if !errors.Is(err, lease.ErrDeadlock) || time.Since(start) > 5*time.Second {
		t.Errorf("the second upgrader: %v after %s", err, time.Since(start))
	}
	// b gives way: a's upgrade goes through.
	if _, err := st.Release(ctx, "doc", aiwgstate.ReleaseOptions{ID: lb.Lease.ID}, aiwgstate.WriteOptions{Agent: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Errorf("the first upgrader, once b released: %v", err)
	}
}

// TestLeasesAtARevision: leases read at a revision are judged expired or
// not at that commit's time, not today's.
func TestLeasesAtARevision(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	hourAgo := time.Now().Add(-time.Hour)
	if _, err := st.Acquire(ctx, "r", aiwgstate.LeaseOptions{TTL: time.Minute}, aiwgstate.WriteOptions{Agent: "a", Time: hourAgo}); err != nil {
		t.Fatal(err)
	}
	now, err := st.Leases(ctx, "", aiwgstate.ReadOptions{})
	if err != nil || len(now) != 1 || len(now[0].Expired) != 1 {
		t.Errorf("today: %+v %v", now, err)
	}
	then, err := st.Leases(ctx, "", aiwgstate.ReadOptions{At: "HEAD"})
	if err != nil || len(then) != 1 || len(then[0].Expired) != 0 {
		t.Errorf("at the commit: %+v %v", then, err)
	}
}
