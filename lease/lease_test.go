package lease

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func req(who string, typ Type, prio string, at time.Duration) Request {
	return Request{ID: "req-" + who, Type: typ, Requester: who, RequestedAt: t0.Add(at), Timeout: 60_000, Priority: prio}
}

// TestAcquire: who gets a resource, given who holds it and who waits.
func TestAcquire(t *testing.T) {
	held := func(who string, typ Type, until time.Duration) Lease {
		return Lease{ID: "lease-" + who, Type: typ, Holder: who, AcquiredAt: t0, ExpiresAt: t0.Add(until), TTL: until.Milliseconds()}
	}
	tests := []struct {
		name    string
		locks   []Lease
		queue   []Request
		req     Request
		renew   string
		at      time.Duration
		want    error
		change  string
		holders int
	}{
		{name: "free", req: req("a", Exclusive, "normal", 0), change: "acquire", holders: 1},
		{name: "exclusive held", locks: []Lease{held("b", Exclusive, time.Minute)}, req: req("a", Exclusive, "normal", 0), want: ErrHeld},
		{name: "shared under exclusive", locks: []Lease{held("b", Exclusive, time.Minute)}, req: req("a", Shared, "normal", 0), want: ErrHeld},
		{name: "exclusive under shared", locks: []Lease{held("b", Shared, time.Minute)}, req: req("a", Exclusive, "normal", 0), want: ErrHeld},
		{name: "shared with shared", locks: []Lease{held("b", Shared, time.Minute)}, req: req("a", Shared, "normal", 0), change: "acquire", holders: 2},
		{name: "expired holder", locks: []Lease{held("b", Exclusive, time.Second)}, req: req("a", Exclusive, "normal", time.Second), at: time.Second, change: "acquire", holders: 1},
		{name: "the holder, not naming its lease, is excluded", locks: []Lease{held("a", Exclusive, time.Minute)}, req: req("a", Exclusive, "normal", 0), want: ErrHeld},
		{name: "the holder shares with itself", locks: []Lease{held("a", Shared, time.Minute)}, req: req("a", Shared, "normal", 0), change: "acquire", holders: 2},
		{name: "the holder renews", locks: []Lease{held("a", Exclusive, time.Minute)}, req: req("a", Exclusive, "normal", 0), renew: "lease-a", change: "renew", holders: 1},
		{name: "another's lease is not renewed", locks: []Lease{held("b", Exclusive, time.Minute)}, req: req("a", Exclusive, "normal", 0), renew: "lease-b", want: ErrNotHolder},
		{name: "sole shared upgrades", locks: []Lease{held("a", Shared, time.Minute)}, req: req("a", Exclusive, "normal", 0), renew: "lease-a", change: "upgrade", holders: 1},
		{name: "shared cannot upgrade beside another", locks: []Lease{held("a", Shared, time.Minute), held("b", Shared, time.Minute)}, req: req("a", Exclusive, "normal", 0), renew: "lease-a", want: ErrHeld},
		{name: "two upgraders deadlock", locks: []Lease{held("a", Shared, time.Minute), held("b", Shared, time.Minute)}, queue: []Request{req("b", Exclusive, "normal", -time.Second)}, req: req("a", Exclusive, "normal", 0), renew: "lease-a", want: ErrDeadlock},
		{name: "exclusive downgrades", locks: []Lease{held("a", Exclusive, time.Minute)}, req: req("a", Shared, "normal", 0), renew: "lease-a", change: "downgrade", holders: 1},
		{name: "an earlier waiter goes first", queue: []Request{req("b", Exclusive, "normal", -time.Second)}, req: req("a", Exclusive, "normal", 0), want: ErrHeld},
		{name: "a higher priority jumps the queue", queue: []Request{req("b", Exclusive, "normal", -time.Second)}, req: req("a", Exclusive, "critical", 0), change: "acquire", holders: 1},
		{name: "a lower priority waits", queue: []Request{req("b", Exclusive, "low", -time.Second)}, req: req("a", Exclusive, "normal", 0), change: "acquire", holders: 1},
		{name: "the first waiter is served", queue: []Request{req("a", Exclusive, "normal", -time.Second), req("b", Exclusive, "normal", 0)}, req: req("a", Exclusive, "normal", -time.Second), change: "acquire", holders: 1},
		{name: "a shared reader waits behind a writer", locks: []Lease{held("c", Shared, time.Minute)}, queue: []Request{req("b", Exclusive, "normal", -time.Second)}, req: req("a", Shared, "normal", 0), want: ErrHeld},
		{name: "a timed-out waiter is skipped", queue: []Request{{ID: "r", Type: Exclusive, Requester: "b", RequestedAt: t0, Timeout: 1000, Priority: "normal"}}, req: req("a", Exclusive, "normal", 2*time.Second), at: 2 * time.Second, change: "acquire", holders: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Record{Resource: "x", Locks: append([]Lease(nil), tt.locks...), WaitQueue: append([]Request(nil), tt.queue...)}
			g, err := r.Acquire(tt.req, tt.renew, "lease-new", time.Minute, t0.Add(tt.at))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if err != nil {
				if len(r.Locks) > len(tt.locks) {
					t.Errorf("a refused request added a holder: %+v", r.Locks)
				}
				return
			}
			if g.Change != tt.change || len(r.Locks) != tt.holders {
				t.Errorf("%s with %d holders, want %s with %d", g.Change, len(r.Locks), tt.change, tt.holders)
			}
			if g.Lease.Holder != "a" || g.Lease.Type != tt.req.Type || !g.Lease.ExpiresAt.Equal(t0.Add(tt.at).Add(time.Minute)) {
				t.Errorf("granted %+v", g.Lease)
			}
			if r.Queued("a") {
				t.Error("the granted agent still waits")
			}
		})
	}
}

