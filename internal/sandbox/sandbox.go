// Package sandbox finds the sandbox profile an agent works under: the one
// the access policy at the head of the store's branch gives it. The
// disposable tiers (frame, cache) and the read checks ask it, on every
// call, so the parsed policy is kept while the head stays.
package sandbox

import (
	"context"
	"errors"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/store"
)

var memo struct {
	sync.Mutex
	dir  string
	head plumbing.Hash
	pol  *policy.Policy
}

// Policy is the access policy at the head of st's branch; nil when the
// store has none (or no commit yet).
func Policy(ctx context.Context, st *store.Store) (*policy.Policy, error) {
	head, err := st.Resolve("", "")
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // a branch without a commit has no policy
	}
	if err != nil {
		return nil, err
	}
	memo.Lock()
	if memo.dir == st.Dir() && memo.head == head {
		p := memo.pol
		memo.Unlock()
		return p, nil
	}
	memo.Unlock()
	p, err := st.PolicyAt(head)
	if err != nil {
		return nil, err
	}
	memo.Lock()
	memo.dir, memo.head, memo.pol = st.Dir(), head, p
	memo.Unlock()
	return p, nil
}

// ProfileOf is agent's profile at the head of st's branch: nil when the
// agent has none, or is "" (a caller that names no agent: a Go program
// acting for itself).
func ProfileOf(ctx context.Context, st *store.Store, agent string) (*policy.Profile, error) {
	if agent == "" {
		return nil, nil
	}
	p, err := Policy(ctx, st)
	if err != nil || p == nil {
		return nil, err
	}
	pr, _ := p.ProfileOf(agent)
	return pr, nil
}

// CheckRead is nil when agent may read file (a store path) under its
// profile.
func CheckRead(ctx context.Context, st *store.Store, agent, file string) error {
	pr, err := ProfileOf(ctx, st, agent)
	if err != nil {
		return err
	}
	return pr.CheckRead(agent, file)
}
