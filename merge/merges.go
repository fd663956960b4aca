package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// Merges is the merge API of one store (aiwgstate.Store.Merges): merging
// branches, the merge in progress (its conflicts, their resolution,
// continue and abort), the check of a merge commit, and the strategies
// .gitattributes assigns.
type Merges struct{ s *store.Store }

// New returns the merge API of s.
func New(s *store.Store) *Merges { return &Merges{s: s} }

// TrailerMerged names the branch or revision merged in.
const TrailerMerged = "Merged"

// MergeOptions configure a merge.
type MergeOptions struct {
	// Into is the branch merged into ("" = the store's default branch).
	Into string
	// Strategy, when set, settles every path with this strategy instead
	// of the .gitattributes of the branch merged into.
	Strategy jsonmerge.Strategy
	// DryRun computes and reports the merge without writing anything
	// (a criss-cross history may still write its virtual base's objects,
	// which no ref keeps). Conflicts still make the error wrap
	// store.ErrConflict, so a dry run tells whether the merge would settle.
	DryRun bool
	// NoFF makes a merge commit even when a fast-forward would do.
	NoFF bool
	// FirstParent keeps the branch's first-parent history: it
	// fast-forwards only over commits whose first-parent chain holds its
	// head, and otherwise makes a merge commit whose first parent is its
	// head, so that log and blame on it keep crediting what it had to
	// whoever wrote it. Integrate merges this way.
	FirstParent bool
	// Write says who merges; Message replaces the subject. Its Branch,
	// when set, is the branch merged into, as Into is (they must agree).
	Write store.WriteOptions
	// UpstreamFirst: the merge is of the branch's own upstream (a pull),
	// and its commit takes the upstream as first parent
	// (repo.CommitInfo.UpstreamFirst), so the server's branch moves only
	// by commits whose first-parent chain holds its head.
	UpstreamFirst bool
}

// Merge statuses.
const (
	MergeUpToDate    = "up-to-date"
	MergeFastForward = "fast-forward"
	MergeCommitted   = "merged"
	MergeConflicts   = "conflicts"
)

// MergeResult reports a merge.
type MergeResult struct {
	Into   string   `json:"into"`
	From   string   `json:"from"`
	Ours   string   `json:"ours"`
	Theirs string   `json:"theirs"`
	Bases  []string `json:"bases"`
	// Status is up-to-date, fast-forward, merged or conflicts.
	Status string          `json:"status"`
	DryRun bool            `json:"dry_run,omitempty"`
	Commit *store.Mutation `json:"commit,omitempty"`
	// Files are the paths whose merged content differs from ours.
	Files     []MergedPath    `json:"files"`
	Conflicts []ConflictEntry `json:"conflicts,omitempty"`
}

// MergedPath is one path the merge changes on the branch merged into.
type MergedPath struct {
	Path string `json:"path"`
	// From is "theirs" (changed on their side only) or "merged".
	From    string `json:"from"`
	Deleted bool   `json:"deleted,omitempty"`
}

// ConflictEntry is one thing left to resolve: a key of a document, or a
// whole file when Key is empty and Reason says why it could not be merged
// key by key. Absent sides are flagged rather than shown as null.
type ConflictEntry struct {
	File          string          `json:"file"`
	Key           string          `json:"key"`
	Reason        string          `json:"reason"`
	Strategy      string          `json:"strategy,omitempty"`
	Base          json.RawMessage `json:"base,omitempty"`
	Ours          json.RawMessage `json:"ours,omitempty"`
	Theirs        json.RawMessage `json:"theirs,omitempty"`
	BaseMissing   bool            `json:"base_missing,omitempty"`
	OursMissing   bool            `json:"ours_missing,omitempty"`
	TheirsMissing bool            `json:"theirs_missing,omitempty"`
}

// branchOf is the branch a merge works on: the one it names (Into), else
// the write options' Branch, which every other write takes; two different
// names are refused rather than one silently ignored.
func branchOf(named string, wo store.WriteOptions) (string, error) {
	switch {
	case named == "":
		return wo.Branch, nil
	case wo.Branch != "" && wo.Branch != named:
		return "", fmt.Errorf("%w: the merge is into %s, but its WriteOptions.Branch is %s", store.ErrUsage, named, wo.Branch)
	}
	return named, nil
}

