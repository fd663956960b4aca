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

	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/store"
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

// wire adds the features' guards and after-commit steps to opts, before
// any the caller gave.
func wire(opts store.Options) store.Options {
	opts.Guards = append(guards(), opts.Guards...)
	opts.After = append(afterCommit(), opts.After...)
	opts.FastForward = append(fastForward(), opts.FastForward...)
	return opts
}

// guards are the features' rules over every write, in the order they run
// (after the core's own).
func guards() []store.Guard {
	return []store.Guard{}
}

// afterCommit is what the features do once a write is published, in order.
func afterCommit() []store.AfterCommit {
	return []store.AfterCommit{}
}

// fastForward are the features' rules over a fast-forward, in order.
func fastForward() []store.FastForwardGuard {
	return []store.FastForwardGuard{}
}

// Swarm is the store's remote workflows: pull, an agent's sync, a
// coordinator's integrate (package remote).
func (s *Store) Swarm() *remote.Swarm { return remote.New(s.Store) }

// Merges is the store's merges: merging branches, the merge in progress
// and its conflicts, and the strategies .gitattributes assigns (package
// merge).
func (s *Store) Merges() *merge.Merges { return merge.New(s.Store) }
