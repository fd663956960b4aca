// Package sandbox finds the sandbox profile an agent works under: the one
// the access policy in force gives it, that of the store's default branch
// (store.PolicyHead), whatever branch or revision a command opens or
// reads: a profile an agent could leave with -b or --at bounds nothing. The
// disposable tiers (frame, cache) and the read checks ask it, on every
// call, so the parsed policy is kept while the head stays.
package sandbox

import (
	"context"
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

// Policy is the access policy in force (at store.PolicyHead); nil when
// the store has none (or no commit yet). It fails (ErrNoPolicyHead, or the
// broken policy's error) when that policy cannot be read.
func Policy(ctx context.Context, st *store.Store) (*policy.Policy, error) {
	head, err := st.PolicyHead()
	if err != nil {
		return nil, err
	}
	if head.IsZero() {
		return nil, nil // no commit at all: no policy
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

// ProfileOf is agent's profile under the policy in force: nil when the
// agent has none, or is "" (a caller that names no agent: a Go program
// acting for itself). An agent that names itself is refused when the
// policy in force cannot be read, never let through with no profile.
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
