package lease_test

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
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/store"
)

// TestLeaseExcludesAcrossStores: agents with stores of their own (as
// separate processes have) take turns on one exclusive lease, waiting in
// the queue: never two inside at once, every turn served, and the history
// of the resource's file is every acquire and release, one commit each.
func TestLeaseExcludesAcrossStores(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	const agents, turns = 5, 3
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			s, err := aiwgstate.Open(ctx, st.Dir(), store.Options{NoSync: true})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			wo := store.WriteOptions{Agent: fmt.Sprintf("agent-%d", a)}
			for i := 0; i < turns; i++ {
				res, err := s.Leases().Acquire(ctx, "tasks/t-1", lease.Options{TTL: time.Minute, Wait: time.Minute, Poll: time.Millisecond}, wo)
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
				if _, err := s.Leases().Release(ctx, "tasks/t-1", lease.ReleaseOptions{}, wo); err != nil {
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
	storetest.Fsck(t, st)
	ops := map[string]int{}
	for _, l := range strings.Fields(storetest.Git(t, st, "log", "--format=%(trailers:key=Lease,valueonly)", "--", "leases/tasks/t-1.json")) {
		ops[l]++
	}
	if ops["acquire"] != agents*turns || ops["release"] != agents*turns {
		t.Errorf("the file's history has %v, want %d acquires and releases", ops, agents*turns)
	}
	if out := storetest.Git(t, st, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, "leases/") {
		t.Errorf("a resource nobody holds or waits for keeps its file:\n%s", out)
	}
}

// TestLeaseExpires: a lease that ran out is taken by the next agent, whose
// commit names the expired one; its holder can then neither renew nor
// release it.
func TestLeaseExpires(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	t0 := time.Now().Add(time.Hour).Truncate(time.Second)
	at := func(agent string, d time.Duration) store.WriteOptions {
		return store.WriteOptions{Agent: agent, Time: t0.Add(d)}
	}
	a, err := st.Leases().Acquire(ctx, "global.config", lease.Options{TTL: time.Second}, at("pulse", 0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Leases().Acquire(ctx, "global.config", lease.Options{TTL: time.Second}, at("beat", 999*time.Millisecond))
	if !errors.Is(err, lease.ErrHeld) || !strings.Contains(err.Error(), "pulse holds global.config") {
		t.Fatalf("acquire of a held lease: %v", err)
	}
	b, err := st.Leases().Acquire(ctx, "global.config", lease.Options{TTL: time.Second, Type: lease.Shared}, at("beat", time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Lease-Expired,valueonly)"); strings.TrimSpace(got) != a.Lease.ID {
		t.Errorf("Lease-Expired %q, want %s", got, a.Lease.ID)
	}
	if _, err := st.Leases().Renew(ctx, "global.config", "", time.Minute, at("pulse", time.Second)); !errors.Is(err, lease.ErrNotHolder) {
		t.Errorf("renew of an expired lease: %v", err)
	}
	if _, err := st.Leases().Release(ctx, "global.config", lease.ReleaseOptions{}, at("pulse", time.Second)); !errors.Is(err, lease.ErrNotHolder) {
		t.Errorf("release of an expired lease: %v", err)
	}
	// A shared lease is shared; a forced release takes them all, with the
	// reason in the commit.
	if _, err := st.Leases().Acquire(ctx, "global.config", lease.Options{TTL: time.Minute, Type: lease.Shared}, at("pulse", time.Second)); err != nil {
		t.Fatal(err)
	}
	infos, err := st.Leases().List(ctx, "", store.ReadOptions{})
	if err != nil || len(infos) != 1 || len(infos[0].Locks) != 2 {
		t.Fatalf("leases: %+v %v", infos, err)
	}
	rel, err := st.Leases().Release(ctx, "global.config", lease.ReleaseOptions{Force: true, Reason: "rebalancing"}, at("conductor", 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := rel.Leases; len(got) != 1 || got[0].Holder != "pulse" {
		// beat's shared lease ran out at 2s: only pulse's was live.
		t.Fatalf("forced release: %+v (beat's ran out at %s)", got, b.Lease.ExpiresAt)
	}
	if r := storetest.Git(t, st, "log", "-1", "--format=%an %(trailers:key=Reason,valueonly)"); strings.TrimSpace(r) != "conductor rebalancing" {
		t.Errorf("forced release commit: %q", r)
	}
	storetest.Fsck(t, st)
}

// TestLeaseWaitGivesUp: a waiter whose wait runs out fails as held, and
// leaves the queue, so that it does not hold up the agents behind it.
func TestLeaseWaitGivesUp(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute, Wait: 150 * time.Millisecond, Poll: 10 * time.Millisecond}, store.WriteOptions{Agent: "b"})
	if !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("wait on a held lease: %v", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("gave up after %s of a 150ms wait", waited)
	}
	infos, err := st.Leases().List(ctx, "r", store.ReadOptions{})
	if err != nil || len(infos) != 1 || len(infos[0].WaitQueue) != 0 {
		t.Fatalf("after giving up: %+v %v", infos, err)
	}
	ops := strings.Fields(storetest.Git(t, st, "log", "--format=%(trailers:key=Lease,valueonly)"))
	if strings.Join(ops, " ") != "give-up wait acquire" {
		t.Errorf("lease commits %v", ops)
	}
}

// TestLeaseRefusesBadRequests: bad names and options change nothing.
func TestLeaseRefusesBadRequests(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	head := storetest.Git(t, st, "rev-parse", "HEAD")
	for _, tc := range []struct {
		resource string
		lo       lease.Options
	}{
		{"../x", lease.Options{TTL: time.Second}},
		{"", lease.Options{TTL: time.Second}},
		{"x/", lease.Options{TTL: time.Second}},
		{"x", lease.Options{}},
		{"x", lease.Options{TTL: time.Second, Type: "rw"}},
		{"x", lease.Options{TTL: time.Second, Priority: "urgent"}},
		{"x", lease.Options{TTL: time.Second, Wait: -time.Second}},
		{"x", lease.Options{TTL: time.Microsecond}},
		{"x.json", lease.Options{TTL: time.Second}},
		{"a.json/b", lease.Options{TTL: time.Second}},
	} {
		if _, err := st.Leases().Acquire(ctx, tc.resource, tc.lo, store.WriteOptions{Agent: "a"}); err == nil {
			t.Errorf("acquire %q %+v: no error", tc.resource, tc.lo)
		}
	}
	if _, err := st.Leases().Release(ctx, "x", lease.ReleaseOptions{Reason: "why"}, store.WriteOptions{}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("a reason without force: %v", err)
	}
	if got := storetest.Git(t, st, "rev-parse", "HEAD"); got != head {
		t.Error("a refused request made a commit")
	}
}

// TestLeaseSameAgentProcessesExclude: processes of one agent (stores of
// their own, one agent name) are excluded from each other as any two
// agents are.
func TestLeaseSameAgentProcessesExclude(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	const procs = 4
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := aiwgstate.Open(ctx, st.Dir(), store.Options{NoSync: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			wo := store.WriteOptions{Agent: "worker"}
			res, err := s.Leases().Acquire(ctx, "job", lease.Options{TTL: time.Minute, Wait: time.Minute, Poll: time.Millisecond}, wo)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			inside.Add(-1)
			if _, err := s.Leases().Release(ctx, "job", lease.ReleaseOptions{ID: res.Lease.ID}, wo); err != nil {
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
	st := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute, Wait: time.Hour, Poll: time.Millisecond}, store.WriteOptions{Agent: "b"})
		done <- err
	}()
	var q []lease.Request
	for deadline := time.Now().Add(10 * time.Second); len(q) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if infos, err := st.Leases().List(ctx, "r", store.ReadOptions{}); err == nil && len(infos) == 1 {
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
	if infos, _ := st.Leases().List(context.Background(), "r", store.ReadOptions{}); len(infos[0].WaitQueue) != 0 {
		t.Errorf("an interrupted waiter stays queued: %+v", infos[0].WaitQueue)
	}
}

// TestLeaseUpgradeDeadlockFailsAtOnce: two shared holders both asking to
// upgrade could never be served; the second is refused at once.
func TestLeaseUpgradeDeadlockFailsAtOnce(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	shared := lease.Options{TTL: time.Minute, Type: lease.Shared}
	la, err := st.Leases().Acquire(ctx, "doc", shared, store.WriteOptions{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := st.Leases().Acquire(ctx, "doc", shared, store.WriteOptions{Agent: "b"})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := st.Leases().Acquire(ctx, "doc", lease.Options{TTL: time.Minute, ID: la.Lease.ID, Wait: time.Minute, Poll: time.Millisecond}, store.WriteOptions{Agent: "a"})
		waiting <- err
	}()
	waitUntil(t, func() bool { return len(waitQueue(t, st, "doc")) == 1 })
	// Refused as a deadlock, not as held after its minute of waiting.
	_, err = st.Leases().Acquire(ctx, "doc", lease.Options{TTL: time.Minute, ID: lb.Lease.ID, Wait: time.Minute}, store.WriteOptions{Agent: "b"})
	if !errors.Is(err, lease.ErrDeadlock) {
		t.Errorf("the second upgrader: %v", err)
	}
	// b gives way: a's upgrade goes through.
	if _, err := st.Leases().Release(ctx, "doc", lease.ReleaseOptions{ID: lb.Lease.ID}, store.WriteOptions{Agent: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Errorf("the first upgrader, once b released: %v", err)
	}
}

// TestLeasesAtARevision: leases read at a revision are judged expired or
// not at that commit's time, not today's.
func TestLeasesAtARevision(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	hourAgo := time.Now().Add(-time.Hour)
	if _, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "a", Time: hourAgo}); err != nil {
		t.Fatal(err)
	}
	now, err := st.Leases().List(ctx, "", store.ReadOptions{})
	if err != nil || len(now) != 1 || len(now[0].Expired) != 1 {
		t.Errorf("today: %+v %v", now, err)
	}
	then, err := st.Leases().List(ctx, "", store.ReadOptions{At: "HEAD"})
	if err != nil || len(then) != 1 || len(then[0].Expired) != 0 {
		t.Errorf("at the commit: %+v %v", then, err)
	}
}

func waitQueue(t *testing.T, st *aiwgstate.Store, res string) []lease.Request {
	infos, err := st.Leases().List(context.Background(), res, store.ReadOptions{})
	if err != nil || len(infos) != 1 {
		t.Fatalf("leases: %v %v", infos, err)
	}
	return infos[0].WaitQueue
}

func waitUntil(t *testing.T, cond func() bool) {
	for d := time.Now().Add(10 * time.Second); time.Now().Before(d); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("timed out")
}

// TestLeaseWaitsArePerProcess: a second process of agent a that gives up
// takes out its own wait only: a's first process keeps its place ahead of
// b, and is served first.
func TestLeaseWaitsArePerProcess(t *testing.T) {
	st := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait() // b, interrupted, takes its wait out before the store goes
	defer cancel()  // b still waits at the end
	x, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "x"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	acq := func(agent string, wait time.Duration) {
		s, err := aiwgstate.Open(ctx, st.Dir(), store.Options{NoSync: true})
		if err != nil {
			t.Error(err)
			return
		}
		defer s.Close()
		res, err := s.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute, Wait: wait, Poll: 5 * time.Millisecond}, store.WriteOptions{Agent: agent})
		if err == nil {
			got <- res.Lease.Holder
		}
	}
	wg.Add(2)
	go func() { defer wg.Done(); acq("a", time.Minute) }() // process 1 of a: first in line
	waitUntil(t, func() bool { return len(waitQueue(t, st, "r")) == 1 })
	go func() { defer wg.Done(); acq("b", time.Minute) }()
	waitUntil(t, func() bool { return len(waitQueue(t, st, "r")) == 2 })
	acq("a", 300*time.Millisecond) // process 2 of a: gives up, and takes its own wait out
	if q := waitQueue(t, st, "r"); len(q) != 2 || q[0].Requester != "a" {
		t.Errorf("after process 2 of a gave up, the queue is %+v: process 1 lost its place", q)
	}
	if _, err := st.Leases().Release(ctx, "r", lease.ReleaseOptions{ID: x.Lease.ID}, store.WriteOptions{Agent: "x"}); err != nil {
		t.Fatal(err)
	}
	if first := <-got; first != "a" {
		t.Errorf("a queued first, but %s was served first; the queue after the give-up was reordered", first)
	}
}

// TestLeaseWithdrawnWaitStaysWithdrawn: a wait a coordinator withdraws
// (release --force --id req-…) is not queued again by its waiter, which
// is told.
func TestLeaseWithdrawnWaitStaysWithdrawn(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "x"})
	done := make(chan error, 1)
	go func() {
		_, err := st.Leases().Acquire(ctx, "r", lease.Options{TTL: time.Minute, Wait: 20 * time.Second, Poll: 5 * time.Millisecond}, store.WriteOptions{Agent: "w"})
		done <- err
	}()
	waitUntil(t, func() bool { return len(waitQueue(t, st, "r")) == 1 })
	id := waitQueue(t, st, "r")[0].ID
	if _, err := st.Leases().Release(ctx, "r", lease.ReleaseOptions{ID: id, Force: true, Reason: "no"}, store.WriteOptions{Agent: "coord"}); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !errors.Is(err, lease.ErrHeld) || !strings.Contains(err.Error(), "withdrawn") {
		t.Errorf("the withdrawn waiter: %v", err)
	}
	if q := waitQueue(t, st, "r"); len(q) != 0 {
		t.Errorf("withdrawn by force, the wait is back: %+v", q)
	}
}

// TestLeaseFailedWaiterLeavesNoRequest: an upgrade waiter whose shared
// lease runs out fails, and takes its queued request with it.
func TestLeaseFailedWaiterLeavesNoRequest(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.Leases().Acquire(ctx, "r", lease.Options{Type: lease.Shared, TTL: 300 * time.Millisecond}, store.WriteOptions{Agent: "a"})
	st.Leases().Acquire(ctx, "r", lease.Options{Type: lease.Shared, TTL: time.Minute}, store.WriteOptions{Agent: "b"})
	_, err := st.Leases().Acquire(ctx, "r", lease.Options{ID: a.Lease.ID, TTL: time.Minute, Wait: 5 * time.Second, Poll: 5 * time.Millisecond}, store.WriteOptions{Agent: "a"})
	if !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("upgrade: %v", err)
	}
	if q := waitQueue(t, st, "r"); len(q) != 0 {
		t.Errorf("the failed waiter's request stays queued: %+v", q)
	}
}

