package lease

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Leases is the lease API of one store (aiwgstate.Store.Leases): the
// glue that keeps a Record as a file and applies its decisions inside the
// write that records them.
type Leases struct{ s *store.Store }

// Of is the lease API of s.
func Of(s *store.Store) *Leases { return &Leases{s: s} }

// Dir is the directory of lease records: leases/<resource>.json,
// one file a resource, so that log and blame of a resource's file are
// the history of who held it.
const Dir = "leases"

// Trailers of a lease commit.
const (
	// Trailer is what the commit did: acquire, renew, release,
	// force-release, wait or give-up.
	Trailer = "Lease"
	// TrailerID is the lease (or wait request) it did it to.
	TrailerID = "Lease-Id"
	// TrailerExpired names a lease, or a wait request, found run
	// out and removed.
	TrailerExpired = "Lease-Expired"
	// TrailerReason is why a lease was force-released.
	TrailerReason = "Reason"
)

// Options is a lease request.
type Options struct {
	// Type: Exclusive ("" too) or Shared.
	Type Type
	// TTL is how long the lease lives unless renewed (at least 1ms; 0
	// with ID keeps the lease's own).
	TTL time.Duration
	// ID names a lease the agent holds, to renew it with Type: an
	// upgrade or a downgrade when the type differs. Without it, an agent
	// that holds the resource is excluded like any other, so that two of
	// its processes never both hold it exclusively.
	ID string
	// Wait: while the resource is held, wait up to this long for it,
	// queued (one commit) in priority order; 0 fails at once.
	Wait time.Duration
	// Priority of the wait: critical, high, normal ("" too) or low.
	Priority string
	// Poll is how often a waiter reads the record (default 50ms, rising
	// to 500ms).
	Poll time.Duration
}

// Result is what Acquire got.
type Result struct {
	Lease Lease `json:"lease"`
	// Change is acquire, renew, upgrade or downgrade (see Options.ID).
	Change   string          `json:"change"`
	Waited   string          `json:"waited,omitempty"`
	Mutation *store.Mutation `json:"mutation"`
}

// RanOutError: a lease ran out before the commit that granted or renewed
// it landed, the branch being busy for longer than its time to live. It
// is store.ErrLocked; ask again with a longer one.
type RanOutError struct {
	Resource string
	TTL      time.Duration
	Renew    bool // a renewal, not an acquire
}

func (e *RanOutError) Error() string {
	return fmt.Sprintf("the lease on %s ran out (ttl %s) before its commit landed: the branch was busy", e.Resource, e.TTL)
}

func (e *RanOutError) Unwrap() error { return store.ErrLocked }

// File is the file that records resource's leases.
func File(resource string) (string, error) {
	clean, err := verbiage.CleanStorePath(resource)
	if err != nil {
		return "", fmt.Errorf("lease resource %q: %w", resource, err)
	}
	if clean != resource {
		return "", fmt.Errorf("%w: lease resource %q: write it %q", verbiage.ErrInvalidPath, resource, clean)
	}
	for _, seg := range strings.Split(resource, "/") {
		if strings.HasSuffix(seg, ".json") {
			// Its file would be another resource's directory, or the
			// reverse: x.json/y beside x.
			return "", fmt.Errorf("%w: lease resource %q: a name segment cannot end in .json", verbiage.ErrInvalidPath, resource)
		}
	}
	return Dir + "/" + resource + ".json", nil
}

// A waiter's queued request lives for queueHold at a time, and the
// waiter renews it while it waits, refreshMargin before it would run out:
// a killed waiter holds the agents behind it up for queueHold at most,
// not for all of its wait.
const (
	queueHold     = 30 * time.Second
	refreshMargin = 10 * time.Second
)

// Validate refuses a type or priority the rules do not know, a time to
// live under a millisecond (zero is the holder's renewal keeping its own),
// and a negative wait.
func (lo *Options) Validate() error {
	if _, err := ParseType(string(lo.Type)); err != nil {
		return fmt.Errorf("%w: %v", store.ErrUsage, err)
	}
	if _, err := ParsePriority(lo.Priority); err != nil {
		return fmt.Errorf("%w: %v", store.ErrUsage, err)
	}
	if lo.TTL < time.Millisecond && (lo.TTL != 0 || lo.ID == "") {
		return fmt.Errorf("%w: a lease needs a time to live of at least 1ms", store.ErrUsage)
	}
	if lo.Wait < 0 {
		return fmt.Errorf("%w: a negative wait", store.ErrUsage)
	}
	return nil
}