// Validate refuses a branch named twice, differently (Into and
// Write.Branch); UnchangedSince, which a fast-forward writes no commit to
// check on; a strategy the rules do not know; and what WriteOptions
// refuses.
func (mo *MergeOptions) Validate() error {
	if _, err := branchOf(mo.Into, mo.Write); err != nil {
		return err
	}
	if mo.Write.UnchangedSince != nil {
		return fmt.Errorf("%w: UnchangedSince is for writes of files; a merge takes Expect", store.ErrUsage)
	}
	if mo.Strategy != "" {
		if _, err := jsonmerge.ParseStrategy(string(mo.Strategy)); err != nil {
			return err
		}
	}
	return mo.Write.Validate()
}

// Merge merges the revision from (a branch, usually) into mo.Into. When
// the branch merged into already contains from, nothing happens; when it
// is an ancestor of from, the branch fast-forwards (unless NoFF); otherwise
// the trees are merged three ways against the merge base and the result is
// committed with two parents. When conflicts remain, the merge is kept in
// progress (see store.MergeRefPrefix), the branch is left as it was, and the
// error wraps store.ErrConflict; the result lists the conflicts.
func (m *Merges) Merge(ctx context.Context, from string, mo MergeOptions) (*MergeResult, error) {
	if err := mo.Validate(); err != nil {
		return nil, err
	}
	into, _ := branchOf(mo.Into, mo.Write)
	intoRef, err := m.s.WriteRef(into)
	if err != nil {
		return nil, err
	}
	if busy, err := m.s.HasConflicts(intoRef); err != nil {
		return nil, err
	} else if busy {
		return nil, &store.MergeInProgressError{Branch: shortBranch(intoRef)}
	}
	ours, err := m.s.Repo().Ref(intoRef)
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", shortBranch(intoRef), err)
	}
	if mo.Write.Expect != nil {
		// A fast-forward writes no commit for the commit's own check: the
		// expectation is held here, for every outcome.
		want, err := m.s.Resolve(*mo.Write.Expect, into)
		if err != nil {
			return nil, err
		}
		if want != ours {
			return nil, &repo.StaleError{Ref: intoRef, Expected: want, Current: ours}
		}
	}
	theirs, err := m.s.Resolve(from, into)
	if err != nil {
		return nil, err
	}
	bases, err := m.mergeBases(ours, theirs, shortBranch(intoRef), from)
	if err != nil {
		return nil, err
	}
	res := &MergeResult{Into: shortBranch(intoRef), From: from, Ours: ours.String(), Theirs: theirs.String(), Bases: hashStrings(bases), DryRun: mo.DryRun, Files: []MergedPath{}}
	if len(bases) == 1 && bases[0] == theirs {
		res.Status = MergeUpToDate
		return res, nil
	}
	// What the merge brings is judged before anything moves, as a server
	// judges a push (mergepolicy.go).
	if err := m.s.CheckBrought(ours, theirs); err != nil {
		return nil, err
	}
	ff := len(bases) == 1 && bases[0] == ours && !mo.NoFF
	if ff && mo.FirstParent {
		if ff, err = m.onFirstParents(ours, theirs); err != nil {
			return nil, err
		}
	}
	if ff {
		res.Status = MergeFastForward
		if files, err := m.s.Repo().DiffTrees(m.s.TreeOf(ours), m.s.TreeOf(theirs)); err == nil {
			for _, f := range files {
				res.Files = append(res.Files, MergedPath{Path: f.Path, From: "theirs", Deleted: f.New.IsZero()})
			}
		}
		if mo.DryRun {
			return res, nil
		}
		if err := m.s.CheckFastForward(ours, theirs); err != nil {
			return nil, err
		}
		return res, m.s.Repo().UpdateRef(ctx, intoRef, ours, theirs)
	}
	tr, err := m.mergeTrees(ours, theirs, bases, mo.Strategy)
	if err != nil {
		return nil, err
	}
	for _, f := range tr.Files {
		res.Files = append(res.Files, MergedPath{Path: f.Path, From: f.From, Deleted: f.Missing})
	}
	res.Conflicts = conflictEntries(tr.Conflicts)
	if len(tr.Conflicts) > 0 {
		res.Status = MergeConflicts
		if mo.DryRun {
			return res, fmt.Errorf("%w: %d conflict(s) in %d file(s) (dry run: nothing written)", store.ErrConflict, len(res.Conflicts), len(tr.Conflicts))
		}
		if err := m.startMerge(ctx, intoRef, from, ours, theirs, bases, mo, tr); err != nil {
			return nil, err
		}
		return res, &ConflictsError{Conflicts: len(res.Conflicts), Files: len(tr.Conflicts)}
	}
	res.Status = MergeCommitted
	if mo.DryRun {
		return res, nil
	}
	staged := make([]stagedFile, len(tr.Files))
	for i, f := range tr.Files {
		staged[i] = stagedFile{path: f.Path, id: f.ID, data: f.Data, missing: f.Missing}
	}
	mut, err := m.commitMerge(ctx, intoRef, store.MergeCommit{Ours: ours, Theirs: theirs, UpstreamFirst: mo.UpstreamFirst}, from, staged, mo.Write, nil)
	res.Commit = mut
	return res, err
}

