package merge

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// The three-way merge of two commits' trees: the paths changed on either
// side since the merge base, the recursive virtual base of a criss-cross
// history, and the clock of each side's last write of a path, which
// last-write-wins orders them by.

// mergeTrees is the three-way tree merge of two commits: the paths changed
// since the base on each side, merged by Trees with the strategies
// of ours' .gitattributes (or the override) and each side's clock of its
// last write of the path.
func (m *Merges) mergeTrees(ours, theirs plumbing.Hash, bases []plumbing.Hash, override jsonmerge.Strategy) (jsonmerge.TreeResult, error) {
	oc, err := m.s.Repo().ReadCommit(ours)
	if err != nil {
		return jsonmerge.TreeResult{}, err
	}
	tc, err := m.s.Repo().ReadCommit(theirs)
	if err != nil {
		return jsonmerge.TreeResult{}, err
	}
	baseTree, err := m.virtualBase(bases, 0)
	if err != nil {
		return jsonmerge.TreeResult{}, err
	}
	opts, err := m.treeOptions(oc.Tree, override)
	if err != nil {
		return jsonmerge.TreeResult{}, err
	}
	clocks := &sideClocks{s: m.s, heads: [2]plumbing.Hash{ours, theirs}}
	opts.Clocks = clocks.lookup
	return m.mergeTreesWith(baseTree, oc.Tree, tc.Tree, opts)
}

func (m *Merges) treeOptions(oursTree plumbing.Hash, override jsonmerge.Strategy) (jsonmerge.TreeOptions, error) {
	opts := jsonmerge.TreeOptions{Override: jsonmerge.Options{Strategy: override}}
	data, err := m.s.Repo().ReadFileAt(oursTree, store.AttributesPath)
	switch {
	case err == nil:
		if opts.Attributes, err = jsonmerge.ParseAttributes(data); err != nil {
			return opts, fmt.Errorf("%s: %w", store.AttributesPath, err)
		}
	case !errors.Is(err, repo.ErrNotFound):
		// Unread (a partial clone offline) is not absent: merged by
		// the default strategies, the documents would be merged wrong.
		return opts, err
	}
	opts.Load = func(id string) ([]byte, error) { return m.s.Repo().ReadBlob(plumbing.NewHash(id)) }
	return opts, nil
}

func (m *Merges) mergeTreesWith(baseTree, oursTree, theirsTree plumbing.Hash, opts jsonmerge.TreeOptions) (jsonmerge.TreeResult, error) {
	dOurs, err := m.s.Repo().DiffTrees(baseTree, oursTree)
	if err != nil {
		return jsonmerge.TreeResult{}, err
	}
	dTheirs, err := m.s.Repo().DiffTrees(baseTree, theirsTree)
	if err != nil {
		return jsonmerge.TreeResult{}, err
	}
	files := joinChanges(dOurs, dTheirs)
	return jsonmerge.Trees(files, opts)
}

