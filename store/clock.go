package store

import (
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/repo"
)

// Every commit the store writes carries a hybrid logical clock in its
// Clock trailer, past its parent's and, for a merge, past the merged
// side's: the merge strategies (package merge/jsonmerge, where the clock
// is defined) order two writes by it.

// TrailerClock carries the commit's hybrid logical clock
// (jsonmerge.Clock.String): last-write-wins orders writes by it.
const TrailerClock = "Clock"

// CommitClock is the hybrid logical clock of a commit: its Clock trailer,
// or for commits without one (plain git, older stores) the committer time
// and the author's name. The git driver reads the same.
func CommitClock(c *repo.Commit) jsonmerge.Clock {
	return ClockFrom(c.Message, c.Committer.When.Unix(), c.Author.Name)
}

// ClockFrom computes a commit's clock from its message, its committer time
// in seconds (git's %ct) and its author's name (%an).
func ClockFrom(message string, committerUnix int64, author string) jsonmerge.Clock {
	if v := repo.ParseTrailers(message).Get(TrailerClock); v != "" {
		if c, err := jsonmerge.ParseClock(v); err == nil {
			return c
		}
	}
	return jsonmerge.Clock{Wall: committerUnix * int64(time.Second), Agent: author}
}

// nextClock is the clock of a new commit on parent by agent at now: later
// than the parent's, and than merged's when a branch is merged in.
func (s *Store) nextClock(parent plumbing.Hash, merged plumbing.Hash, agent string, now time.Time) jsonmerge.Clock {
	var c jsonmerge.Clock
	if !parent.IsZero() {
		if pc, err := s.repo.ReadCommit(parent); err == nil {
			c = CommitClock(pc)
		}
	}
	c.Agent = agent
	if !merged.IsZero() {
		if mc, err := s.repo.ReadCommit(merged); err == nil {
			return c.Observe(CommitClock(mc), now.UnixNano())
		}
	}
	return c.Tick(now.UnixNano())
}