// TestRenewKeepsItsTTL: a renewal that names no time to live keeps the
// lease's own, from now.
func TestRenewKeepsItsTTL(t *testing.T) {
	r := &Record{Resource: "x"}
	if _, err := r.Acquire(req("a", Shared, "normal", 0), "", "lease-a", 5*time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	g, err := r.Acquire(req("a", Exclusive, "normal", 0), "lease-a", "", 0, t0.Add(time.Minute))
	if err != nil || g.Change != "upgrade" || g.Lease.TTL != 300_000 || !g.Lease.ExpiresAt.Equal(t0.Add(6*time.Minute)) {
		t.Errorf("upgrade without a ttl: %+v %v", g, err)
	}
	if _, err := r.Acquire(req("b", Exclusive, "normal", 0), "", "lease-b", 0, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a new lease without a ttl: %v", err)
	}
}

// TestQueueOrder: requests are served by priority, then arrival, and an
// agent asking again keeps its place.
func TestQueueOrder(t *testing.T) {
	r := &Record{Resource: "x"}
	r.Enqueue(req("low", Exclusive, "low", 0))
	r.Enqueue(req("n1", Exclusive, "normal", 1*time.Second))
	r.Enqueue(req("crit", Exclusive, "critical", 2*time.Second))
	r.Enqueue(req("n2", Exclusive, "normal", 3*time.Second))
	r.Enqueue(req("n1", Exclusive, "normal", 4*time.Second)) // again: keeps its place, waits longer
	var got []string
	for _, q := range r.WaitQueue {
		got = append(got, q.Requester)
	}
	if want := []string{"crit", "n1", "n2", "low"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("queue %v, want %v", got, want)
	}
	if q := r.WaitQueue[1]; !q.RequestedAt.Equal(t0.Add(time.Second)) || q.Timeout != 63_000 {
		t.Errorf("n1 asked again: %+v, want its first arrival, timing out 60s after the second", q)
	}
	if !r.Dequeue("req-n2") || r.Dequeue("req-n2") || len(r.WaitQueue) != 3 {
		t.Errorf("dequeue: %+v", r.WaitQueue)
	}
}

// TestRenewAndRelease: only the holder renews or releases, unless forced;
// a waiter withdraws its own request, and a forced release clears waits.
func TestRenewAndRelease(t *testing.T) {
	r := &Record{Resource: "x"}
	if _, err := r.Acquire(req("a", Shared, "normal", 0), "", "lease-a", time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Acquire(req("b", Shared, "normal", 0), "", "lease-b", time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	l, err := r.Renew("a", "", time.Hour, t0.Add(time.Second))
	if err != nil || l.RenewCount != 1 || !l.ExpiresAt.Equal(t0.Add(time.Second+time.Hour)) {
		t.Fatalf("renew: %+v %v", l, err)
	}
	if _, err := r.Renew("a", "lease-b", time.Hour, t0); !errors.Is(err, ErrNotHolder) {
		t.Errorf("renewing another's lease: %v", err)
	}
	if _, _, err := r.Release("a", "lease-b", false, t0); !errors.Is(err, ErrNotHolder) {
		t.Errorf("releasing another's lease: %v", err)
	}
	if _, err := r.Renew("b", "", time.Hour, t0.Add(2*time.Minute)); !errors.Is(err, ErrNotHolder) {
		t.Errorf("renewing an expired lease: %v", err)
	}
	if _, err := r.Acquire(req("a", Shared, "normal", 0), "", "lease-a2", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Release("a", "", false, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("releasing one of two leases without naming it: %v", err)
	}
	if got, _, err := r.Release("c", "lease-a", true, t0); err != nil || len(got) != 1 || got[0].Holder != "a" {
		t.Errorf("forced release: %+v %v", got, err)
	}
	// A waiter withdraws its own request; another's needs force.
	r.Enqueue(req("w", Exclusive, "normal", 0))
	r.Enqueue(req("v", Exclusive, "normal", time.Second))
	if _, qs, err := r.Release("w", "", false, t0); err != nil || len(qs) != 1 || qs[0].Requester != "w" {
		t.Errorf("withdrawing a wait: %+v %v", qs, err)
	}
	if _, _, err := r.Release("w", "req-v", false, t0); !errors.Is(err, ErrNotHolder) {
		t.Errorf("withdrawing another's wait: %v", err)
	}
	if ls, qs, err := r.Release("c", "", true, t0); err != nil || len(ls) != 1 || len(qs) != 1 || !r.Empty() {
		t.Errorf("forcing all: %+v %+v %v, left %+v", ls, qs, err, r)
	}
	if _, _, err := r.Release("c", "", true, t0); !errors.Is(err, ErrNotHolder) {
		t.Errorf("forcing a free resource: %v", err)
	}
}

// TestDecode: a record reads back as written; a record of another
// resource, or not JSON, is refused.
func TestDecode(t *testing.T) {
	r := &Record{Resource: "tasks/t-1"}
	if _, err := r.Acquire(req("a", Exclusive, "normal", 0), "", "lease-a", time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	r.Enqueue(req("b", Shared, "high", 0))
	b, _ := json.Marshal(r)
	back, err := Decode("tasks/t-1", b)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("decoded %+v %v, want %+v", back, err, r)
	}
	if _, err := Decode("tasks/t-2", b); !errors.Is(err, ErrInvalid) {
		t.Errorf("another resource's record: %v", err)
	}
	if _, err := Decode("x", []byte("{")); !errors.Is(err, ErrInvalid) {
		t.Errorf("not JSON: %v", err)
	}
	if r, err := Decode("x", nil); err != nil || !r.Empty() {
		t.Errorf("no file: %+v %v", r, err)
	}
}

// FuzzDecode: any bytes decode to an error or to a record that encodes
// and decodes to itself, and on which every decision runs without
// panicking.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"resource":"x","locks":[{"id":"l","type":"exclusive","holder":"a","acquiredAt":"2026-11-24T12:00:00Z","expiresAt":"2026-11-24T12:01:00Z","ttl":60000,"renewCount":0}]}`))
	f.Add([]byte(`{"resource":"x","locks":[],"waitQueue":[{"id":"r","type":"shared","requester":"b","requestedAt":"2026-11-24T12:00:00Z","timeout":5,"priority":"bogus"}]}`))
	f.Add([]byte(`{"resource":"x","locks":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode("x", data)
		if err != nil {
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode("x", b)
		if err != nil {
			t.Fatalf("a decoded record does not decode again: %v\n%s", err, b)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		// Writing a record back as it was touches nobody's lease.
		if got := Foreign("z", []*Record{r}, nil, back, t0); len(got) > 0 {
			t.Fatalf("an unchanged record: %q", got)
		}
		r.Acquire(req("a", Exclusive, "normal", 0), "", "lease-a", time.Minute, t0)
		r.Renew("a", "", time.Minute, t0)
		r.Enqueue(req("b", Shared, "high", 0))
		r.Release("c", "", true, t0)
		Foreign("c", []*Record{back, nil}, []*Record{back}, r, t0)
	})
}
