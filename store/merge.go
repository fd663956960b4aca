package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/docschema"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// TrailerMerged names the branch or revision merged in.
const TrailerMerged = "Merged"

// MergeRecordPrefix is where the record of a finished merge with
// conflicts is kept, under the merge commit's id: the conflicts as found
// and each resolve, one commit each (git log refs/aiwg/merge-records/<id>).
const MergeRecordPrefix = "refs/aiwg/merge-records/"

const (
	mergeStatePath = "merge.json"
	resultDir      = "result/"
)

// MergeOptions configure a merge.
type MergeOptions struct {
	// Into is the branch merged into ("" = the store's default branch).
	Into string
	// Strategy, when set, settles every path with this strategy instead
	// of the .gitattributes of the branch merged into.
	Strategy merge.Strategy
	// DryRun computes and reports the merge without writing anything
	// (a criss-cross history may still write its virtual base's objects,
	// which no ref keeps). Conflicts still make the error wrap
	// ErrConflict, so a dry run tells whether the merge would settle.
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
	Write WriteOptions
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
	Status string    `json:"status"`
	DryRun bool      `json:"dry_run,omitempty"`
	Commit *Mutation `json:"commit,omitempty"`
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

// mergeState is merge.json of a merge in progress.
type mergeState struct {
	Into     string   `json:"into"`
	From     string   `json:"from"`
	Ours     string   `json:"ours"`
	Theirs   string   `json:"theirs"`
	Bases    []string `json:"bases"`
	Strategy string   `json:"strategy,omitempty"`
	Message  string   `json:"message,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	// UpstreamFirst: MergeOptions.upstreamFirst, for the commit that
	// finishes the merge.
	UpstreamFirst bool `json:"upstream_first,omitempty"`
}

// branchOf is the branch a merge-family call works on: the one it names
// (Into, or its branch argument), else the write options' Branch, which
// every other write takes; two different names are refused rather than
// one silently ignored.
func branchOf(named string, wo WriteOptions) (string, error) {
	switch {
	case named == "":
		return wo.Branch, nil
	case wo.Branch != "" && wo.Branch != named:
		return "", fmt.Errorf("%w: the merge is into %s, but its WriteOptions.Branch is %s", ErrUsage, named, wo.Branch)
	}
	return named, nil
}

// Merge merges the revision from (a branch, usually) into mo.Into. When
// the branch merged into already contains from, nothing happens; when it
// is an ancestor of from, the branch fast-forwards (unless NoFF); otherwise
// the trees are merged three ways against the merge base and the result is
// committed with two parents. When conflicts remain, the merge is kept in
// progress (see MergeRefPrefix), the branch is left as it was, and the
// error wraps ErrConflict; the result lists the conflicts.
func (s *Store) Merge(ctx context.Context, from string, mo MergeOptions) (*MergeResult, error) {
	into, err := branchOf(mo.Into, mo.Write)
	if err != nil {
		return nil, err
	}
	if mo.Write.UnchangedSince != nil {
		// A fast-forward writes no commit to check it on.
		return nil, fmt.Errorf("%w: UnchangedSince is for writes of files; a merge takes Expect (--expect)", ErrUsage)
	}
	intoRef, err := s.WriteRef(into)
	if err != nil {
		return nil, err
	}
	if mo.Strategy != "" {
		if _, err := merge.ParseStrategy(string(mo.Strategy)); err != nil {
			return nil, err
		}
	}
	if busy, err := s.HasConflicts(intoRef); err != nil {
		return nil, err
	} else if busy {
		return nil, fmt.Errorf("%w: %s already has a merge in progress; resolve it and run merge --continue, or merge --abort",
			ErrConflict, shortBranch(intoRef))
	}
	ours, err := s.repo.Ref(intoRef)
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", shortBranch(intoRef), err)
	}
	if err := mo.Write.checkRevisions(); err != nil {
		return nil, err
	}
	if mo.Write.Expect != nil {
		// A fast-forward writes no commit for the commit's own check: the
		// expectation is held here, for every outcome.
		want, err := s.Resolve(*mo.Write.Expect, into)
		if err != nil {
			return nil, err
		}
		if want != ours {
			return nil, &repo.StaleError{Ref: intoRef, Expected: want, Current: ours}
		}
	}
	theirs, err := s.Resolve(from, into)
	if err != nil {
		return nil, err
	}
	bases, err := s.mergeBases(ours, theirs, shortBranch(intoRef), from)
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
	if err := s.checkBrought(ours, theirs); err != nil {
		return nil, err
	}
	ff := len(bases) == 1 && bases[0] == ours && !mo.NoFF
	if ff && mo.FirstParent {
		if ff, err = s.onFirstParents(ours, theirs); err != nil {
			return nil, err
		}
	}
	if ff {
		res.Status = MergeFastForward
		if files, err := s.repo.DiffTrees(s.TreeOf(ours), s.TreeOf(theirs)); err == nil {
			for _, f := range files {
				res.Files = append(res.Files, MergedPath{Path: f.Path, From: "theirs", Deleted: f.New.IsZero()})
			}
		}
		if mo.DryRun {
			return res, nil
		}
		if err := s.CheckFastForward(ours, theirs); err != nil {
			return nil, err
		}
		return res, s.repo.UpdateRef(ctx, intoRef, ours, theirs)
	}
	tr, err := s.mergeTrees(ours, theirs, bases, mo.Strategy)
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
			return res, fmt.Errorf("%w: %d conflict(s) in %d file(s) (dry run: nothing written)", ErrConflict, len(res.Conflicts), len(tr.Conflicts))
		}
		if err := s.startMerge(ctx, intoRef, from, ours, theirs, bases, mo, tr); err != nil {
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
	wo := mo.Write
	wo.upstreamFirst = mo.UpstreamFirst
	m, err := s.commitMerge(ctx, intoRef, ours, theirs, from, staged, wo, nil)
	res.Commit = m
	return res, err
}

// onFirstParents reports whether ours is on the first-parent chain of
// theirs: a fast-forward from ours to theirs then keeps every commit of
// the branch's first-parent history on it.
func (s *Store) onFirstParents(ours, theirs plumbing.Hash) (bool, error) {
	for h := theirs; ; {
		if h == ours {
			return true, nil
		}
		c, err := s.repo.ReadCommit(h)
		if err != nil {
			return false, err
		}
		if len(c.Parents) == 0 {
			return false, nil
		}
		h = c.Parents[0]
	}
}

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
func (s *Store) mergeBases(ours, theirs plumbing.Hash, oursName, theirsName string) ([]plumbing.Hash, error) {
	bases, err := s.repo.MergeBases(ours, theirs)
	if err == nil && len(bases) == 0 && s.repo.IsShallow() {
		return nil, &repo.ShallowError{Rev: "the common history of " + oursName + " and " + theirsName}
	}
	return bases, err
}

// mergeTrees is the three-way tree merge of two commits: the paths changed
// since the base on each side, merged by merge.Trees with the strategies
// of ours' .gitattributes (or the override) and each side's clock of its
// last write of the path.
func (s *Store) mergeTrees(ours, theirs plumbing.Hash, bases []plumbing.Hash, override merge.Strategy) (merge.TreeResult, error) {
	oc, err := s.repo.ReadCommit(ours)
	if err != nil {
		return merge.TreeResult{}, err
	}
	tc, err := s.repo.ReadCommit(theirs)
	if err != nil {
		return merge.TreeResult{}, err
	}
	baseTree, err := s.virtualBase(bases, 0)
	if err != nil {
		return merge.TreeResult{}, err
	}
	opts, err := s.treeOptions(oc.Tree, override)
	if err != nil {
		return merge.TreeResult{}, err
	}
	clocks := &sideClocks{s: s, heads: [2]plumbing.Hash{ours, theirs}}
	opts.Clocks = clocks.lookup
	return s.mergeTreesWith(baseTree, oc.Tree, tc.Tree, opts)
}

func (s *Store) treeOptions(oursTree plumbing.Hash, override merge.Strategy) (merge.TreeOptions, error) {
	opts := merge.TreeOptions{Override: merge.Options{Strategy: override}}
	data, err := s.repo.ReadFileAt(oursTree, AttributesPath)
	switch {
	case err == nil:
		if opts.Attributes, err = merge.ParseAttributes(data); err != nil {
			return opts, fmt.Errorf("%s: %w", AttributesPath, err)
		}
	case !errors.Is(err, repo.ErrNotFound):
		// Unread (a partial clone offline) is not absent: merged by
		// the default strategies, the documents would be merged wrong.
		return opts, err
	}
	opts.Load = func(id string) ([]byte, error) { return s.repo.ReadBlob(plumbing.NewHash(id)) }
	return opts, nil
}

func (s *Store) mergeTreesWith(baseTree, oursTree, theirsTree plumbing.Hash, opts merge.TreeOptions) (merge.TreeResult, error) {
	dOurs, err := s.repo.DiffTrees(baseTree, oursTree)
	if err != nil {
		return merge.TreeResult{}, err
	}
	dTheirs, err := s.repo.DiffTrees(baseTree, theirsTree)
	if err != nil {
		return merge.TreeResult{}, err
	}
	files := joinChanges(dOurs, dTheirs)
	return merge.Trees(files, opts)
}

// joinChanges lines up the two sides' changes (both in path order) into
// one entry per path changed on either side.
func joinChanges(ours, theirs []repo.FileChange) []merge.TreeFile {
	id := func(h plumbing.Hash) string {
		if h.IsZero() {
			return ""
		}
		return h.String()
	}
	at := make(map[string]repo.FileChange, len(theirs))
	for _, c := range theirs {
		at[c.Path] = c
	}
	out := make([]merge.TreeFile, 0, len(ours)+len(theirs))
	seen := make(map[string]bool, len(ours))
	for _, c := range ours {
		seen[c.Path] = true
		f := merge.TreeFile{Path: c.Path, Base: id(c.Old), Ours: id(c.New), Theirs: id(c.Old)}
		if t, ok := at[c.Path]; ok {
			f.Theirs = id(t.New)
		}
		out = append(out, f)
	}
	for _, c := range theirs {
		if !seen[c.Path] {
			out = append(out, merge.TreeFile{Path: c.Path, Base: id(c.Old), Ours: id(c.Old), Theirs: id(c.New)})
		}
	}
	return out
}

// virtualBase is the tree a merge compares both sides with. One merge base
// is used as it is; none (unrelated histories) is the empty tree. Several
// (a criss-cross history) are merged into a virtual base, as git's ort
// strategy does: oldest first, each pair against its own merge bases,
// recursively. Where that inner merge cannot settle a key, the virtual base
// keeps the inner base's value (the last value both bases agreed on), so
// the outer merge sees both sides as changes and its strategy decides,
// rather than a value one base invented. Inner merges use no commit clocks:
// the virtual base must not depend on which side is ours.
func (s *Store) virtualBase(bases []plumbing.Hash, depth int) (plumbing.Hash, error) {
	switch len(bases) {
	case 0:
		return repo.EmptyTree(), nil
	case 1:
		return s.TreeOf(bases[0]), nil
	}
	if depth > 8 {
		return s.TreeOf(bases[0]), nil // pathological histories: the newest base
	}
	ordered := append([]plumbing.Hash(nil), bases...)
	// MergeBases returns newest first; fold oldest first, as git does.
	for i, j := 0, len(ordered)-1; i < j; i, j = i+1, j-1 {
		ordered[i], ordered[j] = ordered[j], ordered[i]
	}
	acc := s.TreeOf(ordered[0])
	for _, next := range ordered[1:] {
		inner, err := s.repo.MergeBases(ordered[0], next)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		innerTree, err := s.virtualBase(inner, depth+1)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		opts, err := s.treeOptions(acc, "")
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tr, err := s.mergeTreesWith(innerTree, acc, s.TreeOf(next), opts)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		changes, err := virtualChanges(s, innerTree, tr)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if acc, err = s.repo.WriteTree(acc, changes); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return acc, nil
}

// mergedData is a merged file's content: its data, or the blob of the
// side it takes unchanged.
func (s *Store) mergedData(f merge.MergedFile) ([]byte, error) {
	if f.ID == "" {
		return f.Data, nil
	}
	return s.repo.ReadBlob(plumbing.NewHash(f.ID))
}

// virtualChanges turns a merge of bases into tree changes, taking the
// inner base's value at every conflict.
func virtualChanges(s *Store, innerTree plumbing.Hash, tr merge.TreeResult) (map[string]*[]byte, error) {
	changes := map[string]*[]byte{}
	for _, f := range tr.Files {
		if f.Missing {
			changes[f.Path] = nil
			continue
		}
		data, err := s.mergedData(f)
		if err != nil {
			return nil, err
		}
		changes[f.Path] = &data
	}
	for _, rec := range tr.Conflicts {
		if rec.Reason != "" || (len(rec.Keys) == 1 && len(rec.Keys[0].Path) == 0) {
			if rec.BaseID == "" {
				changes[rec.File] = nil
				continue
			}
			data, err := s.repo.ReadBlob(plumbing.NewHash(rec.BaseID))
			if err != nil {
				return nil, err
			}
			changes[rec.File] = &data
			continue
		}
		cur, ok := changes[rec.File]
		var doc any
		if ok && cur != nil {
			v, err := objects.Decode(*cur)
			if err != nil {
				return nil, err
			}
			doc = v
		} else {
			data, err := s.repo.ReadFileAt(innerTree, rec.File)
			if errors.Is(err, repo.ErrObjectMissing) {
				return nil, err
			}
			if err != nil {
				continue
			}
			if doc, err = objects.Decode(data); err != nil {
				continue
			}
		}
		keys := append([]merge.Conflict(nil), rec.Keys...)
		for i := len(keys) - 1; i >= 0; i-- {
			doc = applyChoice(doc, keys[i].Path, keys[i].Base, keys[i].BaseMissing)
		}
		data, err := objects.Encode(doc)
		if err != nil {
			return nil, err
		}
		changes[rec.File] = &data
	}
	return changes, nil
}

// applyChoice sets (or, when missing, deletes) the value at p; a path that
// cannot be set is left as it was.
func applyChoice(doc any, p verbiage.Path, v any, missing bool) any {
	var out any
	var err error
	if missing {
		if len(p) == 0 {
			return nil
		}
		out, err = objects.Delete(doc, p)
	} else {
		out, err = objects.Set(doc, p, v)
	}
	if err != nil {
		return doc
	}
	return out
}

// sideClocks finds, per path, the clock of the last commit that changed
// it on each side: the first commit along first parents from the side's
// head whose tree differs from its first parent's at the path (what
// `git log -1 --first-parent HEAD -- PATH` finds, which the git driver
// asks). One walk per side serves all paths, diffing each commit against
// its parent, so the cost follows the commits since the fork.
type sideClocks struct {
	s     *Store
	heads [2]plumbing.Hash
	found [2]map[string]merge.Clock
	// walk state per side: the next commit to look at, and its clock.
	next  [2]plumbing.Hash
	begun [2]bool
}

func (sc *sideClocks) lookup(path string) (ours, theirs merge.Clock, err error) {
	var out [2]merge.Clock
	for i := range sc.heads {
		if out[i], err = sc.side(i, path); err != nil {
			return merge.Clock{}, merge.Clock{}, err
		}
	}
	return out[0], out[1], nil
}

func (sc *sideClocks) side(i int, path string) (merge.Clock, error) {
	if c, ok := sc.found[i][path]; ok {
		return c, nil
	}
	if sc.found[i] == nil {
		sc.found[i] = map[string]merge.Clock{}
	}
	if !sc.begun[i] {
		sc.begun[i], sc.next[i] = true, sc.heads[i]
	}
	for !sc.next[i].IsZero() {
		c, err := sc.s.repo.ReadCommit(sc.next[i])
		if err != nil {
			return merge.Clock{}, err
		}
		parentTree := repo.EmptyTree()
		sc.next[i] = plumbing.ZeroHash
		if len(c.Parents) > 0 {
			sc.next[i] = c.Parents[0]
			parentTree = sc.s.TreeOf(c.Parents[0])
		}
		changed, err := sc.s.repo.DiffTrees(parentTree, c.Tree)
		if err != nil {
			return merge.Clock{}, err
		}
		clock := CommitClock(c)
		for _, ch := range changed {
			if _, ok := sc.found[i][ch.Path]; !ok {
				sc.found[i][ch.Path] = clock
			}
		}
		if ck, ok := sc.found[i][path]; ok {
			return ck, nil
		}
	}
	return merge.Clock{}, nil
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
// second parent and a merge.Clock that has observed both sides.
func (s *Store) commitMerge(ctx context.Context, intoRef string, ours, theirs plumbing.Hash, from string, files []stagedFile, wo WriteOptions, extra repo.Trailers) (*Mutation, error) {
	wo.Branch = intoRef
	wo.Trailers = append(append(repo.Trailers{}, wo.Trailers...), extra...)
	// Merged-Commit lets the access policy tell what the merge brought in
	// from what it decided (policy.go), for every merge alike.
	wo.Trailers = append(wo.Trailers, repo.Trailer{Key: TrailerMergedCommit, Value: theirs.String()})
	wo.mergeParents = []plumbing.Hash{theirs}
	wo.expectHead = &ours
	subject := "merge " + from + " into " + shortBranch(intoRef)
	return s.Commit(ctx, wo, subject, func(tx *repo.Tx, rec *Recorder) error {
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
					if data, err = s.repo.ReadBlob(plumbing.NewHash(f.id)); err != nil {
						return err
					}
				}
				if err := tx.WriteFile(f.path, data); err != nil {
					return err
				}
			}
			rec.Add(OpMerge, f.path, "")
		}
		rec.Trailer(TrailerMerged, from)
		return nil
	})
}

// startMerge records a merge with conflicts under refs/aiwg/merge/<branch>.
func (s *Store) startMerge(ctx context.Context, intoRef, from string, ours, theirs plumbing.Hash, bases []plumbing.Hash, mo MergeOptions, tr merge.TreeResult) error {
	st := mergeState{Into: shortBranch(intoRef), From: from, Ours: ours.String(), Theirs: theirs.String(), Bases: hashStrings(bases), Strategy: string(mo.Strategy), Message: mo.Write.Message, UpstreamFirst: mo.UpstreamFirst}
	agent := s.Agent(mo.Write.Agent)
	zero := plumbing.ZeroHash
	signer, err := s.SignerFor(agent, mo.Write)
	if err != nil {
		return err
	}
	_, err = s.repo.Commit(ctx, MergeRef(intoRef), func(tx *repo.Tx) (*repo.CommitInfo, error) {
		for _, f := range tr.Files {
			if f.Missing {
				st.Deleted = append(st.Deleted, f.Path)
				continue
			}
			data, err := s.mergedData(f)
			if err != nil {
				return nil, err
			}
			if err := tx.WriteFile(resultDir+f.Path, data); err != nil {
				return nil, err
			}
		}
		for _, rec := range tr.Conflicts {
			data, err := rec.Encode()
			if err != nil {
				return nil, err
			}
			if err := tx.WriteFile(MergeConflictsDir+rec.File, data); err != nil {
				return nil, err
			}
		}
		if err := writeState(tx, st); err != nil {
			return nil, err
		}
		sig := repo.NewSignature(agent, s.now())
		msg := repo.FormatMessage("merge "+from+" into "+st.Into+": conflicts", "", repo.Trailers{{Key: TrailerMerged, Value: from}})
		return &repo.CommitInfo{Author: sig, Committer: sig, Message: msg, MergeParents: []plumbing.Hash{ours, theirs}, Sign: SignFunc(signer)}, nil
	}, repo.CommitOptions{Expect: &zero})
	return err
}

func writeState(tx *repo.Tx, st mergeState) error {
	sort.Strings(st.Deleted)
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	data, err := objects.Canonical(b)
	if err != nil {
		return err
	}
	return tx.WriteFile(mergeStatePath, data)
}

func readState(read func(string) ([]byte, error)) (mergeState, error) {
	var st mergeState
	data, err := read(mergeStatePath)
	if err != nil {
		return st, fmt.Errorf("merge in progress has no %s: %w", mergeStatePath, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%s: %w: %v", mergeStatePath, objects.ErrInvalidJSON, err)
	}
	return st, nil
}

// inProgress returns the merge-in-progress commit of a branch.
func (s *Store) inProgress(branch string) (plumbing.Hash, *repo.Commit, error) {
	ref := s.Ref(branch)
	h, err := s.repo.Ref(MergeRef(ref))
	if errors.Is(err, repo.ErrNotFound) {
		return h, nil, &NoMergeError{Branch: shortBranch(ref)}
	}
	if err != nil {
		return h, nil, err
	}
	c, err := s.repo.ReadCommit(h)
	return h, c, err
}

// Conflicts lists what is left to resolve in the merge in progress on
// branch ("" = the default branch), file by file, key by key.
func (s *Store) Conflicts(ctx context.Context, branch string) ([]ConflictEntry, error) {
	_, c, err := s.inProgress(branch)
	if err != nil {
		return nil, err
	}
	recs, err := s.records(c.Tree)
	if err != nil {
		return nil, err
	}
	return conflictEntries(recs), nil
}

func (s *Store) records(stateTree plumbing.Hash) ([]merge.Record, error) {
	var out []merge.Record
	err := s.repo.Walk(stateTree, strings.TrimSuffix(MergeConflictsDir, "/"), func(p string, h plumbing.Hash) error {
		data, err := s.repo.ReadBlob(h)
		if err != nil {
			return err
		}
		rec, err := merge.DecodeRecord(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, rec)
		return nil
	})
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	return out, err
}

func conflictEntries(recs []merge.Record) []ConflictEntry {
	var out []ConflictEntry
	raw := func(v any, missing bool) json.RawMessage {
		if missing {
			return nil
		}
		b, err := objects.Encode(v)
		if err != nil {
			return nil
		}
		c, err := jsonCompact(b)
		if err != nil {
			return nil
		}
		return c
	}
	for _, r := range recs {
		if r.Reason != "" {
			out = append(out, ConflictEntry{File: r.File, Reason: r.Reason, Strategy: string(r.Strategy),
				BaseMissing: r.BaseID == "", OursMissing: r.OursID == "", TheirsMissing: r.TheirsID == ""})
			continue
		}
		for _, k := range r.Keys {
			out = append(out, ConflictEntry{
				File: r.File, Key: k.Path.String(), Reason: k.Reason, Strategy: string(r.Strategy),
				Base: raw(k.Base, k.BaseMissing), Ours: raw(k.Ours, k.OursMissing), Theirs: raw(k.Theirs, k.TheirsMissing),
				BaseMissing: k.BaseMissing, OursMissing: k.OursMissing, TheirsMissing: k.TheirsMissing,
			})
		}
	}
	return out
}

func jsonCompact(b []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Resolution is how `resolve` settles a conflict.
type Resolution struct {
	// Take is "ours", "theirs" or "base"; empty when Value is set.
	Take string
	// Value is the JSON to put at the key (or the whole document).
	Value []byte
}

// ResolveConflict settles a conflict of the merge in progress on branch: the one at
// keypath in file, or every conflict of file when keypath is empty (with a
// Value, the whole document). A side on which the key does not exist
// deletes it. When the last conflict is resolved, `merge --continue`
// (Continue) commits the merge.
func (s *Store) ResolveConflict(ctx context.Context, branch, file, keypath string, how Resolution, wo WriteOptions) (remaining int, err error) {
	if branch, err = branchOf(branch, wo); err != nil {
		return 0, err
	}
	if wo.UnchangedSince != nil {
		return 0, fmt.Errorf("%w: UnchangedSince is for writes of files; a resolution writes the merge in progress", ErrUsage)
	}
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return 0, err
	}
	key, err := verbiage.ParsePath(keypath)
	if err != nil {
		return 0, err
	}
	var value any
	switch {
	case how.Value != nil && how.Take != "":
		return 0, fmt.Errorf("%w: resolve takes one of --ours, --theirs, --base, --value", ErrUsage)
	case how.Value != nil:
		if value, err = objects.Decode(how.Value); err != nil {
			return 0, fmt.Errorf("value: %w", err)
		}
	case how.Take != "ours" && how.Take != "theirs" && how.Take != "base":
		return 0, fmt.Errorf("%w: a resolution takes ours, theirs or base (Resolution.Take) or a Value", ErrUsage)
	}
	ref := s.Ref(branch)
	stateHash, _, err := s.inProgress(branch)
	if err != nil {
		return 0, err
	}
	signer, err := s.SignerFor(s.Agent(wo.Agent), wo)
	if err != nil {
		return 0, err
	}
	_, err = s.repo.Commit(ctx, MergeRef(ref), func(tx *repo.Tx) (*repo.CommitInfo, error) {
		st, err := readState(tx.ReadFile)
		if err != nil {
			return nil, err
		}
		recData, err := tx.ReadFile(MergeConflictsDir + clean)
		if errors.Is(err, repo.ErrNotFound) {
			return nil, errkind.Errorf(ErrNotFound, "%s has no conflict to resolve", clean)
		}
		if err != nil {
			return nil, err
		}
		rec, err := merge.DecodeRecord(recData)
		if err != nil {
			return nil, err
		}
		doc, present, err := s.stagedDoc(tx, st, clean)
		if err != nil {
			return nil, err
		}
		var data []byte
		switch {
		case rec.Reason != "":
			if len(key) > 0 {
				return nil, fmt.Errorf("%w: %s conflicts as a whole file (%s); resolve it without a key path", ErrUsage, clean, rec.Reason)
			}
			if how.Value != nil {
				if data, err = objects.Encode(value); err != nil {
					return nil, err
				}
				present = true
			} else {
				id := map[string]string{"ours": rec.OursID, "theirs": rec.TheirsID, "base": rec.BaseID}[how.Take]
				present = id != ""
				if present {
					if data, err = s.repo.ReadBlob(plumbing.NewHash(id)); err != nil {
						return nil, err
					}
				}
			}
			rec.Keys, rec.Reason = nil, ""
		default:
			keys := rec.Keys
			if len(key) > 0 {
				i := -1
				for j, k := range keys {
					if k.Path.String() == key.String() {
						i = j
					}
				}
				if i < 0 {
					return nil, errkind.Errorf(ErrNotFound, "%s has no conflict at %s", clean, key)
				}
				doc, present = settle(doc, present, keys[i], how, value)
				rec.Keys = shiftAfterDelete(append(keys[:i:i], keys[i+1:]...), keys[i], how, value)
			} else if how.Value != nil {
				doc, present = value, true
				rec.Keys = nil
			} else {
				for i := len(keys) - 1; i >= 0; i-- {
					doc, present = settle(doc, present, keys[i], how, nil)
				}
				rec.Keys = nil
			}
			if present {
				if data, err = objects.Encode(doc); err != nil {
					return nil, err
				}
			}
		}
		if err := s.stage(tx, &st, clean, data, present); err != nil {
			return nil, err
		}
		if len(rec.Keys) == 0 && rec.Reason == "" {
			if err := tx.Remove(MergeConflictsDir + clean); err != nil {
				return nil, err
			}
		} else {
			b, err := rec.Encode()
			if err != nil {
				return nil, err
			}
			if err := tx.WriteFile(MergeConflictsDir+clean, b); err != nil {
				return nil, err
			}
		}
		if err := writeState(tx, st); err != nil {
			return nil, err
		}
		ents, err := tx.ReadDir(strings.TrimSuffix(MergeConflictsDir, "/"))
		if err == nil {
			remaining = countFiles(tx, strings.TrimSuffix(MergeConflictsDir, "/"), ents)
		}
		verb := how.Take
		if verb == "" {
			verb = "value"
		}
		target := clean
		if len(key) > 0 {
			target += "#" + key.String()
		}
		sig := repo.NewSignature(s.Agent(wo.Agent), s.now())
		msg := repo.FormatMessage("resolve "+target+" with "+verb, "", repo.Trailers{{Key: TrailerPath, Value: target}})
		return &repo.CommitInfo{Author: sig, Committer: sig, Message: msg, AllowEmpty: true, Sign: SignFunc(signer)}, nil
	}, repo.CommitOptions{Expect: &stateHash})
	return remaining, err
}

func countFiles(tx *repo.Tx, dir string, ents []repo.DirEntry) int {
	n := 0
	for _, e := range ents {
		if !e.IsDir {
			n++
			continue
		}
		sub, err := tx.ReadDir(dir + "/" + e.Name)
		if err == nil {
			n += countFiles(tx, dir+"/"+e.Name, sub)
		}
	}
	return n
}

// settle applies one resolution to a key conflict.
func settle(doc any, present bool, c merge.Conflict, how Resolution, value any) (any, bool) {
	v, missing := value, false
	if how.Value == nil {
		switch how.Take {
		case "ours":
			v, missing = c.Ours, c.OursMissing
		case "theirs":
			v, missing = c.Theirs, c.TheirsMissing
		case "base":
			v, missing = c.Base, c.BaseMissing
		}
	}
	if len(c.Path) == 0 {
		return v, !missing
	}
	if !present {
		doc = map[string]any{}
	}
	return applyChoice(doc, c.Path, v, missing), true
}

// shiftAfterDelete renumbers the conflicts after an array element the
// resolution removed, so their paths still address the merged document.
func shiftAfterDelete(keys []merge.Conflict, done merge.Conflict, how Resolution, value any) []merge.Conflict {
	missing := false
	switch {
	case how.Value != nil:
	case how.Take == "ours":
		missing = done.OursMissing
	case how.Take == "theirs":
		missing = done.TheirsMissing
	case how.Take == "base":
		missing = done.BaseMissing
	}
	if !missing || len(done.Path) == 0 {
		return keys
	}
	at := len(done.Path) - 1
	idx, ok := done.Path[at].Index()
	if !ok {
		return keys
	}
	prefix := done.Path[:at]
	for i, k := range keys {
		if len(k.Path) <= at || !k.Path.HasPrefix(prefix) {
			continue
		}
		if j, ok := k.Path[at].Index(); ok && j > idx {
			p := append(verbiage.Path(nil), k.Path...)
			p[at] = verbiage.Segment{Key: fmt.Sprint(j - 1)}
			keys[i].Path = p
		}
	}
	return keys
}

// stagedDoc is a file's merged document as the merge in progress holds it.
func (s *Store) stagedDoc(tx *repo.Tx, st mergeState, file string) (any, bool, error) {
	for _, d := range st.Deleted {
		if d == file {
			return nil, false, nil
		}
	}
	data, err := tx.ReadFile(resultDir + file)
	if errors.Is(err, repo.ErrNotFound) {
		data, err = s.repo.ReadFileAt(s.TreeOf(plumbing.NewHash(st.Ours)), file)
		if errors.Is(err, repo.ErrNotFound) {
			return nil, false, nil
		}
	}
	if err != nil {
		return nil, false, err
	}
	v, err := objects.Decode(data)
	if err != nil {
		// A whole-file conflict on a file that is not JSON: there is no
		// document to edit key by key, and resolve replaces it whole.
		return nil, true, nil
	}
	return v, true, nil
}

// stage records a file's merged content in the merge in progress, as a
// difference from ours.
func (s *Store) stage(tx *repo.Tx, st *mergeState, file string, data []byte, present bool) error {
	kept := st.Deleted[:0]
	for _, d := range st.Deleted {
		if d != file {
			kept = append(kept, d)
		}
	}
	st.Deleted = kept
	oursData, err := s.repo.ReadFileAt(s.TreeOf(plumbing.NewHash(st.Ours)), file)
	oursHas := err == nil
	if ok, _ := tx.Exists(resultDir + file); ok {
		if err := tx.Remove(resultDir + file); err != nil {
			return err
		}
	}
	switch {
	case !present && oursHas:
		st.Deleted = append(st.Deleted, file)
	case present && !(oursHas && string(oursData) == string(data)):
		return tx.WriteFile(resultDir+file, data)
	}
	return nil
}

// Continue commits the merge in progress on branch once nothing is left to
// resolve: a two-parent merge commit through the store's commit path, then
// the merge-in-progress ref is removed.
func (s *Store) Continue(ctx context.Context, branch string, wo WriteOptions) (*MergeResult, error) {
	branch, err := branchOf(branch, wo)
	if err != nil {
		return nil, err
	}
	stateHash, c, err := s.inProgress(branch)
	if err != nil {
		return nil, err
	}
	st, err := readState(func(p string) ([]byte, error) { return s.repo.ReadFileAt(c.Tree, p) })
	if err != nil {
		return nil, err
	}
	recs, err := s.records(c.Tree)
	if err != nil {
		return nil, err
	}
	res := &MergeResult{Into: st.Into, From: st.From, Ours: st.Ours, Theirs: st.Theirs, Bases: st.Bases, Files: []MergedPath{}, Conflicts: conflictEntries(recs)}
	if len(recs) > 0 {
		res.Status = MergeConflicts
		return res, &ConflictsError{Conflicts: len(res.Conflicts), Files: len(recs), Left: true}
	}
	ref := s.Ref(branch)
	ours, theirs := plumbing.NewHash(st.Ours), plumbing.NewHash(st.Theirs)
	// A --continue that committed but died before removing the ref left
	// the merge commit on the branch: finish the cleanup only.
	if head, err := s.repo.Ref(ref); err == nil && head != ours {
		if hc, err := s.repo.ReadCommit(head); err == nil && hc.Trailers().Get(TrailerMergeRecord) == stateHash.String() {
			res.Status, res.Commit = MergeCommitted, MutationOf(hc, ref)
			return res, s.keepMergeRecord(ctx, ref, head, stateHash)
		}
	}
	var files []stagedFile
	err = s.repo.Walk(c.Tree, strings.TrimSuffix(resultDir, "/"), func(p string, h plumbing.Hash) error {
		files = append(files, stagedFile{path: strings.TrimPrefix(p, resultDir), id: h.String()})
		return nil
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	for _, d := range st.Deleted {
		files = append(files, stagedFile{path: d, missing: true})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	for _, f := range files {
		res.Files = append(res.Files, MergedPath{Path: f.path, From: "merged", Deleted: f.missing})
	}
	if wo.Message == "" {
		wo.Message = st.Message
	}
	wo.upstreamFirst = st.UpstreamFirst
	m, err := s.commitMerge(ctx, ref, ours, theirs, st.From, files, wo, repo.Trailers{{Key: TrailerMergeRecord, Value: stateHash.String()}})
	if errors.Is(err, docschema.ErrInvalid) {
		// The resolutions are settled and cannot be resolved again.
		return nil, &ResolvedMergeInvalidError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	res.Status, res.Commit = MergeCommitted, m
	return res, s.keepMergeRecord(ctx, ref, plumbing.NewHash(m.Commit), stateHash)
}

// keepMergeRecord ends the merge in progress on ref, which merge commit
// finished: its record (the conflicts and every resolve, a chain of
// commits) moves to MergeRecordPrefix+<merge commit>, so the commit the
// merge's Merge-Record trailer names stays reachable, and survives gc,
// for whoever audits how the conflicts were settled. Run again after a
// crash, it finishes what is left.
func (s *Store) keepMergeRecord(ctx context.Context, ref string, merge, record plumbing.Hash) error {
	keep := MergeRecordPrefix + merge.String()
	if err := s.repo.UpdateRef(ctx, keep, plumbing.ZeroHash, record); err != nil {
		var stale *repo.StaleError
		if !errors.As(err, &stale) || stale.Current != record {
			return err
		}
	}
	return s.repo.UpdateRef(ctx, MergeRef(ref), record, plumbing.ZeroHash)
}

// Abort drops the merge in progress on branch. The branch was never
// changed by it, so this only removes the merge-in-progress ref.
func (s *Store) Abort(ctx context.Context, branch string) error {
	h, _, err := s.inProgress(branch)
	if err != nil {
		return err
	}
	return s.repo.UpdateRef(ctx, MergeRef(s.Ref(branch)), h, plumbing.ZeroHash)
}

// MergeDifference is one path where a merge commit differs from the
// recomputed merge of its parents.
type MergeDifference struct {
	File string `json:"file"`
	// Expected and Actual are blob ids ("" = absent).
	Expected string            `json:"expected"`
	Actual   string            `json:"actual"`
	Changes  []jsondiff.Change `json:"changes,omitempty"`
	// Conflicted is set when every difference is where the recomputation
	// left a conflict (a key, or the whole file): someone resolved it by
	// hand, so the difference is expected.
	Conflicted bool `json:"conflicted,omitempty"`
}

// VerifyResult reports a recomputed merge.
type VerifyResult struct {
	Commit      string            `json:"commit"`
	Parents     []string          `json:"parents"`
	Bases       []string          `json:"bases"`
	Differences []MergeDifference `json:"differences"`
	Conflicts   []ConflictEntry   `json:"conflicts,omitempty"`
}

// allUnder reports whether every change is at or below one of keys (a
// move: both its ends). A key inside an array counts as the whole array:
// a conflict's positions are the recomputed merge's, and a hand
// resolution that removes or inserts elements shifts them in the commit,
// so the excuse is as wide as the array and no wider.
func allUnder(changes []jsondiff.Change, keys []verbiage.Path) bool {
	if len(keys) == 0 {
		return false
	}
	wide := make([]verbiage.Path, len(keys))
	for i, k := range keys {
		wide[i] = k
		for j, seg := range k {
			if _, isIndex := seg.Index(); isIndex {
				wide[i] = k[:j]
				break
			}
		}
	}
	under := func(p verbiage.Path) bool {
		for _, k := range wide {
			if p.HasPrefix(k) {
				return true
			}
		}
		return false
	}
	for _, ch := range changes {
		if !under(ch.Path) || (ch.From != nil && !under(ch.From)) {
			return false
		}
	}
	return true
}

// VerifyMerge recomputes the merge commit rev from its two parents, with the
// strategies of its first parent's .gitattributes (or strategy), and
// reports every path where the commit's tree differs. A merge made by a
// git host's merge button, which ignores custom drivers, shows up here.
// The error wraps ErrConflict when anything differs, except where the
// recomputation itself has conflicts: someone resolved those by hand. A
// file whose every difference is at a key left in conflict (or that is
// in conflict whole) is reported flagged Conflicted, and does not fail
// the check; one change elsewhere in the file does.
func (s *Store) VerifyMerge(ctx context.Context, rev, branch string, strategy merge.Strategy) (*VerifyResult, error) {
	h, err := s.Resolve(rev, branch)
	if err != nil {
		return nil, err
	}
	c, err := s.repo.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	if len(c.Parents) != 2 {
		return nil, fmt.Errorf("%w: %s has %d parent(s); --verify checks two-parent merge commits", ErrUsage, rev, len(c.Parents))
	}
	ours, theirs := c.Parents[0], c.Parents[1]
	bases, err := s.mergeBases(ours, theirs, ours.String()[:12], theirs.String()[:12])
	if err != nil {
		return nil, err
	}
	tr, err := s.mergeTrees(ours, theirs, bases, strategy)
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{Commit: h.String(), Parents: hashStrings(c.Parents), Bases: hashStrings(bases), Differences: []MergeDifference{}, Conflicts: conflictEntries(tr.Conflicts)}
	oursTree := s.TreeOf(ours)
	expected := map[string]plumbing.Hash{}
	for _, f := range tr.Files {
		switch {
		case f.Missing:
			expected[f.Path] = plumbing.ZeroHash
		case f.ID != "":
			expected[f.Path] = plumbing.NewHash(f.ID)
		default:
			expected[f.Path] = plumbing.ComputeHash(plumbing.BlobObject, f.Data)
		}
	}
	actual := map[string]plumbing.Hash{}
	changed, err := s.repo.DiffTrees(oursTree, c.Tree)
	if err != nil {
		return nil, err
	}
	for _, ch := range changed {
		actual[ch.Path] = ch.New
	}
	// What the recomputation left in conflict, someone settled by hand:
	// differences there are expected, and only there.
	wholeFile := map[string]bool{}
	conflictedKeys := map[string][]verbiage.Path{}
	for _, r := range tr.Conflicts {
		if r.Reason != "" || len(r.Keys) == 0 {
			wholeFile[r.File] = true
		}
		for _, k := range r.Keys {
			conflictedKeys[r.File] = append(conflictedKeys[r.File], k.Path)
		}
	}
	var paths []string
	for p := range expected {
		paths = append(paths, p)
	}
	for p := range actual {
		if _, ok := expected[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		e, eok := expected[p]
		a, aok := actual[p]
		if !eok || !aok {
			unchanged := s.EntryHash(oursTree, p)
			if !eok {
				e = unchanged
			}
			if !aok {
				a = unchanged
			}
		}
		if e == a {
			continue
		}
		d := MergeDifference{File: p, Expected: hashOrEmpty(e), Actual: hashOrEmpty(a), Conflicted: wholeFile[p]}
		if merge.IsJSONPath(p) {
			var eData []byte
			for _, f := range tr.Files {
				if f.Path == p && f.ID == "" {
					eData = f.Data
				}
			}
			if fd, err := s.fileDiffData(p, e, eData, a); err == nil {
				d.Changes = fd
				d.Conflicted = d.Conflicted || allUnder(fd, conflictedKeys[p])
			}
		}
		res.Differences = append(res.Differences, d)
	}
	unexplained := 0
	for _, d := range res.Differences {
		if !d.Conflicted {
			unexplained++
		}
	}
	if unexplained > 0 {
		return res, fmt.Errorf("%w: %s differs from the recomputed merge of its parents in %d file(s)", ErrConflict, shortHashOf(h), unexplained)
	}
	return res, nil
}

func hashOrEmpty(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

func shortHashOf(h plumbing.Hash) string { return h.String()[:12] }

// fileDiffData diffs expected (by id, or by bytes not stored anywhere)
// against actual, key by key.
func (s *Store) fileDiffData(path string, expected plumbing.Hash, expectedData []byte, actual plumbing.Hash) ([]jsondiff.Change, error) {
	load := func(h plumbing.Hash, data []byte) (any, bool, error) {
		if data == nil {
			if h.IsZero() {
				return nil, false, nil
			}
			var err error
			if data, err = s.repo.ReadBlob(h); err != nil {
				return nil, false, err
			}
		}
		v, err := objects.Decode(data)
		return v, err == nil, err
	}
	ev, eok, err := load(expected, expectedData)
	if err != nil {
		return nil, err
	}
	av, aok, err := load(actual, nil)
	if err != nil {
		return nil, err
	}
	return jsondiff.Diff(ev, av, jsondiff.Options{OldMissing: !eok, NewMissing: !aok}), nil
}
