package lease_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/store"
)

// TestLeaseEvents: a refused acquire, a queued wait, a lease found run
// out and a forced release each record their event in the operation's one
// commit, which log and watch find by type.
func TestLeaseEvents(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	t0 := time.Now().Add(time.Hour).Truncate(time.Second)
	at := func(agent string, d time.Duration) store.WriteOptions {
		return store.WriteOptions{Agent: agent, Time: t0.Add(d)}
	}
	if _, err := st.Leases().Acquire(ctx, "db", lease.Options{TTL: time.Second}, at("pulse", 0)); err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD"))
	_, err := st.Leases().Acquire(ctx, "db", lease.Options{TTL: time.Second}, at("beat", 500*time.Millisecond))
	if !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a held lease: %v", err)
	}
	if n := strings.Count(storetest.Git(t, st, "log", "--format=%H", head+".."), "\n"); n != 1 {
		t.Fatalf("%d commits for a refused acquire", n)
	}
	if got := storetest.Git(t, st, "show", "--stat", "--format=%an %s %(trailers:key=Event,valueonly,separator=)", "HEAD"); !strings.Contains(got, "beat lease contention db lock.contention") || strings.Contains(got, "leases/") {
		t.Errorf("the contention commit:\n%s", got)
	}
	// pulse's lease runs out: the next write to db records it.
	if _, err := st.Leases().Acquire(ctx, "db", lease.Options{TTL: time.Minute}, at("beat", 2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Event,valueonly,separator=)|%(trailers:key=Lease,valueonly,separator=)"); strings.TrimSpace(got) != "lock.expired|acquire" {
		t.Errorf("the acquire after an expiry: %q", got)
	}
	if _, err := st.Leases().Release(ctx, "db", lease.ReleaseOptions{Force: true, Reason: "stuck"}, at("conductor", 3*time.Second)); err != nil {
		t.Fatal(err)
	}
	es, err := st.Events().List(ctx, event.Filter{Types: []string{"lock.*"}}, store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Type+" "+e.Source+">"+e.Target)
	}
	if want := "lock.contention beat> lock.expired beat>pulse lock.force_released conductor>beat"; strings.Join(got, " ") != want {
		t.Errorf("lock events %q, want %q", strings.Join(got, " "), want)
	}
	if !strings.Contains(string(es[2].Payload), `"reason":"stuck"`) {
		t.Errorf("forced release payload %s", es[2].Payload)
	}
	// A wait records its contention in the wait's commit.
	if _, err := st.Leases().Acquire(ctx, "q", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Leases().Acquire(ctx, "q", lease.Options{TTL: time.Minute, Wait: 50 * time.Millisecond, Poll: 10 * time.Millisecond}, store.WriteOptions{Agent: "b"}); !errors.Is(err, lease.ErrHeld) {
		t.Fatal(err)
	}
	n := 0
	err = st.Log(ctx, store.LogOptions{Event: event.TypeLockContention}, func(m *store.Mutation) bool {
		n++
		return true
	})
	if err != nil || n != 2 {
		t.Errorf("log --event lock.contention: %d (%v)", n, err)
	}
	storetest.Fsck(t, st)
}

// TestLeaseEventsOutsideThePolicy: an agent the access policy keeps out
// of events/ still takes, is refused and releases leases: its commits
// carry the lease trailers alone.
func TestLeaseEventsOutsideThePolicy(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	pol := `{"roles": {"admin": ["conductor"]}, "rules": [
  {"roles": ["admin"], "paths": ["**"]},
  {"agents": ["a", "b"], "paths": ["leases/**"]}
]}`
	if _, err := st.SetPolicy(ctx, []byte(pol), store.WriteOptions{Agent: "conductor"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(time.Hour).Truncate(time.Second)
	if _, err := st.Leases().Acquire(ctx, "db", lease.Options{TTL: time.Second}, store.WriteOptions{Agent: "a", Time: t0}); err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD"))
	if _, err := st.Leases().Acquire(ctx, "db", lease.Options{TTL: time.Second}, store.WriteOptions{Agent: "b", Time: t0}); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a held lease: %v", err)
	}
	if now := strings.TrimSpace(storetest.Git(t, st, "rev-parse", "HEAD")); now != head {
		t.Errorf("a refused acquire with no event to write committed %s", now)
	}
	// a's lease ran out: b takes it, the expiry in the Lease-Expired trailer.
	if _, err := st.Leases().Acquire(ctx, "db", lease.Options{TTL: time.Minute}, store.WriteOptions{Agent: "b", Time: t0.Add(2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Git(t, st, "show", "--stat", "--format=%(trailers:key=Lease-Expired,valueonly,separator=)|%(trailers:key=Event,valueonly,separator=)", "HEAD"); !strings.HasPrefix(got, "lease-") || strings.Contains(got, "events/") || strings.Contains(got, "lock.expired") {
		t.Errorf("the acquire after an expiry:\n%s", got)
	}
	storetest.Fsck(t, st)
}
