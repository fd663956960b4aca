package aiwgstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// LeaseDir is the directory of lease records: leases/<resource>.json,
// one file a resource, so that log and blame of a resource's file are
// the history of who held it.
const LeaseDir = "leases"

// Trailers of a lease commit.
const (
	// TrailerLease is what the commit did: acquire, renew, release,
	// force-release, wait or give-up.
	TrailerLease = "Lease"
	// TrailerLeaseID is the lease (or wait request) it did it to.
	TrailerLeaseID = "Lease-Id"
	// TrailerLeaseExpired names a lease, or a wait request, found run
	// out and removed.
	TrailerLeaseExpired = "Lease-Expired"
	// TrailerReason is why a lease was force-released.
	TrailerReason = "Reason"
)

// LeaseOptions is a lease request.
type LeaseOptions struct {
	// Type: lease.Exclusive ("" too) or lease.Shared.
	Type lease.Type
	// TTL is how long the lease lives unless renewed.
	TTL time.Duration
	// Wait: while the resource is held, wait up to this long for it,
	// queued (one commit) in priority order; 0 fails at once.
	Wait time.Duration
	// Priority of the wait: critical, high, normal ("" too) or low.
	Priority string
	// Poll is how often a waiter reads the record (default 50ms, rising
	// to 500ms).
	Poll time.Duration
}

// LeaseResult is what Acquire got.
type LeaseResult struct {
	Lease lease.Lease `json:"lease"`
	// Renewed: the agent held the resource already; its lease was renewed
	// with the requested type (an upgrade or downgrade).
	Renewed  bool      `json:"renewed,omitempty"`
	Waited   string    `json:"waited,omitempty"`
	Mutation *Mutation `json:"mutation"`
}

// LeaseFile is the file that records resource's leases.
func LeaseFile(resource string) (string, error) {
	clean, err := verbiage.CleanStorePath(resource)
	if err != nil {
		return "", fmt.Errorf("lease resource %q: %w", resource, err)
	}
	if clean != resource {
		return "", fmt.Errorf("%w: lease resource %q: write it %q", verbiage.ErrInvalidPath, resource, clean)
	}
	return LeaseDir + "/" + resource + ".json", nil
}

// Acquire takes a lease on resource for the writing agent: one commit
// that records it in the resource's file. Held by another agent in a way
// that excludes the request (or with another agent's wait served first),
// it fails with lease.ErrHeld, unless lo.Wait lets it queue and wait. An
// agent that holds the resource already renews its lease with the
// requested type. Leases that ran out are removed by the next write to
// their resource. Expiry is judged by the writing process's clock.
func (s *Store) Acquire(ctx context.Context, resource string, lo LeaseOptions, wo WriteOptions) (*LeaseResult, error) {
	file, err := LeaseFile(resource)
	if err != nil {
		return nil, err
	}
	typ, err := lease.ParseType(string(lo.Type))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	prio, err := lease.ParsePriority(lo.Priority)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if lo.TTL <= 0 {
		return nil, fmt.Errorf("%w: a lease needs a positive time to live", ErrUsage)
	}
	if lo.Wait < 0 {
		return nil, fmt.Errorf("%w: a negative wait", ErrUsage)
	}
	agent := AgentName(wo.Agent)
	start := wo.Time
	if start.IsZero() {
		start = s.now()
	}
	req := lease.Request{ID: objects.NewID("req"), Type: typ, Requester: agent, RequestedAt: start, Timeout: (lo.Wait + waitGrace).Milliseconds(), Priority: prio}
	deadline := start.Add(lo.Wait)
	poll := lo.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	queued := false
	for {
		var res LeaseResult
		var held error
		m, err := s.leaseCommit(ctx, file, resource, wo, func(rec *lease.Record, now time.Time, r *recorder) (string, error) {
			g, err := rec.Acquire(req, objects.NewID("lease"), lo.TTL, now)
			if err == nil {
				res.Lease, res.Renewed = g.Lease, g.Renewed
				r.trailer(TrailerLease, "acquire")
				r.trailer(TrailerLeaseID, g.Lease.ID)
				verb := "acquire"
				if g.Renewed {
					verb = "renew"
				}
				return fmt.Sprintf("lease %s %s (%s, %s)", verb, resource, g.Lease.Type, lo.TTL), nil
			}
			if !errors.Is(err, lease.ErrHeld) || lo.Wait == 0 || queued || !now.Before(deadline) {
				return "", err
			}
			held = err
			rec.Enqueue(req)
			r.trailer(TrailerLease, "wait")
			r.trailer(TrailerLeaseID, req.ID)
			return fmt.Sprintf("lease wait %s (%s, %s priority, up to %s)", resource, typ, prio, lo.Wait), nil
		})
		switch {
		case err == nil && held == nil:
			res.Mutation = m
			if queued {
				res.Waited = s.now().Sub(start).Round(time.Millisecond).String()
			}
			return &res, nil
		case err == nil:
			queued = true
		case !errors.Is(err, lease.ErrHeld):
			return nil, err
		default:
			held = err
		}
		if lo.Wait == 0 {
			return nil, held
		}
		// Waiting: read the record (no commit) until it looks free, then
		// try again.
		for {
			now := s.now()
			if !now.Before(deadline) {
				s.giveUp(ctx, file, resource, agent, wo)
				return nil, fmt.Errorf("%w (waited %s)", held, lo.Wait)
			}
			select {
			case <-ctx.Done():
				s.giveUp(context.WithoutCancel(ctx), file, resource, agent, wo)
				return nil, ctx.Err()
			case <-time.After(min(poll, deadline.Sub(now))):
			}
			poll = min(poll*3/2, 500*time.Millisecond)
			rec, err := s.leaseRecord(file, resource, ReadOptions{Branch: wo.Branch})
			if err != nil {
				return nil, err
			}
			probe := *rec
			probe.Locks = append([]lease.Lease(nil), rec.Locks...)
			probe.WaitQueue = append([]lease.Request(nil), rec.WaitQueue...)
			if _, err := probe.Acquire(req, "probe", lo.TTL, s.now()); err == nil {
				break
			} else if !errors.Is(err, lease.ErrHeld) {
				return nil, err
			} else {
				held = err
			}
		}
	}
}

