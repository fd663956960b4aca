package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// indexCommit is the after-commit hook that keeps the changed-paths index
// (package audit) current: one record appended per write. Its failure does
// not fail the write: the index is derived data, and a commit it lacks is
// indexed when a query first meets it.
func (s *Store) indexCommit(m *Mutation, _ WriteOptions, _ []Change) error {
	c, err := s.repo.ReadCommit(plumbing.NewHash(m.Commit))
	if err != nil {
		return nil
	}
	_ = audit.Open(s.repo).Add(c)
	return nil
}

// FoldIndex folds the per-key index's log of recent commits into its
// snapshot, as a query does every audit.DefaultFoldAt commits (a server
// runs it in a process of its own: see audit.FoldElsewhere).
func (s *Store) FoldIndex(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return audit.Open(s.repo).Fold()
}

// Reindex rebuilds the index from every branch, tag and remote-tracking
// ref; progress (when set) hears how far it got.
func (s *Store) Reindex(ctx context.Context, progress func(done, total int)) (audit.Stats, error) {
	refs, names, err := s.repo.Refs("refs/")
	if err != nil {
		return audit.Stats{}, err
	}
	var tips []plumbing.Hash
	for _, n := range names {
		if h, err := s.repo.Peel(refs[n]); err == nil {
			tips = append(tips, h)
		}
	}
	ix := audit.Open(s.repo)
	ix.Progress = progress
	if _, err := ix.Rebuild(ctx, tips); err != nil {
		return audit.Stats{}, err
	}
	return ix.Stats()
}

// BlameEntry is one leaf key of a document and the mutation that last set
// it.
type BlameEntry struct {
	Path       string          `json:"path"`
	Pointer    string          `json:"pointer"`
	Value      json.RawMessage `json:"value"`
	Commit     string          `json:"commit,omitempty"`
	Agent      string          `json:"agent,omitempty"`
	Time       time.Time       `json:"time"`
	MutationID string          `json:"mutation_id,omitempty"`
	// ShallowBoundary: the commit is a shallow clone's boundary, credited
	// with what it holds because the clone lacks the history before it
	// (git blame marks such lines with ^). The key may be older.
	ShallowBoundary bool `json:"shallow_boundary,omitempty"`
	// Signature is set when asked for (Signatures.Verify).
	Signature *policy.Verdict `json:"signature,omitempty"`
}

