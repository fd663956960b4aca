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
		bases  []*Record // a merge's
		next   *Record
		want   string // "" = nothing foreign
	}{
		{"holder releases", "alice", []*Record{rec([]Lease{alice})}, nil, nil, ""},
		{"holder renews", "alice", []*Record{rec([]Lease{alice})}, nil, rec([]Lease{renewed}), ""},
		{"another releases", "mallory", []*Record{rec([]Lease{alice})}, nil, nil, "removes alice's lease lease-a"},
		{"another empties the record", "mallory", []*Record{rec([]Lease{alice})}, nil, rec(nil), "removes alice's lease lease-a"},
		{"another shortens", "mallory", []*Record{rec([]Lease{alice})}, nil, rec([]Lease{shortened}), "writes alice's lease lease-a"},
		{"another takes it over", "mallory", []*Record{rec([]Lease{alice})}, nil, rec([]Lease{stolen}), "removes alice's lease lease-a"},
		{"another prunes what ran out", "bob", []*Record{rec([]Lease{gone})}, nil, rec([]Lease{bobs}), ""},
		{"another shares beside", "bob", []*Record{rec([]Lease{alice})}, nil, rec([]Lease{alice, bobs}), ""},
		{"another forges one", "mallory", []*Record{nil}, nil, rec([]Lease{alice}), "writes alice's lease lease-a"},
		{"another withdraws a wait", "mallory", []*Record{rec(nil, wait)}, nil, rec(nil), "withdraws carol's wait req-b"},
		{"the waiter withdraws", "carol", []*Record{rec(nil, wait)}, nil, nil, ""},
		// A merge: alice's lease is on one side only, or changed on one
		// side since the merge base; the merged record keeps or drops it
		// as that side's doing.
		{"merge brings a lease", "conductor", []*Record{rec(nil), rec([]Lease{alice})}, []*Record{rec(nil)}, rec([]Lease{alice}), ""},
		{"merge keeps a release", "conductor", []*Record{rec([]Lease{alice}), rec(nil)}, []*Record{rec([]Lease{alice})}, rec(nil), ""},
		{"merge drops a lease both sides hold", "conductor", []*Record{rec([]Lease{alice}), rec([]Lease{alice})}, []*Record{rec([]Lease{alice})}, rec(nil), "removes alice's lease"},
		{"merge takes a renewal", "conductor", []*Record{rec([]Lease{alice}), rec([]Lease{renewed})}, []*Record{rec([]Lease{alice})}, rec([]Lease{renewed}), ""},
		{"merge keeps an untouched lease", "conductor", []*Record{rec([]Lease{alice}), rec([]Lease{alice})}, []*Record{rec([]Lease{alice})}, rec([]Lease{alice}), ""},
		// A merge with an older commit, one that never had the lease: the
		// lease was taken since, and the older side did not release it.
		{"merge with an older commit drops a lease", "mallory", []*Record{rec([]Lease{alice}), rec(nil)}, []*Record{rec(nil)}, rec(nil), "removes alice's lease lease-a"},
		{"merge with unrelated history drops a lease", "mallory", []*Record{rec([]Lease{alice}), nil}, []*Record{nil}, nil, "removes alice's lease lease-a"},
		// A merge with an older commit that had a lease released since:
		// the merge brings it back.
		{"merge brings back a released lease", "mallory", []*Record{rec(nil), rec([]Lease{alice})}, []*Record{rec([]Lease{alice})}, rec([]Lease{alice}), "writes alice's lease lease-a"},
		{"merge drops a renewal", "mallory", []*Record{rec([]Lease{renewed}), rec([]Lease{alice})}, []*Record{rec([]Lease{alice})}, rec([]Lease{alice}), "writes alice's lease lease-a"},
		{"merge drops a wait taken since", "mallory", []*Record{rec(nil, wait), rec(nil)}, []*Record{rec(nil)}, rec(nil), "withdraws carol's wait req-b"},
	} {
		got := Foreign(tc.writer, tc.before, tc.bases, tc.next, now)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want nothing", tc.name, got)
		case tc.want != "" && (len(got) == 0 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
