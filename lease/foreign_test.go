package lease

import (
	"strings"
	"testing"
	"time"
)

func TestForeign(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	alice := Lease{ID: "lease-a", Type: Exclusive, Holder: "alice", AcquiredAt: t0, ExpiresAt: t0.Add(time.Hour), TTL: 3600000}
	gone := Lease{ID: "lease-old", Type: Exclusive, Holder: "alice", AcquiredAt: t0, ExpiresAt: t0.Add(time.Second), TTL: 1000}
	wait := Request{ID: "req-b", Type: Exclusive, Requester: "carol", RequestedAt: t0, Timeout: 3600000, Priority: "normal"}
	rec := func(ls []Lease, qs ...Request) *Record {
		return &Record{Resource: "r", Locks: ls, WaitQueue: qs}
	}
	renewed := alice
	renewed.ExpiresAt, renewed.RenewCount = now.Add(time.Hour), 1
	shortened := alice
	shortened.ExpiresAt = t0
	stolen := alice
	stolen.Holder = "mallory"
	bobs := Lease{ID: "lease-b", Type: Shared, Holder: "bob", AcquiredAt: now, ExpiresAt: now.Add(time.Hour), TTL: 3600000}
	for _, tc := range []struct {
		name   string
		writer string
		before []*Record
		next   *Record
		want   string // "" = nothing foreign
	}{
		{"holder releases", "alice", []*Record{rec([]Lease{alice})}, nil, ""},
		{"holder renews", "alice", []*Record{rec([]Lease{alice})}, rec([]Lease{renewed}), ""},
		{"another releases", "mallory", []*Record{rec([]Lease{alice})}, nil, "removes alice's lease lease-a"},
		{"another empties the record", "mallory", []*Record{rec([]Lease{alice})}, rec(nil), "removes alice's lease lease-a"},
		{"another shortens", "mallory", []*Record{rec([]Lease{alice})}, rec([]Lease{shortened}), "writes alice's lease lease-a"},
		{"another takes it over", "mallory", []*Record{rec([]Lease{alice})}, rec([]Lease{stolen}), "removes alice's lease lease-a"},
		{"another prunes what ran out", "bob", []*Record{rec([]Lease{gone})}, rec([]Lease{bobs}), ""},
		{"another shares beside", "bob", []*Record{rec([]Lease{alice})}, rec([]Lease{alice, bobs}), ""},
		{"another forges one", "mallory", []*Record{nil}, rec([]Lease{alice}), "writes alice's lease lease-a"},
		{"another withdraws a wait", "mallory", []*Record{rec(nil, wait)}, rec(nil), "withdraws carol's wait req-b"},
		{"the waiter withdraws", "carol", []*Record{rec(nil, wait)}, nil, ""},
		// A merge: alice's lease is on one side only, and the merged
		// record keeps or drops it as that side's doing.
		{"merge brings a lease", "conductor", []*Record{rec(nil), rec([]Lease{alice})}, rec([]Lease{alice}), ""},
		{"merge keeps a release", "conductor", []*Record{rec([]Lease{alice}), rec(nil)}, rec(nil), ""},
		{"merge drops a lease both sides hold", "conductor", []*Record{rec([]Lease{alice}), rec([]Lease{alice})}, rec(nil), "removes alice's lease"},
		{"merge takes a renewal", "conductor", []*Record{rec([]Lease{alice}), rec([]Lease{renewed})}, rec([]Lease{renewed}), ""},
	} {
		got := Foreign(tc.writer, tc.before, tc.next, now)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want nothing", tc.name, got)
		case tc.want != "" && (len(got) == 0 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