// Acquire takes a lease on resource for the writing agent: one commit
// that records it in the resource's file. Held in a way that excludes the
// request (or with another agent's wait served first), it fails with
// ErrHeld, unless lo.Wait lets it queue and wait. With lo.ID the
// agent renews a lease it holds. Leases that ran out are removed by the
// next write to their resource. Expiry is judged by the writing
// process's clock, read once the branch lock is held.
func (l *Leases) Acquire(ctx context.Context, resource string, lo Options, wo store.WriteOptions) (_ *Result, err error) {
	file, err := File(resource)
	if err != nil {
		return nil, err
	}
	if err := lo.Validate(); err != nil {
		return nil, err
	}
	typ, _ := ParseType(string(lo.Type))
	prio, _ := ParsePriority(lo.Priority)
	agent := l.s.Agent(wo.Agent)
	start := wo.Time
	if start.IsZero() {
		start = l.s.Now()
	}
	deadline := start.Add(lo.Wait)
	hold := func(now time.Time) int64 { return (min(deadline.Sub(now), queueHold) + time.Second).Milliseconds() }
	req := Request{ID: objects.NewID("req"), Type: typ, Requester: agent, RequestedAt: start, Timeout: hold(start), Priority: prio}
	poll := lo.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	// queued: the request went into the queue, and lives until
	// queuedUntil unless renewed; a waiter that stops waiting for any
	// reason but a withdrawal takes it out again.
	queued, withdrawn := false, false
	var queuedUntil time.Time
	defer func() {
		if err != nil && queued && !withdrawn {
			l.giveUp(context.WithoutCancel(ctx), file, resource, req.ID, wo)
		}
	}()
	for {
		var res Result
		enqueued := false
		// contended: the request was refused as held, and the commit
		// records that as an event alone.
		var contended error
		m, err := l.commit(ctx, file, resource, wo, func(rec *Record, now time.Time, r *store.Recorder, emit func(event.Input)) (string, error) {
			contended = nil
			g, err := rec.Acquire(req, lo.ID, objects.NewID("lease"), lo.TTL, now)
			if err == nil {
				res.Lease, res.Change = g.Lease, g.Change
				r.Trailer(Trailer, g.Change)
				r.Trailer(TrailerID, g.Lease.ID)
				return fmt.Sprintf("lease %s %s (%s, %s)", g.Change, resource, g.Lease.Type, time.Duration(g.Lease.TTL)*time.Millisecond), nil
			}
			if !queued && errors.Is(err, ErrHeld) && (lo.Wait == 0 || errors.Is(err, ErrDeadlock) || !now.Before(deadline)) {
				// Refused: the contention is recorded, in a commit of its
				// own, and the refusal returned once it lands.
				if eerr := contention(emit, rec, resource, req, err, wo.Correlation); eerr != nil {
					return "", err
				}
				contended = err
				r.Trailer(Trailer, "contention")
				r.Trailer(TrailerID, req.ID)
				return "lease contention " + resource, nil
			}
			if lo.Wait == 0 || !errors.Is(err, ErrHeld) || errors.Is(err, ErrDeadlock) || !now.Before(deadline) {
				return "", err
			}
			if q, ok := rec.Waiting(req.ID); ok && !needsRefresh(q, now, deadline) {
				return "", err // queued, for long enough: nothing to write
			}
			// Queued anew, or renewed in place (Enqueue keeps its place).
			renewed := req
			if queued {
				renewed.RequestedAt, renewed.Timeout = now, hold(now)
			} else if eerr := contention(emit, rec, resource, req, err, wo.Correlation); eerr != nil {
				return "", eerr
			}
			rec.Enqueue(renewed)
			enqueued = true
			queuedUntil = renewed.RequestedAt.Add(time.Duration(renewed.Timeout) * time.Millisecond)
			r.Trailer(Trailer, "wait")
			r.Trailer(TrailerID, req.ID)
			return fmt.Sprintf("lease wait %s (%s, %s priority, up to %s)", resource, typ, prio, lo.Wait), nil
		})
		var held error
		switch {
		case contended != nil && (err == nil || !errors.Is(err, ErrHeld)):
			// The refusal stands whether or not its record could be
			// written (an agent the policy keeps out of events/, say).
			return nil, contended
		case err == nil && !enqueued:
			res.Mutation = m
			if queued {
				res.Waited = l.s.Now().Sub(start).Round(time.Millisecond).String()
			}
			if wo.Time.IsZero() && !res.Lease.ExpiresAt.After(l.s.Now()) {
				return nil, &RanOutError{Resource: resource, TTL: time.Duration(res.Lease.TTL) * time.Millisecond}
			}
			return &res, nil
		case err == nil:
			queued = true
		case errors.Is(err, ErrHeld) && !errors.Is(err, ErrDeadlock) && lo.Wait > 0:
			held = err
		default:
			return nil, err
		}
		// Waiting: read the record (no commit) until it looks free or the
		// queued request needs renewing, then try again.
		for {
			now := l.s.Now()
			if !now.Before(deadline) {
				if held == nil {
					// Queued and not yet looked at again: the holder's
					// lease is what the request waited behind.
					held = errkind.Errorf(ErrHeld, "%s is held", resource)
				}
				return nil, fmt.Errorf("%w (waited %s)", held, lo.Wait)
			}
			select {
			case <-ctx.Done():
				return nil, errkind.Errorf(ErrHeld, "interrupted while waiting for %s (the request is withdrawn): %w", resource, ctx.Err())
			case <-time.After(min(poll, deadline.Sub(now))):
			}
			poll = min(poll*3/2, 500*time.Millisecond)
			rec, err := l.record(file, resource, store.ReadOptions{Branch: wo.Branch})
			if err != nil {
				return nil, err
			}
			q, ok := rec.Waiting(req.ID)
			if queued && !ok && l.s.Now().Add(time.Second).Before(queuedUntil) {
				// Gone well before it would run out: withdrawn (lease
				// release), not to be queued again.
				withdrawn = true
				return nil, errkind.Errorf(ErrHeld, "the wait %s for %s was withdrawn", req.ID, resource)
			}
			if queued && (!ok || needsRefresh(q, l.s.Now(), deadline)) {
				break
			}
			// rec is a copy read for this probe alone: trying the
			// request on it changes nothing stored.
			if _, err := rec.Acquire(req, lo.ID, "probe", lo.TTL, l.s.Now()); err == nil {
				break
			} else if !errors.Is(err, ErrHeld) {
				return nil, err
			} else {
				held = err
			}
		}
	}
}

