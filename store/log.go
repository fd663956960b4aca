package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
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
	// Value is set by a keyed log (LogOptions.Key): the key's old and new
	// value in this commit.
	Value *ValueChange `json:"value,omitempty"`
	// Signature is set when asked for (Signatures.Mark): whether the
	// commit is signed, and by whose key.
	Signature *policy.Verdict `json:"signature,omitempty"`
	// Warnings tell of what the write did not do though it succeeded: a
	// completion handler not trusted here, say. Each is also given to
	// WriteOptions.Warn.
	Warnings []string `json:"warnings,omitempty"`
	// ShallowBoundary: the commit is at the boundary of a shallow clone,
	// which lacks its parents. History stops here (as git log's does), and
	// what the commit changed cannot be told: a file or key first seen
	// here may be older.
	ShallowBoundary bool `json:"shallow_boundary,omitempty"`
}

// Warn records a warning on the mutation and tells wo.Warn.
func (m *Mutation) Warn(wo WriteOptions, msg string) {
	m.Warnings = append(m.Warnings, msg)
	if wo.Warn != nil {
		wo.Warn(msg)
	}
}

// Trailer is a commit trailer as shown in JSON output.
type Trailer struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func MutationOf(c *repo.Commit, _ string) *Mutation {
	tr := c.Trailers()
	m := &Mutation{
		Commit:          c.Hash.String(),
		Agent:           c.Author.Name,
		Time:            c.Author.When,
		MutationID:      tr.Get(TrailerMutationID),
		Subject:         c.Subject(),
		Source:          tr.Get(TrailerSource),
		Correlation:     tr.Get(TrailerCorrelation),
		ShallowBoundary: c.Shallow,
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

// OpBoundary is a keyed log's Op at a shallow clone's boundary commit.
const OpBoundary = "boundary"

// ValueChange is what one commit did to the key of a keyed log: the value
// before and after (absent when the key did not exist on that side).
type ValueChange struct {
	// Op is create, update, delete, or rename (moved with the file); at a
	// shallow clone's boundary, whose parent is not in the clone, it is
	// OpBoundary: the value is as of that commit, the change unknown.
	Op   string `json:"op"`
	File string `json:"file"`
	// From is the file's name before a move.
	From string          `json:"from,omitempty"`
	Key  string          `json:"key"`
	Old  json.RawMessage `json:"old,omitempty"`
	New  json.RawMessage `json:"new,omitempty"`
}

// Log calls fn for each mutation, newest first, from the revision, until fn
// returns false, the limit is reached or history ends. With a file, the
// index answers in time proportional to that file's (or key's) changes;
// without one, it walks history.
func (s *Store) Log(ctx context.Context, lo LogOptions, fn func(*Mutation) bool) error {
	if err := lo.Validate(); err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("%w: Log needs a function to call with each mutation", ErrUsage)
	}
	start, err := s.Resolve(lo.At, lo.Branch)
	if err != nil {
		return err
	}
	excluded, err := s.excluder(start, lo)
	if err != nil {
		return err
	}
	n := 0
	keep := lo.keep
	// emit reports whether the walk goes on.
	emit := func(m *Mutation) bool {
		n++
		return fn(m) && (lo.Limit == 0 || n < lo.Limit)
	}
	if lo.File != "" {
		return s.fileLog(ctx, start, lo, keep, emit, excluded)
	}
	if lo.AllParents {
		return s.walkAll(ctx, start, excluded, func(c *repo.Commit) (bool, error) {
			if !lo.Since.IsZero() && c.Committer.When.Before(lo.Since) {
				return true, nil
			}
			if m, ok := keep(c); ok {
				return emit(m), nil
			}
			return true, nil
		})
	}
	return s.repo.FirstParents(start, func(c *repo.Commit) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if !lo.Since.IsZero() && c.Committer.When.Before(lo.Since) {
			return false, nil // first-parent history is time-ordered enough to stop
		}
		if excluded != nil {
			// Along first parents, once one commit is reachable from
			// the excluded revision, all older ones are.
			if x, err := excluded(c.Hash); x || err != nil {
				return false, err
			}
		}
		if m, ok := keep(c); ok {
			return emit(m), nil
		}
		return true, nil
	})
}

