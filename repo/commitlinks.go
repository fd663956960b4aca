package repo

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// maxLinks bounds the commit links kept (about 100 bytes each); past it
// the map starts over.
const maxLinks = 1 << 18

// commitLinks keeps what a history walk reads of a commit: its parents
// and committer time, as stored. Merge-base walks of a busy branch cross
// thousands of commits, more than the object cache holds, and a swarm's
// integrator walks the same stretch of main once per branch it merges;
// a commit's links never change, so they are kept apart from the object
// cache, small, and shared by every walk.
type commitLinks struct {
	mu sync.Mutex
	m  map[plumbing.Hash]commitLink
}

type commitLink struct {
	parents []plumbing.Hash
	when    int64
}

// links returns a commit's parents (none at a shallow clone's boundary,
// as ReadCommit has it) and its committer time in nanoseconds.
func (r *Repo) links(h plumbing.Hash) ([]plumbing.Hash, int64, error) {
	r.walkLinks.mu.Lock()
	l, ok := r.walkLinks.m[h]
	r.walkLinks.mu.Unlock()
	if !ok {
		c, err := r.readCommit(h)
		if err != nil {
			return nil, 0, err
		}
		l = commitLink{parents: c.Parents, when: c.Committer.When.UnixNano()}
		r.walkLinks.mu.Lock()
		if r.walkLinks.m == nil || len(r.walkLinks.m) >= maxLinks {
			r.walkLinks.m = make(map[plumbing.Hash]commitLink)
		}
		r.walkLinks.m[h] = l
		r.walkLinks.mu.Unlock()
	}
	if sh := r.shallowSet(); sh != nil && sh[h] {
		return nil, l.when, nil
	}
	return l.parents, l.when, nil
}
