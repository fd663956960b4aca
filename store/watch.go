package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// cursorLimit bounds the commits a watch's cursor names. Past it the
// oldest go: what only they covered may be streamed again, never missed.
const cursorLimit = 16

// Watch calls fn with each mutation the branch gains, in commit order
// (each commit after its parents), as it lands, until fn returns false
// (Watch then returns nil) or ctx ends. It is the swarm shared state
// specification's subscription made of the history: the branch is read
// every Poll, and every commit it holds beyond what was streamed is
// streamed, the commits a merge brought in included, then the merge.
//
// The watch keeps a cursor: the commits whose whole history it has passed
// (OnCursor). A consumer that restarts passes it back as After (or the
// last commit it handled as From) and misses nothing. If the branch is
// reset, Watch tells OnReset, and OnDropped which commits left the branch,
// and goes on along the new line, streaming its commits after the fork; a
// commit streamed before is not streamed again when it comes back. A
// commit that was on the branch for less than a poll, reset away before
// the branch was read, is in no history the watch can read: git keeps no
// record of it.
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
	lo := LogOptions{Agent: wo.Agent, Op: wo.Op, Source: wo.Source, Correlation: wo.Correlation, Event: wo.Event}
	// cursor: the commits whose history has been passed; line: the
	// commits the branch was last read at, whose leaving is a reset.
	var cursor []plumbing.Hash
	if len(wo.After) > 0 {
		for _, rev := range wo.After {
			h, err := s.Resolve(rev, "")
			if (errors.Is(err, ErrNotFound) || errors.Is(err, repo.ErrNotFound)) && len(wo.After) > 1 {
				// Reset away and pruned since: the others still say
				// what was streamed; what only it covered comes again.
				continue
			}
			if err != nil {
				return err
			}
			cursor = append(cursor, h)
		}
		if len(cursor) == 0 {
			return fmt.Errorf("%w: none of the cursor's commits is in the store any more", ErrNotFound)
		}
	} else {
		h, err := s.Resolve(wo.From, wo.Branch)
		if err != nil {
			return err
		}
		cursor = []plumbing.Hash{h}
	}
	line := slices.Clone(cursor)
	last := cursor[len(cursor)-1]
	for {
		head, err := s.Resolve("", wo.Branch)
		if err != nil {
			return err
		}
		if head != last || len(line) != 1 {
			var gone []plumbing.Hash
			for _, l := range line {
				if ok, err := s.repo.IsAncestor(l, head); err != nil {
					return err
				} else if !ok {
					gone = append(gone, l)
				}
			}
			if len(gone) > 0 {
				if wo.OnReset != nil && !wo.OnReset(last.String(), head.String()) {
					return nil
				}
				if wo.OnDropped != nil {
					dropped, err := s.Range(ctx, gone, []plumbing.Hash{head}, DroppedLimit)
					if err != nil {
						return err
					}
					if !wo.OnDropped(hexes(dropped)) {
						return nil
					}
				}
			}
			news, err := s.Range(ctx, []plumbing.Hash{head}, cursor, 0)
			if err != nil {
				return err
			}
			for _, c := range news {
				more := true
				if wo.Path == "" || s.Changed(c, wo.Path) {
					if m, ok := lo.keep(c); ok {
						more = fn(m)
					}
				}
				cursor = slices.DeleteFunc(cursor, func(h plumbing.Hash) bool { return slices.Contains(c.Parents, h) })
				cursor = append(cursor, c.Hash)
				if wo.OnCursor != nil {
					wo.OnCursor(hashStrings(cursor))
				}
				if !more {
					return nil
				}
			}
			if cursor, err = s.compactCursor(cursor, head); err != nil {
				return err
			}
			if wo.OnCursor != nil && len(news) > 0 {
				wo.OnCursor(hashStrings(cursor))
			}
			line, last = []plumbing.Hash{head}, head
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// compactCursor drops from the cursor the commits head's history holds
// when head is in it (head covers them), and keeps it to cursorLimit.
func (s *Store) compactCursor(cursor []plumbing.Hash, head plumbing.Hash) ([]plumbing.Hash, error) {
	if len(cursor) <= 1 {
		return cursor, nil
	}
	if slices.Contains(cursor, head) {
		out := []plumbing.Hash{}
		for _, h := range cursor {
			if h == head {
				continue
			}
			if in, err := s.repo.IsAncestor(h, head); err != nil {
				return nil, err
			} else if !in {
				out = append(out, h) // off the branch: what came back is not streamed again
			}
		}
		cursor = append(out, head)
	}
	if len(cursor) > cursorLimit {
		cursor = cursor[len(cursor)-cursorLimit:]
	}
	return cursor, nil
}

func hexes(cs []*repo.Commit) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Hash.String()
	}
	return out
}

func hashStrings(hs []plumbing.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
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
