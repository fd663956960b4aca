package store

import (
	"bytes"
	"container/heap"
	"context"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// revSlop is how many more commits the walk of Range reads once every
// commit left to read is known to be excluded, as git rev-list does: a
// clock that went back could otherwise hide an excluded path behind a
// newer commit. What slips past it is streamed twice, never missed.
const revSlop = 5

// Range lists the commits reachable from include and from none of
// exclude (git rev-list include ^exclude), every parent followed, in
// commit order: each commit after its parents, and otherwise oldest
// committer time first (ties by id). It stops at limit commits when limit
// is above zero, keeping the oldest.
//
// The walk reads from the newest commit down and stops once only
// excluded commits are left, so its cost follows the commits listed, not
// the whole history. A commit is never left out wrongly: an exclusion
// only flows down from exclude; a commit clock skew keeps the walk from
// proving excluded is listed, which a consumer that must see every commit
// at least once accepts.
func (s *Store) Range(ctx context.Context, include, exclude []plumbing.Hash, limit int) ([]*repo.Commit, error) {
	if len(include) == 1 && len(exclude) == 1 {
		if line, ok, err := s.linearRange(include[0], exclude[0], limit); err != nil || ok {
			return line, err
		}
	}
	const (
		queuedFlag uint8 = 1 << iota
		uninteresting
		listed
	)
	flags := map[plumbing.Hash]uint8{}
	commits := map[plumbing.Hash]*repo.Commit{}
	q := &timeQueue{}
	push := func(h plumbing.Hash, mark uint8) error {
		f := flags[h]
		if f&mark == mark && f&queuedFlag != 0 {
			return nil
		}
		if mark == uninteresting && f&uninteresting == 0 && f&queuedFlag != 0 && f&listed != 0 {
			// Read as wanted before an exclusion reached it: read again,
			// to pass the exclusion on to its parents.
			flags[h] = f | uninteresting
			heap.Push(q, timed{commits[h]})
			return nil
		}
		flags[h] = f | mark
		if f&queuedFlag != 0 {
			return nil // queued already: the mark is read when it is popped
		}
		c, ok := commits[h]
		if !ok {
			var err error
			if c, err = s.repo.ReadCommit(h); err != nil {
				return err
			}
			commits[h] = c
		}
		flags[h] |= queuedFlag
		heap.Push(q, timed{c})
		return nil
	}
	for _, h := range exclude {
		if h.IsZero() {
			continue
		}
		if err := push(h, uninteresting); err != nil {
			return nil, err
		}
	}
	for _, h := range include {
		if h.IsZero() {
			continue
		}
		if err := push(h, 0); err != nil {
			return nil, err
		}
	}
	slop := revSlop
	// oldest is the oldest commit time listed: an excluded commit as new
	// may still reach a listed one, so the walk goes on past it.
	var oldest time.Time
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := heap.Pop(q).(timed).c
		f := flags[c.Hash]
		if f&uninteresting != 0 {
			for _, p := range c.Parents {
				if err := push(p, uninteresting); err != nil && !c.Shallow {
					return nil, err
				}
			}
		} else if f&listed == 0 {
			flags[c.Hash] |= listed
			if oldest.IsZero() || c.Committer.When.Before(oldest) {
				oldest = c.Committer.When
			}
			if !c.Shallow {
				for _, p := range c.Parents {
					if err := push(p, 0); err != nil {
						return nil, err
					}
				}
			}
		}
		if q.onlyExcluded(flags, uninteresting) && (oldest.IsZero() || q.newest().Before(oldest)) {
			if slop--; slop <= 0 {
				break
			}
		} else {
			slop = revSlop
		}
	}
	var out []*repo.Commit
	in := map[plumbing.Hash]bool{}
	for h, f := range flags {
		if f&listed != 0 && f&uninteresting == 0 {
			in[h] = true
		}
	}
	// Commit order: Kahn's walk over the listed commits, the oldest ready
	// commit first.
	waiting := map[plumbing.Hash]int{}
	children := map[plumbing.Hash][]plumbing.Hash{}
	ready := &timeQueue{oldest: true}
	for h := range in {
		for _, p := range commits[h].Parents {
			if in[p] {
				waiting[h]++
				children[p] = append(children[p], h)
			}
		}
		if waiting[h] == 0 {
			heap.Push(ready, timed{commits[h]})
		}
	}
	for ready.Len() > 0 {
		c := heap.Pop(ready).(timed).c
		out = append(out, c)
		if limit > 0 && len(out) == limit {
			break
		}
		for _, ch := range children[c.Hash] {
			if waiting[ch]--; waiting[ch] == 0 {
				heap.Push(ready, timed{commits[ch]})
			}
		}
	}
	return out, nil
}

// linearRangeMax bounds the walk of linearRange.
const linearRangeMax = 1000

// linearRange is Range's answer when from's history down to to is a line
// of commits of one parent each (a watch's usual case): that line, oldest
// first. ok is false when it is not, or is longer than linearRangeMax.
func (s *Store) linearRange(from, to plumbing.Hash, limit int) (_ []*repo.Commit, ok bool, _ error) {
	var line []*repo.Commit
	for h := from; h != to; {
		if len(line) == linearRangeMax {
			return nil, false, nil
		}
		c, err := s.repo.ReadCommit(h)
		if err != nil {
			return nil, false, err
		}
		if len(c.Parents) != 1 || c.Shallow {
			return nil, false, nil
		}
		line = append(line, c)
		h = c.Parents[0]
	}
	slices.Reverse(line)
	if limit > 0 && len(line) > limit {
		line = line[:limit]
	}
	return line, true, nil
}

type timed struct{ c *repo.Commit }

// timeQueue pops the newest commit first (the oldest, when oldest is
// set); ties by id, so that runs are deterministic.
type timeQueue struct {
	items  []timed
	oldest bool
}

func (q *timeQueue) Len() int { return len(q.items) }
func (q *timeQueue) Less(i, j int) bool {
	a, b := q.items[i].c, q.items[j].c
	if !a.Committer.When.Equal(b.Committer.When) {
		return a.Committer.When.After(b.Committer.When) != q.oldest
	}
	return bytes.Compare(a.Hash[:], b.Hash[:]) < 0
}
func (q *timeQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *timeQueue) Push(x any)    { q.items = append(q.items, x.(timed)) }
func (q *timeQueue) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}

// newest is the newest commit time queued (the queue is not empty).
func (q *timeQueue) newest() time.Time {
	var t time.Time
	for _, it := range q.items {
		if it.c.Committer.When.After(t) {
			t = it.c.Committer.When
		}
	}
	return t
}

func (q *timeQueue) onlyExcluded(flags map[plumbing.Hash]uint8, excluded uint8) bool {
	for _, t := range q.items {
		if flags[t.c.Hash]&excluded == 0 {
			return false
		}
	}
	return true
}