// needsRefresh: the queued request q runs out before the wait ends, and
// soon.
func needsRefresh(q Request, now, deadline time.Time) bool {
	end := q.RequestedAt.Add(time.Duration(q.Timeout) * time.Millisecond)
	return end.Before(deadline) && end.Sub(now) < refreshMargin
}

// giveUp takes a waiter's request out of the queue once it stops
// waiting, so that the agents behind it are not held up until its timeout.
// Best effort: the timeout removes it anyway.
func (l *Leases) giveUp(ctx context.Context, file, resource, id string, wo store.WriteOptions) {
	l.commit(ctx, file, resource, wo, func(rec *Record, _ time.Time, r *store.Recorder, _ func(event.Input)) (string, error) {
		if !rec.Dequeue(id) {
			return "", store.ErrNoChange
		}
		r.Trailer(Trailer, "give-up")
		r.Trailer(TrailerID, id)
		return "lease give-up " + resource, nil
	})
}

// Renew gives the writing agent's lease on resource (id, or "" for its
// one lease there) a fresh time to live.
func (l *Leases) Renew(ctx context.Context, resource, id string, ttl time.Duration, wo store.WriteOptions) (*Result, error) {
	file, err := File(resource)
	if err != nil {
		return nil, err
	}
	if ttl < time.Millisecond {
		return nil, fmt.Errorf("%w: a lease needs a time to live of at least 1ms", store.ErrUsage)
	}
	agent := l.s.Agent(wo.Agent)
	var res Result
	m, err := l.commit(ctx, file, resource, wo, func(rec *Record, now time.Time, r *store.Recorder, emit func(event.Input)) (string, error) {
		l, err := rec.Renew(agent, id, ttl, now)
		if err != nil {
			return "", err
		}
		res.Lease, res.Change = l, "renew"
		r.Trailer(Trailer, "renew")
		r.Trailer(TrailerID, l.ID)
		return fmt.Sprintf("lease renew %s (%s)", resource, ttl), nil
	})
	if err != nil {
		return nil, err
	}
	res.Mutation = m
	if wo.Time.IsZero() && !res.Lease.ExpiresAt.After(l.s.Now()) {
		return nil, &RanOutError{Resource: resource, TTL: ttl, Renew: true}
	}
	return &res, nil
}

