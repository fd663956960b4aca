package lease

import (
	"fmt"
	"time"
)

// Foreign lists what a write of a record does to other agents' leases and
// waits: what only their holder (or a lease administrator, by a forced
// release) may do. before holds the record as it was on each parent of
// the commit (one for a plain commit; a nil record is an empty one),
// bases the record on each merge base of a merge's parents (none for a
// plain commit; a nil record where the parents share no history), next
// the record written (nil when the file was removed), writer the agent of
// the commit, and now the time by which a lease or wait counts as run out
// (anyone may remove what ran out).
//
// A plain commit keeps another agent's live lease or wait its parent
// holds as it is (removing it is a forced release, changing its expiry or
// holder one in disguise), and writes no lease or wait of another agent
// that its parent does not hold so (a writer never grants or renews for
// someone else).
//
// A merge is judged as a three-way merge of the record would come out:
// what a parent changed since the merge base is that parent's doing, the
// rest is the merger's. Another agent's live lease or wait that a parent
// holds stays, unless another parent released it since the base; a lease
// or wait of another agent that the merge holds is one a parent added
// since the base, or one every parent still holds. So a merge with an
// older commit neither drops a lease taken since (the older side did not
// release it, it never had it) nor brings back one released since (the
// base had it, a parent dropped it).
func Foreign(writer string, before, bases []*Record, next *Record, now time.Time) []string {
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
	// Others' live leases and waits a parent holds are kept, unless
	// another parent released them since the merge base.
	seen := map[string]bool{}
	for _, r := range before {
		if r == nil {
			continue
		}
		for _, l := range r.Locks {
			if l.Holder == writer || l.Expired(now) || seen["l "+l.Holder+" "+l.ID] {
				continue
			}
			seen["l "+l.Holder+" "+l.ID] = true
			held := func(r *Record) bool { return hasLease(r, l.ID, l.Holder) }
			if released(before, bases, held) {
				continue
			}
			if !hasLease(next, l.ID, l.Holder) {
				out = append(out, fmt.Sprintf("removes %s's lease %s on %s", l.Holder, l.ID, resource))
			}
		}
		for _, q := range r.WaitQueue {
			if q.Requester == writer || q.expired(now) || seen["q "+q.Requester+" "+q.ID] {
				continue
			}
			seen["q "+q.Requester+" "+q.ID] = true
			held := func(r *Record) bool { return hasRequest(r, q.ID, q.Requester) }
			if released(before, bases, held) {
				continue
			}
			if !hasRequest(next, q.ID, q.Requester) {
				out = append(out, fmt.Sprintf("withdraws %s's wait %s for %s", q.Requester, q.ID, resource))
			}
		}
	}
	// Others' leases and waits next holds are as a parent has them, by
	// that parent's doing.
	for _, l := range next.Locks {
		if l.Holder == writer || merged(before, bases, func(r *Record) bool { return sameLease(r, l) }) {
			continue
		}
		out = append(out, fmt.Sprintf("writes %s's lease %s on %s, which only %s may take or renew", l.Holder, l.ID, resource, l.Holder))
	}
	for _, q := range next.WaitQueue {
		if q.Requester == writer || merged(before, bases, func(r *Record) bool { return sameRequest(r, q) }) {
			continue
		}
		out = append(out, fmt.Sprintf("writes %s's wait %s for %s, which only %s may queue", q.Requester, q.ID, resource, q.Requester))
	}
	return out
}

// released says whether a parent dropped, since a merge base, what held
// finds: a base holds it and a parent does not. A plain commit has no
// bases: nothing was released before it.
func released(parents, bases []*Record, held func(*Record) bool) bool {
	return inAny(bases, held) && !inAll(parents, held)
}

// merged says whether a three-way merge keeps what same finds: a parent
// has it and no merge base did (that parent added it), or every parent
// has it. A plain commit keeps what its parent has.
func merged(parents, bases []*Record, same func(*Record) bool) bool {
	if inAll(parents, same) {
		return true
	}
	return len(parents) > 1 && inAny(parents, same) && !inAny(bases, same)
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
