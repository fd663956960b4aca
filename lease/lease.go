package lease

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// ErrDeadlock: a shared holder asks to upgrade while another shared
	// holder already waits to: neither could ever be served. It is an
	// ErrHeld, and is not worth waiting on.
	ErrDeadlock = fmt.Errorf("%w: two shared holders wait to upgrade", ErrHeld)
)

// HeldError is an ErrHeld naming what holds the resource up: the lease
// that excludes the request, or the waiting request served before it.
type HeldError struct {
	Resource string
	// Holder, Lease and Type are the excluding lease's, if one excludes.
	Holder string
	Lease  string
	Type   Type
	// Waiter and Request are the request served first, if one is.
	Waiter  string
	Request string
	// Until is when that lease or request runs out unless renewed.
	Until time.Time
	msg   string
}

func (e *HeldError) Error() string { return e.msg }

func (e *HeldError) Unwrap() error { return ErrHeld }

// Lease is one hold of a resource (the swarm shared state specification's Lock). TTL is in
// milliseconds, as the specification has it.
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

// Request is a wait for a resource (the swarm shared state specification's LockRequest); Timeout is
// in milliseconds from RequestedAt, after which the request is dropped.
type Request struct {
	ID          string    `json:"id"`
	Type        Type      `json:"type"`
	Requester   string    `json:"requester"`
	RequestedAt time.Time `json:"requestedAt"`
	Timeout     int64     `json:"timeout"`
	Priority    string    `json:"priority"`
}

func (q Request) expiry() time.Time {
	return q.RequestedAt.Add(time.Duration(q.Timeout) * time.Millisecond)
}

func (q Request) expired(now time.Time) bool { return !now.Before(q.expiry()) }

