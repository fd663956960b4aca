package lease

import (
	"fmt"
	"time"
)

// Foreign lists what a write of a record does to other agents' leases and
// waits: what only their holder (or a lease administrator, by a forced
// release) may do. before holds the record as it was on each parent of
// the commit (one for a plain commit; a nil record is an empty one), next
// the record written (nil when the file was removed), writer the agent of
// the commit, and now the time by which a lease or wait counts as run out
// (anyone may remove what ran out).
//
// A lease or wait of another agent that every parent holds, live, must be
// kept as one parent has it: removing it is a forced release, changing it
// (its expiry, its holder) one in disguise. And a lease or wait of another
// agent that next holds must be as a parent holds it: a writer never
// grants or renews for someone else. For a merge, what one side changed
// and the other did not is that side's doing, not the merger's.
func Foreign(writer string, before []*Record, next *Record, now time.Time) []string {
	if next == nil {
		next = &Record{}
	}
	if len(before) == 0 {
		before = []*Record{nil}
	}
	var out []string
	resource := next.Resource
	for _, r := range before {
		if resource == "" && r != nil {
			resource = r.Resource
		}
	}
	first := before[0]
	if first == nil {
		first = &Record{}
	}
	// Others' live leases and waits every parent holds are kept.
	for _, l := range first.Locks {
		if l.Holder == writer || l.Expired(now) || !inAll(before, func(r *Record) bool { return hasLease(r, l.ID, l.Holder) }) {
			continue
		}
		if !hasLease(next, l.ID, l.Holder) {
			out = append(out, fmt.Sprintf("removes %s's lease %s on %s", l.Holder, l.ID, resource))
		}
	}
	for _, q := range first.WaitQueue {
		if q.Requester == writer || q.expired(now) || !inAll(before, func(r *Record) bool { return hasRequest(r, q.ID, q.Requester) }) {
			continue
		}
		if !hasRequest(next, q.ID, q.Requester) {
			out = append(out, fmt.Sprintf("withdraws %s's wait %s for %s", q.Requester, q.ID, resource))
		}
	}
	// Others' leases and waits next holds are as a parent has them.
	for _, l := range next.Locks {
		if l.Holder == writer || inAny(before, func(r *Record) bool { return sameLease(r, l) }) {
			continue
		}
		out = append(out, fmt.Sprintf("writes %s's lease %s on %s, which only %s may take or renew", l.Holder, l.ID, resource, l.Holder))
	}
	for _, q := range next.WaitQueue {
		if q.Requester == writer || inAny(before, func(r *Record) bool { return sameRequest(r, q) }) {
			continue
		}
		out = append(out, fmt.Sprintf("writes %s's wait %s for %s, which only %s may queue", q.Requester, q.ID, resource, q.Requester))
	}
	return out
}

func inAll(rs []*Record, f func(*Record) bool) bool {
	for _, r := range rs {
		if !f(r) {
			return false
		}
	}
	return true
}

func inAny(rs []*Record, f func(*Record) bool) bool {
	for _, r := range rs {
		if f(r) {
			return true
		}
	}
	return false
}

func hasLease(r *Record, id, holder string) bool {
	if r == nil {
		return false
	}
	for _, l := range r.Locks {
		if l.ID == id && l.Holder == holder {
			return true
		}
	}
	return false
}

func hasRequest(r *Record, id, requester string) bool {
	if r == nil {
		return false
	}
	for _, q := range r.WaitQueue {
		if q.ID == id && q.Requester == requester {
			return true
		}
	}
	return false
}

func sameLease(r *Record, l Lease) bool {
	if r == nil {
		return false
	}
	for _, o := range r.Locks {
		if o.ID == l.ID && o.Holder == l.Holder && o.Type == l.Type && o.TTL == l.TTL && o.RenewCount == l.RenewCount &&
			o.AcquiredAt.Equal(l.AcquiredAt) && o.ExpiresAt.Equal(l.ExpiresAt) {
			return true
		}
	}
	return false
}

func sameRequest(r *Record, q Request) bool {
	if r == nil {
		return false
	}
	for _, o := range r.WaitQueue {
		if o.ID == q.ID && o.Requester == q.Requester && o.Type == q.Type && o.Timeout == q.Timeout &&
			o.Priority == q.Priority && o.RequestedAt.Equal(q.RequestedAt) {
			return true
		}
	}
	return false
}