// ReleaseOptions says what Release removes.
type ReleaseOptions struct {
	// ID of a lease, or of a waiting request (req-…); "" = the writing
	// agent's lease on the resource, or its waiting request.
	ID string
	// Force releases another agent's lease or request (every lease and
	// request on the resource when ID is ""), as the swarm shared state specification's coordinator
	// does; Reason is recorded.
	Force  bool
	Reason string
}

// Released is what Release removed.
type Released struct {
	Leases   []Lease         `json:"released"`
	Requests []Request       `json:"withdrawn,omitempty"`
	Mutation *store.Mutation `json:"mutation"`
}

// Release removes a lease, or a waiting request, from resource.
func (l *Leases) Release(ctx context.Context, resource string, ro ReleaseOptions, wo store.WriteOptions) (*Released, error) {
	file, err := File(resource)
	if err != nil {
		return nil, err
	}
	if ro.Reason != "" && !ro.Force {
		return nil, fmt.Errorf("%w: a reason goes with a forced release", store.ErrUsage)
	}
	agent := l.s.Agent(wo.Agent)
	out := &Released{}
	m, err := l.commit(ctx, file, resource, wo, func(rec *Record, now time.Time, r *store.Recorder, emit func(event.Input)) (string, error) {
		ls, qs, err := rec.Release(agent, ro.ID, ro.Force, now)
		if err != nil {
			return "", err
		}
		out.Leases, out.Requests = ls, qs
		verb := "release"
		if ro.Force {
			verb = "force-release"
		}
		r.Trailer(Trailer, verb)
		for _, l := range ls {
			r.Trailer(TrailerID, l.ID)
		}
		if ro.Force {
			for _, held := range ls {
				if held.Holder == agent {
					continue // its own lease: an ordinary release
				}
				payload, _ := json.Marshal(map[string]any{"resource": resource, "lease_id": held.ID, "holder": held.Holder, "type": held.Type, "reason": ro.Reason})
				emit(event.Input{Type: event.TypeLockForceRelease, Target: held.Holder, Correlation: wo.Correlation, Payload: payload})
			}
		}
		for _, q := range qs {
			r.Trailer(TrailerID, q.ID)
		}
		if ro.Reason != "" {
			r.Trailer(TrailerReason, ro.Reason)
		}
		return "lease " + verb + " " + resource, nil
	})
	if err != nil {
		return nil, err
	}
	out.Mutation = m
	return out, nil
}