// Waiting is the waiting request id, if it is queued.
func (r *Record) Waiting(id string) (Request, bool) {
	for _, q := range r.WaitQueue {
		if q.ID == id {
			return q, true
		}
	}
	return Request{}, false
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
// Anything else must be a record of this resource, field for field: a
// document that merely parses is not taken for an empty record, which
// the next write would overwrite.
func Decode(resource string, data []byte) (*Record, error) {
	if data == nil {
		return &Record{Resource: resource}, nil
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, errkind.Errorf(ErrInvalid, "the record of %s is not a lease record: %v", resource, err)
	}
	if r.Resource == "" {
		return nil, errkind.Errorf(ErrInvalid, "the record of %s is not a lease record: it names no resource", resource)
	}
	if r.Resource != resource {
		return nil, errkind.Errorf(ErrInvalid, "the record of %s names resource %q", resource, r.Resource)
	}
	for _, l := range r.Locks {
		if l.ID == "" || l.Holder == "" || (l.Type != Exclusive && l.Type != Shared) {
			return nil, errkind.Errorf(ErrInvalid, "the record of %s holds a lease without an id, a holder or a type", resource)
		}
	}
	for _, q := range r.WaitQueue {
		if _, err := ParsePriority(q.Priority); err != nil || q.ID == "" || q.Requester == "" || (q.Type != Exclusive && q.Type != Shared) {
			return nil, errkind.Errorf(ErrInvalid, "the record of %s holds a waiting request without an id, a requester, a type or a priority", resource)
		}
	}
	return &r, nil
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

// held lists the ids of holder's leases.
func (r *Record) held(holder string) []string {
	var ids []string
	for _, l := range r.Locks {
		if l.Holder == holder {
			ids = append(ids, l.ID)
		}
	}
	return ids
}

// Grant is what Acquire did.
type Grant struct {
	Lease Lease
	// Change is acquire (a new lease), renew (the same type), upgrade
	// (shared to exclusive) or downgrade (exclusive to shared).
	Change string
}

// Acquire grants req (pruned first): when no other lease conflicts with
// its type, and no waiting request of another agent is served before it.
// renew names a lease of the requester to renew instead, with the
// requested type (an upgrade or a downgrade): a holder must name the
// lease it means, so that two processes of one agent asking for an
// exclusive lease are excluded like any two agents. An agent's own
// waiting request is removed when it is granted. ttl must be at least a
// millisecond, the specification's unit; 0 with renew keeps the lease's own.
func (r *Record) Acquire(req Request, renew, id string, ttl time.Duration, now time.Time) (Grant, error) {
	if req.Type != Exclusive && req.Type != Shared {
		return Grant{}, errkind.Errorf(ErrInvalid, "lease type %q", req.Type)
	}
	r.Prune(now)
	mine := -1
	if renew != "" {
		i, err := r.find(req.Requester, renew, false)
		if err != nil {
			return Grant{}, err
		}
		mine = i
		if ttl == 0 {
			ttl = time.Duration(r.Locks[i].TTL) * time.Millisecond // the lease's own
		}
	}
	if ttl < time.Millisecond {
		return Grant{}, errkind.Errorf(ErrInvalid, "a lease needs a time to live of at least 1ms")
	}
	for i, l := range r.Locks {
		if i == mine || (req.Type == Shared && l.Type == Shared) {
			continue
		}
		if mine >= 0 && req.Type == Exclusive && r.Locks[mine].Type == Shared && l.Type == Shared {
			if q, ok := r.upgrader(req.ID); ok {
				return Grant{}, errkind.Errorf(ErrDeadlock, "%s also waits to upgrade its shared lease on %s: release your shared lease %s first (or %s its)", q.Requester, r.Resource, renew, q.Requester)
			}
		}
		he := &HeldError{Resource: r.Resource, Holder: l.Holder, Lease: l.ID, Type: l.Type, Until: l.ExpiresAt}
		if l.Holder == req.Requester {
			he.msg = fmt.Sprintf("you (%s) hold %s already, as %s (%s) until %s: pass its id to renew or change it", l.Holder, r.Resource, l.ID, l.Type, l.ExpiresAt.UTC().Format(time.RFC3339))
		} else {
			he.msg = fmt.Sprintf("%s holds %s (%s) until %s", l.Holder, r.Resource, l.Type, l.ExpiresAt.UTC().Format(time.RFC3339))
		}
		return Grant{}, he
	}
	if mine < 0 {
		if ahead, ok := r.ahead(req); ok {
			return Grant{}, &HeldError{Resource: r.Resource, Waiter: ahead.Requester, Request: ahead.ID, Until: ahead.expiry(),
				msg: fmt.Sprintf("%s waits for %s first (%s priority, until %s)", ahead.Requester, r.Resource, ahead.Priority, ahead.expiry().UTC().Format(time.RFC3339))}
		}
	}
	r.WaitQueue = slices.DeleteFunc(r.WaitQueue, func(q Request) bool { return q.ID == req.ID })
	ms := ttl.Milliseconds()
	if mine >= 0 {
		l := &r.Locks[mine]
		change := "renew"
		switch {
		case l.Type == Shared && req.Type == Exclusive:
			change = "upgrade"
		case l.Type == Exclusive && req.Type == Shared:
			change = "downgrade"
		}
		l.Type, l.TTL, l.ExpiresAt = req.Type, ms, now.Add(ttl)
		l.RenewCount++
		return Grant{Lease: *l, Change: change}, nil
	}
	l := Lease{ID: id, Type: req.Type, Holder: req.Requester, AcquiredAt: now, ExpiresAt: now.Add(ttl), TTL: ms}
	r.Locks = append(r.Locks, l)
	return Grant{Lease: l, Change: "acquire"}, nil
}

// upgrader is a waiting exclusive request, other than request id, from a
// holder of a shared lease: one that waits to upgrade.
func (r *Record) upgrader(id string) (Request, bool) {
	for _, q := range r.WaitQueue {
		if q.ID == id || q.Type != Exclusive {
			continue
		}
		for _, l := range r.Locks {
			if l.Holder == q.Requester && l.Type == Shared {
				return q, true
			}
		}
	}
	return Request{}, false
}

// ahead is the first waiting request served before req: for a queued
// req, any request before it in the queue (which is in serving order);
// for one not queued, which arrives now, a request of higher priority, or
// of the same priority that came no later.
func (r *Record) ahead(req Request) (Request, bool) {
	if i := slices.IndexFunc(r.WaitQueue, func(q Request) bool { return q.ID == req.ID }); i >= 0 {
		if i > 0 {
			return r.WaitQueue[0], true
		}
		return Request{}, false
	}
	for _, q := range r.WaitQueue {
		if c := cmp.Compare(rank(q.Priority), rank(req.Priority)); c < 0 || (c == 0 && !q.RequestedAt.After(req.RequestedAt)) {
			return q, true
		}
	}
	return Request{}, false
}

// Enqueue adds req to the wait queue in serving order. A request already
// queued (its id) is renewed: its place kept when its priority and type
// are unchanged, its timeout running from req's RequestedAt.
func (r *Record) Enqueue(req Request) {
	for i, q := range r.WaitQueue {
		if q.ID == req.ID {
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

// Dequeue removes the waiting request id; it reports whether it was
// queued.
func (r *Record) Dequeue(id string) bool {
	n := len(r.WaitQueue)
	r.WaitQueue = slices.DeleteFunc(r.WaitQueue, func(q Request) bool { return q.ID == id })
	return len(r.WaitQueue) != n
}

// Queued reports whether requester waits for the resource.
func (r *Record) Queued(requester string) bool {
	return slices.ContainsFunc(r.WaitQueue, func(q Request) bool { return q.Requester == requester })
}

// Renew gives holder's lease id ("" = holder's lease) a fresh time to
// live from now.
func (r *Record) Renew(holder, id string, ttl time.Duration, now time.Time) (Lease, error) {
	if ttl < time.Millisecond {
		return Lease{}, errkind.Errorf(ErrInvalid, "a lease needs a time to live of at least 1ms")
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

// Release removes holder's lease id ("" = holder's one lease), or, when
// id names a waiting request (req-…), that request; with no lease and
// no id, holder's waiting request. With force, anyone's: a lease or a
// request by id, or, without an id, every lease and request.
func (r *Record) Release(holder, id string, force bool, now time.Time) ([]Lease, []Request, error) {
	r.Prune(now)
	if force && id == "" {
		ls, qs := r.Locks, r.WaitQueue
		r.Locks, r.WaitQueue = nil, nil
		if len(ls)+len(qs) == 0 {
			return nil, nil, errkind.Errorf(ErrNotHolder, "nobody holds or waits for %s", r.Resource)
		}
		return ls, qs, nil
	}
	if id == "" && len(r.held(holder)) == 0 {
		// Holding nothing: withdraw the agent's waits, of any of its
		// processes.
		var qs []Request
		r.WaitQueue = slices.DeleteFunc(r.WaitQueue, func(q Request) bool {
			if q.Requester == holder {
				qs = append(qs, q)
				return true
			}
			return false
		})
		if len(qs) > 0 {
			return nil, qs, nil
		}
	}
	if i := slices.IndexFunc(r.WaitQueue, func(q Request) bool { return id != "" && q.ID == id }); i >= 0 {
		q := r.WaitQueue[i]
		if q.Requester != holder && !force {
			return nil, nil, errkind.Errorf(ErrNotHolder, "%s's request %s for %s is not %s's (force withdraws it)", q.Requester, q.ID, r.Resource, holder)
		}
		r.WaitQueue = slices.Delete(r.WaitQueue, i, i+1)
		return nil, []Request{q}, nil
	}
	i, err := r.find(holder, id, force)
	if err != nil {
		return nil, nil, err
	}
	l := r.Locks[i]
	r.Locks = slices.Delete(r.Locks, i, i+1)
	return []Lease{l}, nil, nil
}

// find is the index of lease id ("" = holder's) that holder may change.
func (r *Record) find(holder, id string, anyone bool) (int, error) {
	if ids := r.held(holder); id == "" && len(ids) > 1 {
		return 0, errkind.Errorf(ErrInvalid, "%s holds %d leases on %s (%s): name one", holder, len(ids), r.Resource, strings.Join(ids, ", "))
	}
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