// waitGrace keeps a waiter's request queued a little past its wait, so
// that it is still there for the waiter to take out when it gives up.
const waitGrace = time.Second

// giveUp takes a waiter's request out of the queue once it stops
// waiting, so that the agents behind it are not held up until its timeout.
// Best effort: the timeout removes it anyway.
func (s *Store) giveUp(ctx context.Context, file, resource, agent string, wo WriteOptions) {
	s.leaseCommit(ctx, file, resource, wo, func(rec *lease.Record, _ time.Time, r *recorder) (string, error) {
		if !rec.Dequeue(agent) {
			return "", ErrNoChange
		}
		r.trailer(TrailerLease, "give-up")
		return "lease give-up " + resource, nil
	})
}

// Renew gives the writing agent's lease on resource (id, or "" for its
// one lease there) a fresh time to live.
func (s *Store) Renew(ctx context.Context, resource, id string, ttl time.Duration, wo WriteOptions) (*LeaseResult, error) {
	file, err := LeaseFile(resource)
	if err != nil {
		return nil, err
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("%w: a lease needs a positive time to live", ErrUsage)
	}
	agent := AgentName(wo.Agent)
	var res LeaseResult
	m, err := s.leaseCommit(ctx, file, resource, wo, func(rec *lease.Record, now time.Time, r *recorder) (string, error) {
		l, err := rec.Renew(agent, id, ttl, now)
		if err != nil {
			return "", err
		}
		res.Lease, res.Renewed = l, true
		r.trailer(TrailerLease, "renew")
		r.trailer(TrailerLeaseID, l.ID)
		return fmt.Sprintf("lease renew %s (%s)", resource, ttl), nil
	})
	if err != nil {
		return nil, err
	}
	res.Mutation = m
	return &res, nil
}

// ReleaseOptions says which lease Release removes.
type ReleaseOptions struct {
	// ID of the lease ("" = the writing agent's lease on the resource).
	ID string
	// Force releases another agent's lease (every lease on the resource
	// when ID is ""), as seed 003's coordinator does; Reason is recorded.
	Force  bool
	Reason string
}

