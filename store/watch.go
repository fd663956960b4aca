package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// watchMemory is how many streamed commits Watch remembers, so that a
// branch reset back and then forward again does not stream them twice.
const watchMemory = 4096

// Watch calls fn with each mutation the branch gains, oldest first, as it
// lands, until fn returns false (Watch then returns nil) or ctx ends. It
// is the swarm shared state specification's subscription made of the history: the branch is read
// every Poll, and the commits since the last one seen are walked along
// first parents (a merge is one mutation, as log shows it). A consumer
// that restarts passes the last commit it handled as From and misses
// nothing. If the branch is reset, Watch tells OnReset and goes on along
// the new line, streaming its commits after the fork; a commit streamed
// before is not streamed again (of the last 4,096). A commit that was on
// the branch for less than a poll, reset away before it, is not seen.
func (s *Store) Watch(ctx context.Context, wo WatchOptions, fn func(*Mutation) bool) error {
	if fn == nil {
		return fmt.Errorf("%w: Watch needs a function to call with each mutation", ErrUsage)
	}
	if err := wo.Validate(); err != nil {
		return err
	}
	if wo.Path != "" {
		p, err := verbiage.CleanStorePath(wo.Path)
		if err != nil {
			return err
		}
		wo.Path = p
	}
	poll := wo.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	lo := LogOptions{Agent: wo.Agent, Op: wo.Op, Source: wo.Source, Correlation: wo.Correlation}
	last, err := s.Resolve(wo.From, wo.Branch)
	if err != nil {
		return err
	}
	// guard: since a reset, the branch has not been past start again, so
	// a new commit may be one from before the watch began.
	start, guard := last, false
	seen := map[plumbing.Hash]bool{}
	var order []plumbing.Hash
	for {
		head, err := s.Resolve("", wo.Branch)
		if err != nil {
			return err
		}
		if head != last {
			ff, err := s.repo.IsAncestor(last, head)
			if err != nil {
				return err
			}
			if !ff && wo.OnReset != nil && !wo.OnReset(last.String(), head.String()) {
				return nil
			}
			guard = guard || !ff
			news, err := s.since(last, head)
			if err != nil {
				return err
			}
			for _, c := range news {
				if seen[c.Hash] {
					continue // streamed before a reset, back again
				}
				if guard {
					// After a reset the line may hold what came
					// before the watch began: not streamed.
					if old, err := s.repo.IsAncestor(c.Hash, start); err != nil {
						return err
					} else if old {
						continue
					}
				}
				seen[c.Hash] = true
				if order = append(order, c.Hash); len(order) > watchMemory {
					delete(seen, order[0])
					order = order[1:]
				}
				if wo.Path != "" && !s.Changed(c, wo.Path) {
					continue
				}
				if m, ok := lo.keep(c); ok && !fn(m) {
					return nil
				}
			}
			last = head
			if guard {
				if past, err := s.repo.IsAncestor(start, last); err == nil && past {
					guard = false
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// since lists the commits on head's first-parent line after last, oldest
// first: down to last, or to where head's line meets last's history.
func (s *Store) since(last, head plumbing.Hash) ([]*repo.Commit, error) {
	bases, err := s.repo.MergeBases(last, head)
	if err != nil {
		return nil, err
	}
	lastC, err := s.repo.ReadCommit(last)
	if err != nil {
		return nil, err
	}
	var out []*repo.Commit
	err = s.repo.FirstParents(head, func(c *repo.Commit) (bool, error) {
		if c.Hash == last || slices.Contains(bases, c.Hash) {
			return false, nil
		}
		if !c.Committer.When.After(lastC.Committer.When) {
			// Past the merge bases along first parents (last came in
			// through a merge's other parent): stop at last's history.
			if seen, err := s.repo.IsAncestor(c.Hash, last); err != nil || seen {
				return false, err
			}
		}
		out = append(out, c)
		return true, nil
	})
	slices.Reverse(out)
	return out, err
}

// Changed reports whether commit c Changed path (a file or a directory)
// from its first parent.
func (s *Store) Changed(c *repo.Commit, path string) bool {
	at := func(tree plumbing.Hash) plumbing.Hash {
		e, err := s.repo.Lookup(tree, path)
		if err != nil {
			return plumbing.ZeroHash
		}
		return e.Hash
	}
	var parent plumbing.Hash
	if len(c.Parents) > 0 {
		p, err := s.repo.ReadCommit(c.Parents[0])
		if err != nil {
			return true
		}
		parent = at(p.Tree)
	}
	return at(c.Tree) != parent
}