// onFirstParents reports whether ours is on the first-parent chain of
// theirs: a fast-forward from ours to theirs then keeps every commit of
// the branch's first-parent history on it.
func (m *Merges) onFirstParents(ours, theirs plumbing.Hash) (bool, error) {
	for h := theirs; ; {
		if h == ours {
			return true, nil
		}
		c, err := m.s.Repo().ReadCommit(h)
		if err != nil {
			return false, err
		}
		if len(c.Parents) == 0 {
			return false, nil
		}
		h = c.Parents[0]
	}
}

func shortBranch(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }

func hashStrings(hs []plumbing.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

// mergeBases is repo.MergeBases, refusing in a shallow clone to merge two
// histories whose common part lies beyond the boundary: with no base, the
// merge would take each side's files as added by both, and settle what
// one side deleted or changed as a conflict or a resurrection.
func (m *Merges) mergeBases(ours, theirs plumbing.Hash, oursName, theirsName string) ([]plumbing.Hash, error) {
	bases, err := m.s.Repo().MergeBases(ours, theirs)
	if err == nil && len(bases) == 0 && m.s.Repo().IsShallow() {
		return nil, &repo.ShallowError{Rev: "the common history of " + oursName + " and " + theirsName}
	}
	return bases, err
}

// stagedFile is a path a merge commit writes: content by blob id or bytes,
// or a deletion.
type stagedFile struct {
	path    string
	id      string
	data    []byte
	missing bool
}

// commitMerge writes the merge commit of theirs into the branch at ours
// through the store's commit path (write checks, author, Mutation-Id, one
// Operation: merge and Path per merged file, hooks after), with theirs as
// second parent and a Clock that has observed both sides
// (store.CommitMerge).
func (m *Merges) commitMerge(ctx context.Context, intoRef string, mc store.MergeCommit, from string, files []stagedFile, wo store.WriteOptions, extra repo.Trailers) (*store.Mutation, error) {
	wo.Branch = intoRef
	wo.Trailers = append(append(repo.Trailers{}, wo.Trailers...), extra...)
	subject := "merge " + from + " into " + shortBranch(intoRef)
	return m.s.CommitMerge(ctx, wo, mc, subject, func(tx *repo.Tx, rec *store.Recorder) error {
		for _, f := range files {
			switch {
			case f.missing:
				if ok, _ := tx.Exists(f.path); ok {
					if err := tx.Remove(f.path); err != nil {
						return err
					}
				}
			default:
				data := f.data
				if f.id != "" {
					var err error
					if data, err = m.s.Repo().ReadBlob(plumbing.NewHash(f.id)); err != nil {
						return err
					}
				}
				if err := tx.WriteFile(f.path, data); err != nil {
					return err
				}
			}
			rec.Add(store.OpMerge, f.path, "")
		}
		rec.Trailer(TrailerMerged, from)
		return nil
	})
}