// TestLeaseFileNotARecord: a document where a lease record belongs is
// refused, never read as an empty record and overwritten.
func TestLeaseFileNotARecord(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	// Written through the store: refused.
	_, err := st.Put(ctx, "leases/foo.json", []byte(`{"x":1}`), store.WriteOptions{})
	var re *store.InvalidRecordError
	if !errors.Is(err, store.ErrInvalidRecord) || !errors.As(err, &re) || re.Dir != lease.Dir {
		t.Fatalf("a plain document put where a lease record belongs: %v", err)
	}
	// Written by plain git: read as what it is, never overwritten.
	storetest.Git(t, st, "update-ref", "refs/heads/main", storetest.PlainCommit(t, st, "leases/foo.json", `{"x":1}`))
	if _, err := st.Leases().List(ctx, "", store.ReadOptions{}); !errors.Is(err, store.ErrInvalidRecord) {
		t.Errorf("Leases over a non-record: %v", err)
	}
	if _, err := st.Leases().Acquire(ctx, "foo", lease.Options{TTL: time.Minute}, store.WriteOptions{}); !errors.Is(err, store.ErrInvalidRecord) {
		t.Errorf("Acquire over a non-record overwrote it: %v", err)
	}
}

// TestForeignForceReleaseIsDenied: with a policy, forcing another agent's
// lease is for the holder and the lease_admin role; no commit is written
// for anyone else, by Release or by a plain write of the lease's file.
func TestForeignForceReleaseIsDenied(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	policy := `{"roles": {"lease_admin": ["conductor"]}, "rules": [{"agents": ["*"], "paths": ["**"]}]}`
	if _, err := st.SetPolicy(ctx, []byte(policy), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	alice := store.WriteOptions{Agent: "alice"}
	got, err := st.Leases().Acquire(ctx, "tasks/t-1", lease.Options{TTL: time.Hour}, alice)
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.Resolve("", "")
	if err != nil {
		t.Fatal(err)
	}
	mallory := store.WriteOptions{Agent: "mallory"}
	_, err = st.Leases().Release(ctx, "tasks/t-1", lease.ReleaseOptions{Force: true, Reason: "mine"}, mallory)
	if !errors.Is(err, store.ErrDenied) || !strings.Contains(err.Error(), `agent "mallory" removes alice's lease `+got.Lease.ID) {
		t.Fatalf("forced release by mallory: %v", err)
	}
	_, err = st.Leases().Release(ctx, "tasks/t-1", lease.ReleaseOptions{ID: got.Lease.ID, Force: true}, mallory)
	if !errors.Is(err, store.ErrDenied) {
		t.Fatalf("forced release by id by mallory: %v", err)
	}
	if _, err := st.Delete(ctx, "leases/tasks/t-1.json", "", mallory); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("deleting alice's lease file: %v", err)
	}
	if now, _ := st.Resolve("", ""); now != head {
		t.Fatalf("a refused release moved the branch: %s -> %s", head, now)
	}
	if _, err := st.Leases().Release(ctx, "tasks/t-1", lease.ReleaseOptions{Force: true, Reason: "alice crashed"}, store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatalf("forced release by the lease_admin: %v", err)
	}
}