// keep is the mutation of c when it passes the options' filters on
// time, agent, operation and trailers.
func (lo *LogOptions) keep(c *repo.Commit) (*Mutation, bool) {
	if !lo.Until.IsZero() && c.Committer.When.After(lo.Until) {
		return nil, false
	}
	if lo.Agent != "" && c.Author.Name != repo.IdentityName(lo.Agent) {
		return nil, false
	}
	m := MutationOf(c, "")
	if lo.Op != "" && !hasOp(m, lo.Op) {
		return nil, false
	}
	if (lo.Source != "" && m.Source != lo.Source) || (lo.Correlation != "" && m.Correlation != lo.Correlation) {
		return nil, false
	}
	if lo.Event != "" && !hasEvent(m, lo.Event) {
		return nil, false
	}
	return m, true
}

func (s *Store) fileLog(ctx context.Context, start plumbing.Hash, lo LogOptions, keep func(*repo.Commit) (*Mutation, bool), emit func(*Mutation) bool, excluded func(plumbing.Hash) (bool, error)) error {
	file, err := verbiage.CleanStorePath(lo.File)
	if err != nil {
		return err
	}
	key, err := verbiage.ParsePath(lo.Key)
	if err != nil {
		return err
	}
	for _, seg := range key {
		if seg.Wildcard {
			return fmt.Errorf("%w: log takes one key path, not a wildcard: %s", verbiage.ErrInvalidPath, lo.Key)
		}
	}
	ix := audit.Open(s.repo)
	return ix.Log(ctx, start, audit.LogOptions{File: file, Key: key, AllParents: lo.AllParents, Follow: lo.Follow}, func(h audit.Hit) (bool, error) {
		c, err := s.repo.ReadCommit(h.Commit)
		if err != nil {
			return false, err
		}
		if !lo.Since.IsZero() && c.Committer.When.Before(lo.Since) {
			return lo.AllParents, nil // first parents: time-ordered enough to stop
		}
		if excluded != nil {
			if x, err := excluded(c.Hash); x || err != nil {
				return lo.AllParents && err == nil, err
			}
		}
		m, ok := keep(c)
		if !ok {
			return true, nil
		}
		if len(key) > 0 {
			vc := &ValueChange{File: h.File, Key: key.String()}
			before := h.File
			if h.From != "" { // a move, by aiwg-state mv or plain git mv
				before, vc.From = h.From, h.From
			}
			for _, ch := range m.Changes {
				if ch.Operation == OpRename && ch.To == h.File {
					before, vc.From = ch.File, ch.File
				}
			}
			if v, ok, err := ix.ValueAt(c.Hash, h.File, key); err == nil && ok {
				vc.New = rawJSON(v)
			}
			if len(c.Parents) > 0 {
				if v, ok, err := ix.ValueAt(c.Parents[0], before, key); err == nil && ok {
					vc.Old = rawJSON(v)
				}
			}
			switch {
			case c.Shallow:
				vc.Op = OpBoundary
			case vc.From != "" && bytes.Equal(vc.Old, vc.New):
				vc.Op = OpRename
			case vc.Old == nil:
				vc.Op = OpCreate
			case vc.New == nil:
				vc.Op = OpDelete
			default:
				vc.Op = OpUpdate
			}
			m.Value = vc
		}
		return emit(m), nil
	})
}

func rawJSON(v any) json.RawMessage {
	b, err := objects.Encode(v)
	if err != nil {
		return nil
	}
	// Compact: a log line holds one value.
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return json.RawMessage(b)
	}
	return json.RawMessage(out.Bytes())
}