// commit is one lease write: it reads resource's record in the
// transaction, drops what ran out, lets change decide (its subject, or an
// error that aborts the commit), and writes the record back, removing the
// file when nobody holds or waits.
func (l *Leases) commit(ctx context.Context, file, resource string, wo store.WriteOptions, change func(*Record, time.Time, *store.Recorder, func(event.Input)) (string, error)) (*store.Mutation, error) {
	return l.s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		// Read with the branch lock held: a clock read before waiting for
		// it could grant a lease already run out, or judge one live that
		// has.
		now := wo.Time
		if now.IsZero() {
			now = l.s.Now()
		}
		data, err := tx.ReadFile(file)
		exists := err == nil
		if errors.Is(err, repo.ErrNotFound) {
			data, err = nil, nil
		}
		if err != nil {
			return err
		}
		lr, err := Decode(resource, data)
		if err != nil {
			return errkind.Errorf(store.ErrInvalidRecord, "%v", err)
		}
		expired, dropped := lr.Prune(now)
		var events []event.Input
		for _, held := range expired {
			rec.Trailer(TrailerExpired, held.ID)
			payload, _ := json.Marshal(map[string]any{"resource": resource, "lease_id": held.ID, "holder": held.Holder, "type": held.Type, "expired_at": held.ExpiresAt})
			events = append(events, event.Input{Type: event.TypeLockExpired, Target: held.Holder, Correlation: wo.Correlation, Payload: payload})
		}
		for _, q := range dropped {
			rec.Trailer(TrailerExpired, q.ID)
		}
		rec.Subject, err = change(lr, now, rec, func(in event.Input) { events = append(events, in) })
		if errors.Is(err, store.ErrNoChange) && len(expired)+len(dropped) > 0 {
			// Nothing to do but what ran out: that is written, or
			// the next reader would find it again.
			rec.Subject, err = "lease expire "+resource, nil
		}
		if err != nil {
			return err
		}
		// The events of this write (what ran out, a contention, a forced
		// release) are in its commit: one commit an operation.
		written := 0
		for _, in := range events {
			_, ok, err := event.AddAllowed(l.s, tx, rec, in, l.s.Agent(wo.Agent), now)
			if err != nil {
				return err
			}
			if ok {
				written++
			}
		}
		if lr.Empty() {
			if !exists {
				return store.ErrNoChange
			}
			if err := tx.Remove(file); err != nil {
				return err
			}
			rec.Add(store.OpDelete, file, "")
			return nil
		}
		b, err := json.Marshal(lr)
		if err != nil {
			return err
		}
		if b, err = objects.Canonical(b); err != nil {
			return err
		}
		if exists && bytes.Equal(b, data) {
			if written > 0 {
				return nil // the record as it was: the commit holds its events alone
			}
			return store.ErrNoChange
		}
		if err := tx.WriteFile(file, b); err != nil {
			return err
		}
		op := store.OpUpdate
		if !exists {
			op = store.OpCreate
		}
		rec.Add(op, file, "")
		return nil
	})
}

// Info is a resource's record as read, with what has run out marked.
type Info struct {
	Record
	// Expired are the leases that ran out but are still in the file (the
	// next write to the resource removes them).
	Expired []string `json:"expired,omitempty"`
}

