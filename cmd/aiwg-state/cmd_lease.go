package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/lease"
)

func newLeaseCommand() *cli.Command {
	return &cli.Command{
		Name:  "lease",
		Usage: "leases: locks with a time to live that agents take on a resource (swarm shared state)",
		Description: `A lease is held by an agent (--agent or AIWG_AGENT), exclusive or shared,
until it runs out or is released. Each acquire, renew and release is one
commit to leases/<resource>.json on the branch, so log and blame of that
file show who held what, when. Two agents asking at once are ordered by
the branch lock: exactly one gets an exclusive lease. Expiry is judged
by the writing process's clock.

Examples:
   aiwg-state lease acquire tasks/t-17 --ttl 30s --agent pulse
   aiwg-state lease acquire tasks/t-17 --wait 1m --priority high   # queue for it
   aiwg-state lease renew tasks/t-17 --ttl 30s --agent pulse
   aiwg-state lease release tasks/t-17 --agent pulse
   aiwg-state lease ls --json`,
		Subcommands: []*cli.Command{
			{
				Name:      "acquire",
				Usage:     "take a lease on RESOURCE (exit 5 while another agent holds it)",
				ArgsUsage: "RESOURCE",
				Description: `RESOURCE is a path-like name (tasks/t-17, global.config). An agent that
holds the resource is excluded like any other (two of its processes never
both hold it exclusively); to renew a lease you hold, or change its type
(a sole shared holder upgrades to exclusive, an exclusive one
downgrades), name it with --id.

With --wait the request queues (one commit) in priority order, then
first come first served, and the agent polls until it is its turn or the
wait runs out (exit 5); giving up, or Ctrl-C (exit 5 too), takes it out
of the queue.
A waiter renews its place every 20s or so, so a killed one holds the
queue up for 30s at most. Two shared holders both waiting to upgrade
would wait forever: the second is refused at once (exit 5).

Examples:
   aiwg-state lease acquire tasks/t-17 --ttl 30s
   aiwg-state lease acquire global.config --shared --ttl 5m
   aiwg-state lease acquire tasks/t-17 --wait 2m --priority critical --json
   aiwg-state lease acquire global.config --id lease-1a2b3c4d     # upgrade a shared lease you hold`,
				Flags: append(writeFlags(),
					&cli.DurationFlag{Name: "ttl", Value: 30 * time.Second, Usage: "how long the lease lives unless renewed (with --id: the lease's own unless given)"},
					&cli.BoolFlag{Name: "shared", Usage: "a shared lease (any number of shared holders, no exclusive one)"},
					&cli.DurationFlag{Name: "wait", Usage: "queue and wait this long for the resource (default: fail at once)"},
					&cli.StringFlag{Name: "priority", Value: "normal", Usage: "the wait's priority: critical, high, normal or low"},
					&cli.StringFlag{Name: "id", Usage: "a lease you hold on RESOURCE, to renew it with this type (an upgrade or downgrade)"},
				),
				Action: command(func(s *session) error {
					return runLeaseAcquire(s.c.Context, s, leaseAcquireOptions{
						Shared:   s.c.Bool("shared"),
						Ttl:      s.c.Duration("ttl"),
						Id:       s.c.String("id"),
						TtlSet:   s.c.IsSet("ttl"),
						Wait:     s.c.Duration("wait"),
						Priority: s.c.String("priority"),
					})
				}),
			},
			{
				Name:      "renew",
				Usage:     "give your lease on RESOURCE a fresh time to live",
				ArgsUsage: "RESOURCE",
				Description: `Renew before the lease runs out: once it has, another agent may take
the resource, and renewing fails (exit 3).

Examples:
   aiwg-state lease renew tasks/t-17 --ttl 30s`,
				Flags: append(writeFlags(),
					&cli.DurationFlag{Name: "ttl", Value: 30 * time.Second, Usage: "the fresh time to live, from now"},
					&cli.StringFlag{Name: "id", Usage: "the lease to renew (default: yours on RESOURCE)"},
				),
				Action: command(func(s *session) error {
					return runLeaseRenew(s.c.Context, s, leaseRenewOptions{
						Id:  s.c.String("id"),
						Ttl: s.c.Duration("ttl"),
					})
				}),
			},
			{
				Name:      "release",
				Usage:     "release your lease on RESOURCE, or withdraw your wait (with --force, anyone's)",
				ArgsUsage: "RESOURCE",
				Description: `Without --id: your lease on RESOURCE, or, holding none, your waiting
request. --id names a lease or a waiting request (req-…). --force
releases another agent's lease or request (--id), or every lease and
request on the resource, as the swarm shared state coordinator does; --reason is
recorded in the commit; the commit names who did. When the store has an
access policy, forcing another agent's lease or wait is for agents of its
"lease_admin" role (and the server's hook holds pushed lease files to the
same rule); a store without a policy lets anyone force.

Examples:
   aiwg-state lease release tasks/t-17
   aiwg-state lease release tasks/t-17 --force --reason "pulse crashed"`,
				Flags: append(writeFlags(),
					&cli.StringFlag{Name: "id", Usage: "the lease, or waiting request (req-…), to release (default: yours on RESOURCE)"},
					&cli.BoolFlag{Name: "force", Usage: "release another agent's lease"},
					&cli.StringFlag{Name: "reason", Usage: "why, for a forced release (Reason trailer)"},
				),
				Action: command(func(s *session) error {
					return runLeaseRelease(s.c.Context, s, leaseReleaseOptions{
						Id:     s.c.String("id"),
						Force:  s.c.Bool("force"),
						Reason: s.c.String("reason"),
					})
				}),
			},
			{
				Name:      "ls",
				Usage:     "list leases and waits, under PREFIX (a resource or a directory of them)",
				ArgsUsage: "[PREFIX]",
				Description: `Leases that ran out are marked expired: the next write to their resource
removes them.

Examples:
   aiwg-state lease ls
   aiwg-state lease ls tasks --json
   aiwg-state lease ls --at HEAD~5      # who held what five commits ago`,
				Flags:  readFlags(),
				Action: command(func(s *session) error { return runLeaseLs(s.c.Context, s) }),
			},
		},
	}
}

