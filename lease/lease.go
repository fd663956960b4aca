// Package lease is seed 003's lock registry for one resource: who holds
// it (exclusive or shared, each hold with a time to live), who waits for
// it, in what order, and what a request, renewal or release does to that.
// It knows no git: the store keeps a Record as a file and applies these
// decisions inside the transaction that writes it, so that two agents
// deciding at once are ordered by the branch's lock.
package lease

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/aiwg/aiwg-state/internal/errkind"
)

// Type is how a lease is held.
type Type string

const (
	// Exclusive: the only holder.
	Exclusive Type = "exclusive"
	// Shared: any number of shared holders, and no exclusive one.
	Shared Type = "shared"
)

// Priorities of a wait, highest first.
var priorities = []string{"critical", "high", "normal", "low"}

// ParsePriority checks a priority name; "" is normal.
func ParsePriority(p string) (string, error) {
	if p == "" {
		return "normal", nil
	}
	if !slices.Contains(priorities, p) {
		return "", errkind.Errorf(ErrInvalid, "priority %q: want critical, high, normal or low", p)
	}
	return p, nil
}

// ParseType checks a lease type; "" is exclusive.
func ParseType(t string) (Type, error) {
	switch Type(t) {
	case "":
		return Exclusive, nil
	case Exclusive, Shared:
		return Type(t), nil
	}
	return "", errkind.Errorf(ErrInvalid, "lease type %q: want exclusive or shared", t)
}

func rank(p string) int { return slices.Index(priorities, p) }

var (
	// ErrHeld: the resource is held by another agent in a way that
	// excludes the request, or another request waits ahead of it.
	ErrHeld = errors.New("held")
	// ErrNotHolder: a renewal or release by an agent that holds no such
	// lease (it expired, was released, or was never theirs).
	ErrNotHolder = errors.New("not the holder")
	// ErrInvalid: a malformed request or record.
	ErrInvalid = errors.New("invalid lease")
)