// joinChanges lines up the two sides' changes (both in path order) into
// one entry per path changed on either side.
func joinChanges(ours, theirs []repo.FileChange) []jsonmerge.TreeFile {
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
	out := make([]jsonmerge.TreeFile, 0, len(ours)+len(theirs))
	seen := make(map[string]bool, len(ours))
	for _, c := range ours {
		seen[c.Path] = true
		f := jsonmerge.TreeFile{Path: c.Path, Base: id(c.Old), Ours: id(c.New), Theirs: id(c.Old)}
		if t, ok := at[c.Path]; ok {
			f.Theirs = id(t.New)
		}
		out = append(out, f)
	}
	for _, c := range theirs {
		if !seen[c.Path] {
			out = append(out, jsonmerge.TreeFile{Path: c.Path, Base: id(c.Old), Ours: id(c.Old), Theirs: id(c.New)})
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
func (m *Merges) virtualBase(bases []plumbing.Hash, depth int) (plumbing.Hash, error) {
	switch len(bases) {
	case 0:
		return repo.EmptyTree(), nil
	case 1:
		return m.s.TreeOf(bases[0]), nil
	}
	if depth > 8 {
		return m.s.TreeOf(bases[0]), nil // pathological histories: the newest base
	}
	ordered := append([]plumbing.Hash(nil), bases...)
	// MergeBases returns newest first; fold oldest first, as git does.
	for i, j := 0, len(ordered)-1; i < j; i, j = i+1, j-1 {
		ordered[i], ordered[j] = ordered[j], ordered[i]
	}
	acc := m.s.TreeOf(ordered[0])
	for _, next := range ordered[1:] {
		inner, err := m.s.Repo().MergeBases(ordered[0], next)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		innerTree, err := m.virtualBase(inner, depth+1)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		opts, err := m.treeOptions(acc, "")
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tr, err := m.mergeTreesWith(innerTree, acc, m.s.TreeOf(next), opts)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		changes, err := virtualChanges(m, innerTree, tr)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if acc, err = m.s.Repo().WriteTree(acc, changes); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return acc, nil
}

// mergedData is a merged file's content: its data, or the blob of the
// side it takes unchanged.
func (m *Merges) mergedData(f jsonmerge.MergedFile) ([]byte, error) {
	if f.ID == "" {
		return f.Data, nil
	}
	return m.s.Repo().ReadBlob(plumbing.NewHash(f.ID))
}

// virtualChanges turns a merge of bases into tree changes, taking the
// inner base's value at every conflict.
func virtualChanges(m *Merges, innerTree plumbing.Hash, tr jsonmerge.TreeResult) (map[string]*[]byte, error) {
	changes := map[string]*[]byte{}
	for _, f := range tr.Files {
		if f.Missing {
			changes[f.Path] = nil
			continue
		}
		data, err := m.mergedData(f)
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
			data, err := m.s.Repo().ReadBlob(plumbing.NewHash(rec.BaseID))
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
			data, err := m.s.Repo().ReadFileAt(innerTree, rec.File)
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
		keys := append([]jsonmerge.Conflict(nil), rec.Keys...)
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
	s     *store.Store
	heads [2]plumbing.Hash
	found [2]map[string]jsonmerge.Clock
	// walk state per side: the next commit to look at, and its clock.
	next  [2]plumbing.Hash
	begun [2]bool
}

func (sc *sideClocks) lookup(path string) (ours, theirs jsonmerge.Clock, err error) {
	var out [2]jsonmerge.Clock
	for i := range sc.heads {
		if out[i], err = sc.side(i, path); err != nil {
			return jsonmerge.Clock{}, jsonmerge.Clock{}, err
		}
	}
	return out[0], out[1], nil
}

func (sc *sideClocks) side(i int, path string) (jsonmerge.Clock, error) {
	if c, ok := sc.found[i][path]; ok {
		return c, nil
	}
	if sc.found[i] == nil {
		sc.found[i] = map[string]jsonmerge.Clock{}
	}
	if !sc.begun[i] {
		sc.begun[i], sc.next[i] = true, sc.heads[i]
	}
	for !sc.next[i].IsZero() {
		c, err := sc.s.Repo().ReadCommit(sc.next[i])
		if err != nil {
			return jsonmerge.Clock{}, err
		}
		parentTree := repo.EmptyTree()
		sc.next[i] = plumbing.ZeroHash
		if len(c.Parents) > 0 {
			sc.next[i] = c.Parents[0]
			parentTree = sc.s.TreeOf(c.Parents[0])
		}
		changed, err := sc.s.Repo().DiffTrees(parentTree, c.Tree)
		if err != nil {
			return jsonmerge.Clock{}, err
		}
		clock := store.CommitClock(c)
		for _, ch := range changed {
			if _, ok := sc.found[i][ch.Path]; !ok {
				sc.found[i][ch.Path] = clock
			}
		}
		if ck, ok := sc.found[i][path]; ok {
			return ck, nil
		}
	}
	return jsonmerge.Clock{}, nil
}