// excluder is LogOptions.Exclude as a test of a commit reachable from
// the log's start: whether the excluded revision reaches it too. Such a
// commit is a common ancestor of both, so an ancestor of one of their
// merge bases; the test walks from the commit to those bases, which for
// the commits of a branch under review is the length of the branch.
// nil when nothing is excluded.
func (s *Store) excluder(start plumbing.Hash, lo LogOptions) (func(plumbing.Hash) (bool, error), error) {
	if lo.Exclude == "" {
		return nil, nil
	}
	x, err := s.Resolve(lo.Exclude, lo.Branch)
	if err != nil {
		return nil, err
	}
	bases, err := s.repo.MergeBases(x, start)
	if err != nil {
		return nil, err
	}
	return func(c plumbing.Hash) (bool, error) {
		for _, b := range bases {
			if ok, err := s.repo.IsAncestor(c, b); ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}, nil
}

// walkAll visits every commit reachable from start, newest committer time
// first, as git log does; with excluded, not those it reports (nor their
// ancestors, which the excluded revision reaches as well).
func (s *Store) walkAll(ctx context.Context, start plumbing.Hash, excluded func(plumbing.Hash) (bool, error), fn func(*repo.Commit) (bool, error)) error {
	seen := map[plumbing.Hash]bool{start: true}
	var queue []*repo.Commit
	c, err := s.repo.ReadCommit(start)
	if err != nil {
		return err
	}
	queue = append(queue, c)
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		best := 0
		for i, q := range queue {
			if q.Committer.When.After(queue[best].Committer.When) {
				best = i
			}
		}
		c := queue[best]
		queue = append(queue[:best], queue[best+1:]...)
		if excluded != nil {
			x, err := excluded(c.Hash)
			if err != nil {
				return err
			}
			if x {
				continue
			}
		}
		more, err := fn(c)
		if err != nil || !more {
			return err
		}
		for _, p := range c.Parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := s.repo.ReadCommit(p)
			if err != nil {
				return err
			}
			queue = append(queue, pc)
		}
	}
	return nil
}

func hasOp(m *Mutation, op string) bool {
	for _, c := range m.Changes {
		if c.Operation == op {
			return true
		}
	}
	return false
}

// EntryHash is the blob (or subtree) at file in a tree, zero when absent.
func (s *Store) EntryHash(root plumbing.Hash, file string) plumbing.Hash {
	e, err := s.repo.Lookup(root, file)
	if err != nil || e.IsDir() {
		return plumbing.ZeroHash
	}
	return e.Hash
}

// Show returns one mutation: a revision, or a mutation id (mut-xxxxxxxx)
// found through the index among the commits reachable from ro's branch
// (when two commits carry the id, the newest). ro.At is not read: rev
// names the commit.
//
// An RLM state export gives the nth change of a commit that changed several
// variables the id mut-xxxxxxxx.n; Show takes it and shows that commit.
func (s *Store) Show(ctx context.Context, rev string, ro ReadOptions) (*Mutation, error) {
	branch := ro.Branch
	if base, n, ok := strings.Cut(rev, "."); ok && verbiage.ValidID("mut", base) && positiveDecimal(n) {
		rev = base
	}
	if verbiage.ValidID("mut", rev) {
		head, err := s.Resolve("HEAD", branch)
		if err != nil {
			return nil, err
		}
		ix := audit.Open(s.repo)
		hs, err := ix.FindMutation(ctx, rev, head)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			c, err := s.repo.ReadCommit(h)
			if err != nil {
				return nil, err
			}
			if m := MutationOf(c, ""); m.MutationID == rev {
				return m, nil
			}
		}
		return nil, fmt.Errorf("mutation %s: %w", rev, ErrNotFound)
	}
	h, err := s.Resolve(rev, branch)
	if err != nil {
		return nil, err
	}
	c, err := s.repo.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	return MutationOf(c, ""), nil
}

// positiveDecimal: s is a decimal number from 1, without a leading zero.
func positiveDecimal(s string) bool {
	if s == "" || s[0] == '0' || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
