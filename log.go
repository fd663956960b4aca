package aiwgstate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Mutation is one commit of the store read as a mutation: who, when, what.
// Commits made with plain git have no trailers; their Changes are empty and
// their Subject says what the committer wrote.
type Mutation struct {
	Commit      string    `json:"commit"`
	Parents     []string  `json:"parents,omitempty"`
	Agent       string    `json:"agent"`
	Time        time.Time `json:"time"`
	MutationID  string    `json:"mutation_id,omitempty"`
	Subject     string    `json:"subject"`
	Changes     []Change  `json:"changes,omitempty"`
	Source      string    `json:"source,omitempty"`
	Correlation string    `json:"correlation_id,omitempty"`
	Trailers    []Trailer `json:"trailers,omitempty"`
}

// Trailer is a commit trailer as shown in JSON output.
type Trailer struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func mutationOf(c *repo.Commit, _ string) *Mutation {
	tr := c.Trailers()
	m := &Mutation{
		Commit:      c.Hash.String(),
		Agent:       c.Author.Name,
		Time:        c.Author.When,
		MutationID:  tr.Get(TrailerMutationID),
		Subject:     c.Subject(),
		Source:      tr.Get(TrailerSource),
		Correlation: tr.Get(TrailerCorrelation),
	}
	for _, p := range c.Parents {
		m.Parents = append(m.Parents, p.String())
	}
	for _, t := range tr {
		m.Trailers = append(m.Trailers, Trailer{Key: t.Key, Value: t.Value})
		switch {
		case strings.EqualFold(t.Key, TrailerOperation):
			m.Changes = append(m.Changes, Change{Operation: t.Value})
		case strings.EqualFold(t.Key, TrailerPath) && len(m.Changes) > 0:
			file, key, _ := strings.Cut(t.Value, "#")
			m.Changes[len(m.Changes)-1].File = file
			m.Changes[len(m.Changes)-1].Key = key
		case strings.EqualFold(t.Key, TrailerRenamedTo) && len(m.Changes) > 0:
			m.Changes[len(m.Changes)-1].To = t.Value
		}
	}
	return m
}

// LogOptions filter a log.
type LogOptions struct {
	ReadOptions
	// File keeps the commits that changed this file (compared with their
	// first parent, as git log --first-parent -- FILE does).
	File string
	// Agent keeps one agent's commits.
	Agent string
	// Since and Until bound the commit time (zero = unbounded).
	Since, Until time.Time
	// Op keeps commits with a change of this operation.
	Op string
	// Limit stops after this many mutations (0 = all).
	Limit int
}

// Log calls fn for each mutation, newest first, along first parents from
// the revision, until fn returns false, the limit is reached or history
// ends.
func (s *Store) Log(ctx context.Context, lo LogOptions, fn func(*Mutation) bool) error {
	start, err := s.Resolve(lo.At, lo.Branch)
	if err != nil {
		return err
	}
	file := ""
	if lo.File != "" {
		if file, err = verbiage.CleanStorePath(lo.File); err != nil {
			return err
		}
	}
	n := 0
	return s.repo.FirstParents(start, func(c *repo.Commit) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if !lo.Since.IsZero() && c.Committer.When.Before(lo.Since) {
			return false, nil // first-parent history is time-ordered enough to stop
		}
		if !lo.Until.IsZero() && c.Committer.When.After(lo.Until) {
			return true, nil
		}
		if lo.Agent != "" && c.Author.Name != lo.Agent {
			return true, nil
		}
		if file != "" {
			changed, err := s.changedFile(c, file)
			if err != nil || !changed {
				return err == nil, err
			}
		}
		m := mutationOf(c, "")
		if lo.Op != "" && !hasOp(m, lo.Op) {
			return true, nil
		}
		n++
		if !fn(m) {
			return false, nil
		}
		return lo.Limit == 0 || n < lo.Limit, nil
	})
}

func hasOp(m *Mutation, op string) bool {
	for _, c := range m.Changes {
		if c.Operation == op {
			return true
		}
	}
	return false
}

// changedFile compares the file's blob in c and in its first parent.
func (s *Store) changedFile(c *repo.Commit, file string) (bool, error) {
	now := s.entryHash(c.Tree, file)
	var before plumbing.Hash
	if len(c.Parents) > 0 {
		p, err := s.repo.ReadCommit(c.Parents[0])
		if err != nil {
			return false, err
		}
		before = s.entryHash(p.Tree, file)
	}
	return now != before, nil
}

func (s *Store) entryHash(root plumbing.Hash, file string) plumbing.Hash {
	e, err := s.repo.Lookup(root, file)
	if err != nil || e.IsDir() {
		return plumbing.ZeroHash
	}
	return e.Hash
}

// Show returns one mutation: a revision, or a mutation id (mut-xxxxxxxx)
// looked up along first parents of the branch.
func (s *Store) Show(ctx context.Context, rev, branch string) (*Mutation, error) {
	if verbiage.ValidID("mut", rev) {
		var found *Mutation
		err := s.Log(ctx, LogOptions{ReadOptions: ReadOptions{Branch: branch}}, func(m *Mutation) bool {
			if m.MutationID == rev {
				found = m
				return false
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		if found == nil {
			return nil, fmt.Errorf("mutation %s: %w", rev, ErrNotFound)
		}
		return found, nil
	}
	h, err := s.Resolve(rev, branch)
	if err != nil {
		return nil, err
	}
	c, err := s.repo.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	return mutationOf(c, ""), nil
}
