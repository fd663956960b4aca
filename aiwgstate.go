// Package aiwgstate opens an aiwg-state store with every feature wired in:
// a versioned state store for AI agents, kept in a dedicated git
// repository, where every mutation is one commit whose author is the agent
// and whose trailers say what it did.
//
// Open, Init and Clone put the core (package store: documents, history,
// branches, the access policy) together with the features' rules over
// writes, in order. Each feature is reached as a handle on the Store, as
// go-git reaches a worktree or a remote.
//
// The packages below are usable on their own: store (the core), verbiage
// (key paths and names), objects (the canonical JSON codec and document
// operations), repo (git objects, refs and transactions), merge/jsonmerge
// (three-way JSON merge).
package aiwgstate

import (
	"context"

	"github.com/aiwg/aiwg-state/cache"
	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/event"
	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// Store is an open store with its features. The core's methods (Get,
// Set, Apply, Log, Diff, Branches, …) are promoted from store.Store.
type Store struct {
	*store.Store
}

// Open opens the store at dir (see store.Open) with every feature's rules.
func Open(ctx context.Context, dir string, opts store.Options) (*Store, error) {
	st, err := store.Open(ctx, dir, wire(opts))
	if err != nil {
		return nil, err
	}
	return &Store{st}, nil
}

// Lend returns another handle on the open store, with options of its own
// (see store.Store.Lend): a server lends one to each command it runs at
// once, so their writes commit as one group.
func (s *Store) Lend(opts store.Options) (*Store, error) {
	st, err := s.Store.Lend(opts)
	if err != nil {
		return nil, err
	}
	return &Store{st}, nil
}

// Init creates a store at dir (see store.Init) and opens it with every
// feature's rules.
func Init(ctx context.Context, dir string, opts store.InitOptions) (*Store, error) {
	opts.Options = wire(opts.Options)
	st, err := store.Init(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	return &Store{st}, nil
}

// Clone clones the store at url into dir (see store.Clone) and opens it
// with every feature's rules.
func Clone(ctx context.Context, url, dir string, opts store.CloneOptions) (*Store, error) {
	opts.Options = wire(opts.Options)
	st, err := store.Clone(ctx, url, dir, opts)
	if err != nil {
		return nil, err
	}
	return &Store{st}, nil
}

// States is the RLM state API of the store: states, variables, Final,
// checkpoints, rollback and completion handlers (package rlm).
func (s *Store) States() *rlm.States { return rlm.New(s.Store) }

// Trajectories is the RLM trajectories API of the store (package
// trajectory).
func (s *Store) Trajectories() *trajectory.Trajectories { return trajectory.New(s.Store) }

// Leases is the store's leases: locks with a time to live on a resource
// (package lease).
func (s *Store) Leases() *lease.Leases { return lease.Of(s.Store) }

// Queues is the store's queues of messages (package queue).
func (s *Store) Queues() *queue.Queues { return queue.Of(s.Store) }

// Memory is the store's memory records (package memory).
func (s *Store) Memory() *memory.Memory { return memory.Of(s.Store) }

// Schemas is the store's document schemas: rules naming the JSON Schema
// the documents at given paths must meet.
func (s *Store) Schemas() *docschema.Schemas { return docschema.New(s.Store) }

// Merges is the store's merges: merging branches, the merge in progress
// and its conflicts, and the strategies .gitattributes assigns (package
// merge).
func (s *Store) Merges() *merge.Merges { return merge.New(s.Store) }

// Swarm is the store's remote workflows: pull, an agent's sync, a
// coordinator's integrate (package remote).
func (s *Store) Swarm() *remote.Swarm { return remote.New(s.Store) }

// Events is the store's event bus: emit, list and replay events, and
// durable subscribers (package event).
func (s *Store) Events() *event.Events { return event.Of(s.Store) }

// wire adds the features' guards and after-commit steps to opts, before
// any the caller gave.
func wire(opts store.Options) store.Options {
	opts.Guards = append(guards(), opts.Guards...)
	opts.After = append(afterCommit(), opts.After...)
	opts.FastForward = append(fastForward(), opts.FastForward...)
	opts.Fsck = append(fsckChecks(), opts.Fsck...)
	return opts
}

// guards are the features' rules over every write, in the order they run
// (after the core's own).
func guards() []store.Guard {
	return []store.Guard{
		trajectory.Guard,   // a linked trajectory exists
		lease.RecordGuard,  // leases/ files stay lease records
		memory.RecordGuard, // memory/ files stay memory records
		queue.RecordGuard,  // queues/ files stay queue messages
		lease.HolderGuard,  // others' leases are released by force only by a lease_admin
		docschema.Guard,    // ruled documents meet their JSON Schema
		event.RecordGuard,  // events/ files stay events, unchanged, from their writer
		frame.Guard,        // the frame and cache tiers are never committed
	}
}

// afterCommit is what the features do once a write is published, in order.
func afterCommit() []store.AfterCommit {
	return []store.AfterCommit{
		rlm.RunCompletion,      // completion handlers when a state's Final is set
		frame.EndCompletedRuns, // a completed trajectory's run ends: its frame is discarded
	}
}

// fastForward are the features' rules over a fast-forward, in order.
func fastForward() []store.FastForwardGuard {
	return []store.FastForwardGuard{
		docschema.FastForward, // ruled documents meet their JSON Schema
		frame.FastForward,     // the frame and cache tiers are never brought in
	}
}

// fsckChecks are the features' checks in Fsck, in order (after the
// core's).
func fsckChecks() []store.FsckCheck {
	return []store.FsckCheck{
		docschema.Fsck, // the schema rules, and the documents they rule
	}
}

// ValidateKnownFile checks a stored file against the rules of the kind of
// file its path says it is (the manifest, a trajectory iteration, a memory
// record, a queue message, an event), for the server-side hook, which runs it on
// every pushed file (a file that is not JSON with a nil body: the paths
// the frame and cache tiers reserve are refused whatever they hold). It returns the rule broken, or "" for a file none has
// anything to say on.
func ValidateKnownFile(path string, body []byte) (rule, detail string) {
	if body == nil {
		// Not JSON: only the rules of a path, whatever it holds.
		return frame.ValidateFile(path, nil)
	}
	for _, validate := range []func(string, []byte) (string, string){
		store.ValidateKnownFile,
		trajectory.ValidateFile,
		memory.ValidateFile,
		queue.ValidateFile,
		event.ValidateFile,
		frame.ValidateFile, // the frame and cache tiers' reserved paths
	} {
		if rule, detail := validate(path, body); rule != "" {
			return rule, detail
		}
	}
	return "", ""
}

// Snapshots is the store's snapshots of any of its state, as annotated
// tags, and their restores (package snapshot).
func (s *Store) Snapshots() *snapshot.Snapshots { return snapshot.New(s.Store) }

// Frames is the store's frame tier: one run's scratch values, never
// versioned, discarded when the run ends (package frame).
func (s *Store) Frames() *frame.Frames { return frame.Of(s.Store) }

// Cache is the store's cache tier on this machine: entries with a time to
// live, never versioned, bounded with LRU eviction (package cache).
func (s *Store) Cache() *cache.Cache { return cache.Of(s.Store) }