// Lease is one hold of a resource (seed 003's Lock). TTL is in
// milliseconds, as the seed has it.
type Lease struct {
	ID         string    `json:"id"`
	Type       Type      `json:"type"`
	Holder     string    `json:"holder"`
	AcquiredAt time.Time `json:"acquiredAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
	TTL        int64     `json:"ttl"`
	RenewCount int       `json:"renewCount"`
}

// Expired reports whether the lease has run out at now.
func (l Lease) Expired(now time.Time) bool { return !now.Before(l.ExpiresAt) }

// Request is a wait for a resource (seed 003's LockRequest); Timeout is
// in milliseconds from RequestedAt, after which the request is dropped.
type Request struct {
	ID          string    `json:"id"`
	Type        Type      `json:"type"`
	Requester   string    `json:"requester"`
	RequestedAt time.Time `json:"requestedAt"`
	Timeout     int64     `json:"timeout"`
	Priority    string    `json:"priority"`
}

func (q Request) expired(now time.Time) bool {
	return !now.Before(q.RequestedAt.Add(time.Duration(q.Timeout) * time.Millisecond))
}

// Record is what the store keeps for one resource: its holds, in the
// order they were granted, and its wait queue, in the order it is served
// (priority, then arrival).
type Record struct {
	Resource  string    `json:"resource"`
	Locks     []Lease   `json:"locks"`
	WaitQueue []Request `json:"waitQueue,omitempty"`
}

// Decode reads a record; a missing file (nil data) is an empty record.
func Decode(resource string, data []byte) (*Record, error) {
	r := &Record{Resource: resource}
	if data == nil {
		return r, nil
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, errkind.Errorf(ErrInvalid, "the record of %s: %v", resource, err)
	}
	if r.Resource != resource {
		return nil, errkind.Errorf(ErrInvalid, "the record of %s names resource %q", resource, r.Resource)
	}
	return r, nil
}

// Empty reports whether nobody holds or waits for the resource: the
// store then removes its file.
func (r *Record) Empty() bool { return len(r.Locks) == 0 && len(r.WaitQueue) == 0 }

// Prune drops the leases that have run out and the requests that timed
// out at now, and returns them.
func (r *Record) Prune(now time.Time) (expired []Lease, dropped []Request) {
	r.Locks = slices.DeleteFunc(r.Locks, func(l Lease) bool {
		if l.Expired(now) {
			expired = append(expired, l)
			return true
		}
		return false
	})
	r.WaitQueue = slices.DeleteFunc(r.WaitQueue, func(q Request) bool {
		if q.expired(now) {
			dropped = append(dropped, q)
			return true
		}
		return false
	})
	return expired, dropped
}

// Held is the live lease of holder, if any.
func (r *Record) Held(holder string) (Lease, bool) {
	for _, l := range r.Locks {
		if l.Holder == holder {
			return l, true
		}
	}
	return Lease{}, false
}

// Grant is what Acquire did.
type Grant struct {
	Lease Lease
	// Renewed: the requester already held the resource; its lease now
	// has the requested type and a fresh time to live.
	Renewed bool
}

// Acquire grants req (pruned first): when no other holder's lease
// conflicts with its type, and no waiting request of another agent is
// served before it. An agent's own waiting request is removed when it is
// granted. A requester that holds the resource already renews its lease,
// with the requested type: a sole shared holder upgrades to exclusive,
// an exclusive holder downgrades to shared. ttl must be positive.
func (r *Record) Acquire(req Request, id string, ttl time.Duration, now time.Time) (Grant, error) {
	if ttl <= 0 {
		return Grant{}, errkind.Errorf(ErrInvalid, "a lease needs a positive time to live")
	}
	if req.Type != Exclusive && req.Type != Shared {
		return Grant{}, errkind.Errorf(ErrInvalid, "lease type %q", req.Type)
	}
	r.Prune(now)
	for _, l := range r.Locks {
		if l.Holder != req.Requester && (req.Type == Exclusive || l.Type == Exclusive) {
			return Grant{}, errkind.Errorf(ErrHeld, "%s holds %s (%s) until %s", l.Holder, r.Resource, l.Type, l.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	mine, renewing := r.Held(req.Requester)
	if !renewing {
		if ahead, ok := r.ahead(req); ok {
			return Grant{}, errkind.Errorf(ErrHeld, "%s waits for %s first (%s priority)", ahead.Requester, r.Resource, ahead.Priority)
		}
	}
	r.WaitQueue = slices.DeleteFunc(r.WaitQueue, func(q Request) bool { return q.Requester == req.Requester })
	ms := ttl.Milliseconds()
	if renewing {
		for i := range r.Locks {
			if r.Locks[i].ID == mine.ID {
				l := &r.Locks[i]
				l.Type, l.TTL, l.ExpiresAt = req.Type, ms, now.Add(ttl)
				l.RenewCount++
				return Grant{Lease: *l, Renewed: true}, nil
			}
		}
	}
	l := Lease{ID: id, Type: req.Type, Holder: req.Requester, AcquiredAt: now, ExpiresAt: now.Add(ttl), TTL: ms}
	r.Locks = append(r.Locks, l)
	return Grant{Lease: l}, nil
}

// ahead is the first waiting request of another agent that is served
// before req: a higher priority, or the same priority and earlier. A
// request that is not queued arrives now.
func (r *Record) ahead(req Request) (Request, bool) {
	for _, q := range r.WaitQueue {
		if q.Requester == req.Requester {
			continue
		}
		if c := cmp.Compare(rank(q.Priority), rank(req.Priority)); c < 0 || (c == 0 && !q.RequestedAt.After(req.RequestedAt)) {
			return q, true
		}
	}
	return Request{}, false
}

// Enqueue adds req to the wait queue in serving order, replacing any
// earlier request of the same agent (which keeps its place when its
// priority is unchanged).
func (r *Record) Enqueue(req Request) {
	for i, q := range r.WaitQueue {
		if q.Requester == req.Requester {
			if q.Priority == req.Priority && q.Type == req.Type {
				r.WaitQueue[i].Timeout = req.RequestedAt.Sub(q.RequestedAt).Milliseconds() + req.Timeout
				return
			}
			r.WaitQueue = slices.Delete(r.WaitQueue, i, i+1)
			break
		}
	}
	i, _ := slices.BinarySearchFunc(r.WaitQueue, req, func(q, req Request) int {
		if c := cmp.Compare(rank(q.Priority), rank(req.Priority)); c != 0 {
			return c
		}
		if q.RequestedAt.After(req.RequestedAt) {
			return 1
		}
		return -1
	})
	r.WaitQueue = slices.Insert(r.WaitQueue, i, req)
}

// Dequeue removes requester's waiting request; it reports whether there
// was one.
func (r *Record) Dequeue(requester string) bool {
	n := len(r.WaitQueue)
	r.WaitQueue = slices.DeleteFunc(r.WaitQueue, func(q Request) bool { return q.Requester == requester })
	return len(r.WaitQueue) != n
}

// Queued reports whether requester waits for the resource.
func (r *Record) Queued(requester string) bool {
	return slices.ContainsFunc(r.WaitQueue, func(q Request) bool { return q.Requester == requester })
}

// Renew gives holder's lease id ("" = holder's lease) a fresh time to
// live from now.
func (r *Record) Renew(holder, id string, ttl time.Duration, now time.Time) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, errkind.Errorf(ErrInvalid, "a lease needs a positive time to live")
	}
	r.Prune(now)
	i, err := r.find(holder, id, false)
	if err != nil {
		return Lease{}, err
	}
	l := &r.Locks[i]
	l.TTL, l.ExpiresAt = ttl.Milliseconds(), now.Add(ttl)
	l.RenewCount++
	return *l, nil
}

// Release removes lease id ("" = holder's lease) of holder; with force,
// anyone's (id, or every lease when id is "").
func (r *Record) Release(holder, id string, force bool, now time.Time) ([]Lease, error) {
	r.Prune(now)
	if force && id == "" {
		out := r.Locks
		r.Locks = nil
		if len(out) == 0 {
			return nil, errkind.Errorf(ErrNotHolder, "nobody holds %s", r.Resource)
		}
		return out, nil
	}
	i, err := r.find(holder, id, force)
	if err != nil {
		return nil, err
	}
	l := r.Locks[i]
	r.Locks = slices.Delete(r.Locks, i, i+1)
	return []Lease{l}, nil
}

// find is the index of lease id ("" = holder's) that holder may change.
func (r *Record) find(holder, id string, anyone bool) (int, error) {
	for i, l := range r.Locks {
		if (id == "" && l.Holder == holder) || (id != "" && l.ID == id) {
			if l.Holder != holder && !anyone {
				return 0, errkind.Errorf(ErrNotHolder, "%s's lease %s on %s is not %s's (force releases it)", l.Holder, l.ID, r.Resource, holder)
			}
			return i, nil
		}
	}
	if id != "" {
		return 0, errkind.Errorf(ErrNotHolder, "no live lease %s on %s (it expired or was released)", id, r.Resource)
	}
	return 0, errkind.Errorf(ErrNotHolder, "%s holds no live lease on %s (it expired or was released)", holder, r.Resource)
}