// List reads the lease records under prefix (a resource, a directory of
// resources, or "" for all), in path order.
func (l *Leases) List(ctx context.Context, prefix string, ro store.ReadOptions) ([]Info, error) {
	h, err := l.s.Resolve(ro.At, ro.Branch)
	if err != nil {
		return nil, err
	}
	c, err := l.s.Repo().ReadCommit(h)
	if err != nil {
		return nil, err
	}
	root := c.Tree
	// What had run out is judged at the revision read: now for the head,
	// the commit's time for an older one.
	now := l.s.Now()
	if ro.At != "" {
		now = c.Committer.When
	}
	dir := Dir
	if prefix != "" {
		p, err := verbiage.CleanStorePath(prefix)
		if err != nil {
			return nil, fmt.Errorf("lease resource %q: %w", prefix, err)
		}
		dir += "/" + p
	}
	var files []string
	if e, err := l.s.Repo().Lookup(root, dir+".json"); err == nil && !e.IsDir() {
		files = append(files, dir+".json")
	}
	if e, err := l.s.Repo().Lookup(root, dir); err == nil && e.IsDir() {
		err = l.s.Repo().Walk(root, dir, func(path string, _ plumbing.Hash) error {
			if strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]Info, 0, len(files))
	for _, f := range files {
		resource := strings.TrimSuffix(strings.TrimPrefix(f, Dir+"/"), ".json")
		data, err := l.s.Repo().ReadFileAt(root, f)
		if err != nil {
			return nil, err
		}
		rec, err := Decode(resource, data)
		if err != nil {
			return nil, errkind.Errorf(store.ErrInvalidRecord, "%v", err)
		}
		info := Info{Record: *rec}
		for _, l := range rec.Locks {
			if l.Expired(now) {
				info.Expired = append(info.Expired, l.ID)
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// record reads resource's record at the head of ro's branch.
func (l *Leases) record(file, resource string, ro store.ReadOptions) (*Record, error) {
	root, err := l.s.Tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := l.s.Repo().ReadFileAt(root, file)
	if errors.Is(err, repo.ErrNotFound) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec, err := Decode(resource, data)
	if err != nil {
		return nil, errkind.Errorf(store.ErrInvalidRecord, "%v", err)
	}
	return rec, nil
}

// HolderGuard keeps other agents' leases and waits theirs: a write that
// removes, changes or forges one that is live is a forced release, which
// the access policy reserves for the holder and its lease_admin role.
// Every write is checked, not only Release: a lease file written by put
// or set, or brought by a merge, must not do it either. A store without
// a policy is open, as for every other write. It is a store.Guard.
func HolderGuard(s *store.Store, tx *repo.Tx, wo store.WriteOptions, _ []store.Change) error {
	var files []string
	for _, p := range tx.Changed() {
		if strings.HasPrefix(p, Dir+"/") && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil
	}
	p, err := s.PolicyAt(tx.Parent())
	if err != nil || p == nil {
		return err
	}
	agent := store.AgentName(wo.Agent)
	if p.InRole(agent, policy.RoleLeaseAdmin) {
		return nil
	}
	now := wo.Time
	if now.IsZero() {
		now = s.Now()
	}
	parents := append([]plumbing.Hash{tx.Parent()}, wo.MergeParents()...)
	// A merge is judged against its merge bases too (Foreign): what
	// a side changed since is that side's doing, the rest the merger's.
	var bases []plumbing.Hash
	for i := range parents {
		for j := i + 1; j < len(parents) && !parents[i].IsZero(); j++ {
			bs, err := s.Repo().MergeBases(parents[i], parents[j])
			if err != nil {
				return err
			}
			if len(bs) == 0 {
				bs = []plumbing.Hash{plumbing.ZeroHash} // no common history: an empty record
			}
			bases = append(bases, bs...)
		}
	}
	records := func(resource, f string, at []plumbing.Hash) ([]*Record, error) {
		out := make([]*Record, len(at))
		for i, ph := range at {
			if ph.IsZero() {
				continue
			}
			c, err := s.Repo().ReadCommit(ph)
			if err != nil {
				return nil, err
			}
			data, err := s.Repo().ReadFileAt(c.Tree, f)
			if errors.Is(err, repo.ErrNotFound) {
				continue
			} else if err != nil {
				return nil, err
			}
			// A record that does not decode held nobody's lease.
			out[i], _ = Decode(resource, data)
		}
		return out, nil
	}
	for _, f := range files {
		resource := strings.TrimSuffix(strings.TrimPrefix(f, Dir+"/"), ".json")
		var next *Record
		if data, err := tx.ReadFile(f); err == nil {
			if next, err = Decode(resource, data); err != nil {
				return nil // RecordGuard refuses it
			}
		} else if !errors.Is(err, repo.ErrNotFound) {
			return err
		}
		before, err := records(resource, f, parents)
		if err != nil {
			return err
		}
		based, err := records(resource, f, bases)
		if err != nil {
			return err
		}
		if taken := Foreign(agent, before, based, next, now); len(taken) > 0 {
			return errkind.Errorf(store.ErrDenied, "agent %q %s: a forced release is for the holder, or an agent of the policy's %q role", agent, taken[0], policy.RoleLeaseAdmin)
		}
	}
	return nil
}

// RecordGuard keeps the files of leases/ what the lease verbs read: a
// write of any kind (put, set, mv, apply, a merge) that leaves one there
// that does not decode as a lease record is refused, before an acquire
// would read it as empty and overwrite it. It is a store.Guard.
func RecordGuard(_ *store.Store, tx *repo.Tx, _ store.WriteOptions, _ []store.Change) error {
	return store.CheckRecords(tx, Dir, func(file string, data []byte) error {
		rest := strings.TrimPrefix(file, Dir+"/")
		if !strings.HasSuffix(rest, ".json") {
			return errkind.Errorf(ErrInvalid, "%s is not a lease record's file (leases/<resource>.json)", file)
		}
		_, err := Decode(strings.TrimSuffix(rest, ".json"), data)
		return err
	})
}

// contention tells emit of a request refused because the resource is
// held (the specification's lock.contention): who asked, for what, and
// who holds it.
func contention(emit func(event.Input), rec *Record, resource string, req Request, refused error, correlation string) error {
	var holders []string
	for _, held := range rec.Locks {
		holders = append(holders, held.Holder)
	}
	payload, err := json.Marshal(map[string]any{"resource": resource, "request_id": req.ID, "type": req.Type, "priority": req.Priority,
		"holders": holders, "waiting": len(rec.WaitQueue), "refused": refused.Error()})
	if err != nil {
		return err
	}
	emit(event.Input{Type: event.TypeLockContention, Correlation: correlation, Payload: payload})
	return nil
}