// BlameLine is one line of a document's text and the mutation that last
// changed it.
type BlameLine struct {
	Line       int       `json:"line"`
	Text       string    `json:"text"`
	Commit     string    `json:"commit,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	Time       time.Time `json:"time"`
	MutationID string    `json:"mutation_id,omitempty"`
	// ShallowBoundary: as BlameEntry's.
	ShallowBoundary bool `json:"shallow_boundary,omitempty"`
	// Signature is set when asked for (Signatures.Verify).
	Signature *policy.Verdict `json:"signature,omitempty"`
}

// who fills agent, time and mutation id from a commit, reading each commit
// once.
type who map[plumbing.Hash]*Mutation

func (w who) of(s *Store, h plumbing.Hash) *Mutation {
	if h.IsZero() {
		return &Mutation{}
	}
	if m, ok := w[h]; ok {
		return m
	}
	m := &Mutation{Commit: h.String()}
	if c, err := s.repo.ReadCommit(h); err == nil {
		m = MutationOf(c, "")
	}
	w[h] = m
	return m
}

// Blame returns, for every leaf key of a document (in document order), the
// commit, agent, time and mutation id that last set it, from ro's
// revision.
func (s *Store) Blame(ctx context.Context, file string, ro ReadOptions, bo BlameOptions) ([]BlameEntry, error) {
	clean, at, err := s.auditTarget(file, ro)
	if err != nil {
		return nil, err
	}
	ix := audit.Open(s.repo)
	blame := ix.Blame
	if bo.AllParents {
		blame = ix.BlameAllParents
	}
	bl, err := blame(ctx, at, clean)
	if err != nil {
		return nil, err
	}
	w := who{}
	out := make([]BlameEntry, len(bl))
	for i, b := range bl {
		v, _ := objects.Encode(b.Value)
		m := w.of(s, b.Commit)
		out[i] = BlameEntry{Path: b.Path.String(), Pointer: b.Path.Pointer(), Value: json.RawMessage(strings.TrimSpace(string(v))),
			Commit: m.Commit, Agent: m.Agent, Time: m.Time, MutationID: m.MutationID, ShallowBoundary: m.ShallowBoundary}
	}
	return out, nil
}

// BlameLines is Blame by lines of the stored text, as git blame reports.
func (s *Store) BlameLines(ctx context.Context, file string, ro ReadOptions) ([]BlameLine, error) {
	clean, at, err := s.auditTarget(file, ro)
	if err != nil {
		return nil, err
	}
	bl, err := audit.Open(s.repo).BlameLines(ctx, at, clean)
	if err != nil {
		return nil, err
	}
	w := who{}
	out := make([]BlameLine, len(bl))
	for i, b := range bl {
		m := w.of(s, b.Commit)
		out[i] = BlameLine{Line: b.Line, Text: b.Text, Commit: m.Commit, Agent: m.Agent, Time: m.Time, MutationID: m.MutationID, ShallowBoundary: m.ShallowBoundary}
	}
	return out, nil
}

func (s *Store) auditTarget(file string, ro ReadOptions) (string, plumbing.Hash, error) {
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	at, err := s.Resolve(ro.At, ro.Branch)
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	if _, err := s.repo.ReadFileAt(mustTree(s, at), clean); errors.Is(err, repo.ErrNotFound) {
		return "", plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "%s: no such document at %s", clean, RevName(ro))
	} else if err != nil {
		return "", plumbing.ZeroHash, err
	}
	return clean, at, nil
}

func mustTree(s *Store, h plumbing.Hash) plumbing.Hash {
	c, err := s.repo.ReadCommit(h)
	if err != nil {
		return plumbing.ZeroHash
	}
	return c.Tree
}

// BisectResult is the first mutation at which the predicate holds.
type BisectResult struct {
	Mutation  *Mutation `json:"mutation"`
	Predicate string    `json:"predicate"`
	// Reads is the number of states read, about log2 of the commits
	// between good and bad, plus the two ends.
	Reads int `json:"reads"`
}

// Bisect finds the first commit on Bad's first-parent history after Good
// at which the predicate holds, by binary search in O(log n) state reads.
func (s *Store) Bisect(ctx context.Context, o BisectOptions) (*BisectResult, error) {
	p, err := audit.ParsePredicate(o.Predicate)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	bad, err := s.Resolve(o.Bad, o.Branch)
	if err != nil {
		return nil, err
	}
	var good plumbing.Hash
	if o.Good != "" {
		if good, err = s.Resolve(o.Good, o.Branch); err != nil {
			return nil, err
		}
	}
	ix := audit.Open(s.repo)
	holds := func(h plumbing.Hash) (bool, error) {
		v, ok, err := ix.ValueAt(h, p.File, nil)
		if err != nil {
			return false, err
		}
		return p.Eval(v, ok), nil
	}
	reads := 1
	if ok, err := holds(bad); err != nil {
		return nil, err
	} else if !ok {
		return nil, errkind.Errorf(ErrNotFound, "%s does not hold at %s, so it has no first commit where it holds there (name as bad a revision where it does)", p, revOr(o.Bad, "HEAD"))
	}
	if !good.IsZero() {
		reads++
		if ok, err := holds(good); err != nil {
			return nil, err
		} else if ok {
			return nil, fmt.Errorf("%s already holds at good %s: %w", p, o.Good, ErrUsage)
		}
	}
	first, n, err := ix.Bisect(ctx, good, bad, holds)
	if err != nil {
		if errors.Is(err, audit.ErrNotAncestor) {
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		return nil, err
	}
	c, err := s.repo.ReadCommit(first)
	if err != nil {
		return nil, err
	}
	return &BisectResult{Mutation: MutationOf(c, ""), Predicate: p.String(), Reads: reads + n}, nil
}

func revOr(rev, def string) string {
	if rev == "" {
		return def
	}
	return rev
}