// Release removes a lease from resource; the released leases are
// returned.
func (s *Store) Release(ctx context.Context, resource string, ro ReleaseOptions, wo WriteOptions) ([]lease.Lease, *Mutation, error) {
	file, err := LeaseFile(resource)
	if err != nil {
		return nil, nil, err
	}
	if ro.Reason != "" && !ro.Force {
		return nil, nil, fmt.Errorf("%w: a reason goes with a forced release", ErrUsage)
	}
	agent := AgentName(wo.Agent)
	var out []lease.Lease
	m, err := s.leaseCommit(ctx, file, resource, wo, func(rec *lease.Record, now time.Time, r *recorder) (string, error) {
		ls, err := rec.Release(agent, ro.ID, ro.Force, now)
		if err != nil {
			return "", err
		}
		out = ls
		verb := "release"
		if ro.Force {
			verb = "force-release"
		}
		r.trailer(TrailerLease, verb)
		for _, l := range ls {
			r.trailer(TrailerLeaseID, l.ID)
		}
		if ro.Reason != "" {
			r.trailer(TrailerReason, ro.Reason)
		}
		return "lease " + verb + " " + resource, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

// leaseCommit is one lease write: it reads resource's record in the
// transaction, drops what ran out, lets change decide (its subject, or an
// error that aborts the commit), and writes the record back, removing the
// file when nobody holds or waits.
func (s *Store) leaseCommit(ctx context.Context, file, resource string, wo WriteOptions, change func(*lease.Record, time.Time, *recorder) (string, error)) (*Mutation, error) {
	now := wo.Time
	if now.IsZero() {
		now = s.now()
	}
	wo.Time = now
	return s.commit(ctx, wo, "", func(tx *repo.Tx, rec *recorder) error {
		data, err := tx.ReadFile(file)
		exists := err == nil
		if errors.Is(err, repo.ErrNotFound) {
			data, err = nil, nil
		}
		if err != nil {
			return err
		}
		lr, err := lease.Decode(resource, data)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidLease, err)
		}
		expired, dropped := lr.Prune(now)
		for _, l := range expired {
			rec.trailer(TrailerLeaseExpired, l.ID)
		}
		for _, q := range dropped {
			rec.trailer(TrailerLeaseExpired, q.ID)
		}
		rec.subject, err = change(lr, now, rec)
		if errors.Is(err, ErrNoChange) && len(expired)+len(dropped) > 0 {
			// Nothing to do but what ran out: that is written, or
			// the next reader would find it again.
			rec.subject, err = "lease expire "+resource, nil
		}
		if err != nil {
			return err
		}
		if lr.Empty() {
			if !exists {
				return ErrNoChange
			}
			if err := tx.Remove(file); err != nil {
				return err
			}
			rec.add(OpDelete, file, "")
			return nil
		}
		b, err := json.Marshal(lr)
		if err != nil {
			return err
		}
		if b, err = objects.Canonical(b); err != nil {
			return err
		}
		if err := tx.WriteFile(file, b); err != nil {
			return err
		}
		op := OpUpdate
		if !exists {
			op = OpCreate
		}
		rec.add(op, file, "")
		return nil
	})
}

// LeaseInfo is a resource's record as read, with what has run out marked.
type LeaseInfo struct {
	lease.Record
	// Expired are the leases that ran out but are still in the file (the
	// next write to the resource removes them).
	Expired []string `json:"expired,omitempty"`
}

// Leases reads the lease records under prefix (a resource, a directory
// of resources, or "" for all), in path order.
func (s *Store) Leases(ctx context.Context, prefix string, ro ReadOptions) ([]LeaseInfo, error) {
	root, err := s.tree(ro)
	if err != nil {
		return nil, err
	}
	dir := LeaseDir
	if prefix != "" {
		p, err := verbiage.CleanStorePath(prefix)
		if err != nil {
			return nil, fmt.Errorf("lease resource %q: %w", prefix, err)
		}
		dir += "/" + p
	}
	var files []string
	if _, err := s.repo.Lookup(root, dir+".json"); err == nil {
		files = append(files, dir+".json")
	}
	err = s.repo.Walk(root, dir, func(path string, _ plumbing.Hash) error {
		if strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return ctx.Err()
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	now := s.now()
	out := make([]LeaseInfo, 0, len(files))
	for _, f := range files {
		resource := strings.TrimSuffix(strings.TrimPrefix(f, LeaseDir+"/"), ".json")
		data, err := s.repo.ReadFileAt(root, f)
		if err != nil {
			return nil, err
		}
		rec, err := lease.Decode(resource, data)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidLease, err)
		}
		info := LeaseInfo{Record: *rec}
		for _, l := range rec.Locks {
			if l.Expired(now) {
				info.Expired = append(info.Expired, l.ID)
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// leaseRecord reads resource's record at the head of ro's branch.
func (s *Store) leaseRecord(file, resource string, ro ReadOptions) (*lease.Record, error) {
	root, err := s.tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := s.repo.ReadFileAt(root, file)
	if errors.Is(err, repo.ErrNotFound) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec, err := lease.Decode(resource, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidLease, err)
	}
	return rec, nil
}