// leaseAcquireOptions are the flags runLeaseAcquire reads.
type leaseAcquireOptions struct {
	Shared   bool          // --shared
	Ttl      time.Duration // --ttl
	Id       string        // --id
	TtlSet   bool          // --ttl was given
	Wait     time.Duration // --wait
	Priority string        // --priority
}

func runLeaseAcquire(ctx context.Context, s *session, opts leaseAcquireOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	typ := lease.Exclusive
	if opts.Shared {
		typ = lease.Shared
	}
	ttl := opts.Ttl
	if opts.Id != "" && !opts.TtlSet {
		ttl = 0 // a renewal keeps the lease's own time to live
	}
	res, err := s.store.Leases().Acquire(ctx, a[0], lease.Options{
		Type: typ, TTL: ttl, ID: opts.Id, Wait: opts.Wait, Priority: opts.Priority,
	}, s.writeOptions())
	if err != nil {
		return err
	}
	return s.done(res, "%s %s %s (%s) until %s, commit %s", pastTense(res.Change), a[0], res.Lease.ID, res.Lease.Type,
		res.Lease.ExpiresAt.UTC().Format(time.RFC3339), shortHash(res.Mutation.Commit))
}

// leaseRenewOptions are the flags runLeaseRenew reads.
type leaseRenewOptions struct {
	Id  string        // --id
	Ttl time.Duration // --ttl
}

func runLeaseRenew(ctx context.Context, s *session, opts leaseRenewOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	res, err := s.store.Leases().Renew(ctx, a[0], opts.Id, opts.Ttl, s.writeOptions())
	if err != nil {
		return err
	}
	return s.done(res, "renewed %s %s until %s, commit %s", a[0], res.Lease.ID,
		res.Lease.ExpiresAt.UTC().Format(time.RFC3339), shortHash(res.Mutation.Commit))
}

// leaseReleaseOptions are the flags runLeaseRelease reads.
type leaseReleaseOptions struct {
	Id     string // --id
	Force  bool   // --force
	Reason string // --reason
}

func runLeaseRelease(ctx context.Context, s *session, opts leaseReleaseOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	rel, err := s.store.Leases().Release(ctx, a[0], lease.ReleaseOptions{
		ID: opts.Id, Force: opts.Force, Reason: opts.Reason,
	}, s.writeOptions())
	if err != nil {
		return err
	}
	var what []string
	for _, l := range rel.Leases {
		what = append(what, l.ID+" of "+l.Holder)
	}
	for _, q := range rel.Requests {
		what = append(what, "the wait "+q.ID+" of "+q.Requester)
	}
	return s.done(rel, "released %s %s, commit %s", a[0], strings.Join(what, ", "), shortHash(rel.Mutation.Commit))
}

func runLeaseLs(ctx context.Context, s *session) error {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return err
	}
	if err := s.mayRead(ctx, lease.Dir+"/"); err != nil {
		return err
	}
	infos, err := s.store.Leases().List(ctx, argAt(a, 0), s.readOptions())
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, infos)
	}
	for _, in := range infos {
		expired := map[string]bool{}
		for _, id := range in.Expired {
			expired[id] = true
		}
		for _, l := range in.Locks {
			state := "until " + l.ExpiresAt.UTC().Format(time.RFC3339)
			if expired[l.ID] {
				state = "expired " + l.ExpiresAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(s.out, "%-24s %-9s %-16s %s  %s\n", in.Resource, l.Type, l.Holder, state, l.ID)
		}
		for i, q := range in.WaitQueue {
			fmt.Fprintf(s.out, "%-24s waiting#%d %-16s %s, %s priority, since %s\n", in.Resource, i+1, q.Requester, q.Type, q.Priority, q.RequestedAt.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// pastTense says what an acquire did: acquired, renewed, upgraded or
// downgraded.
func pastTense(change string) string {
	if strings.HasSuffix(change, "e") {
		return change + "d"
	}
	return change + "ed"
}
