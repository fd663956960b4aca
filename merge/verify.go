package merge

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Verify recomputes a merge commit from its parents, to catch a merge made
// without the strategies (a git host's merge button).

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

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Branch that rev's HEAD and times are taken on ("" = default).
	Branch string
	// Strategy, when set, settles every path with this strategy instead
	// of the first parent's .gitattributes.
	Strategy jsonmerge.Strategy
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

// Verify recomputes the merge commit rev from its two parents, with the
// strategies of its first parent's .gitattributes (or vo.Strategy), and
// reports every path where the commit's tree differs. A merge made by a
// git host's merge button, which ignores custom drivers, shows up here.
// The error wraps store.ErrConflict when anything differs, except where the
// recomputation itself has conflicts: someone resolved those by hand. A
// file whose every difference is at a key left in conflict (or that is
// in conflict whole) is reported flagged Conflicted, and does not fail
// the check; one change elsewhere in the file does.
func (m *Merges) Verify(ctx context.Context, rev string, vo VerifyOptions) (*VerifyResult, error) {
	h, err := m.s.Resolve(rev, vo.Branch)
	if err != nil {
		return nil, err
	}
	c, err := m.s.Repo().ReadCommit(h)
	if err != nil {
		return nil, err
	}
	if len(c.Parents) != 2 {
		return nil, fmt.Errorf("%w: %s has %d parent(s); only a two-parent merge commit can be verified", store.ErrUsage, rev, len(c.Parents))
	}
	ours, theirs := c.Parents[0], c.Parents[1]
	bases, err := m.mergeBases(ours, theirs, ours.String()[:12], theirs.String()[:12])
	if err != nil {
		return nil, err
	}
	tr, err := m.mergeTrees(ours, theirs, bases, vo.Strategy)
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{Commit: h.String(), Parents: hashStrings(c.Parents), Bases: hashStrings(bases), Differences: []MergeDifference{}, Conflicts: conflictEntries(tr.Conflicts)}
	oursTree := m.s.TreeOf(ours)
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
	changed, err := m.s.Repo().DiffTrees(oursTree, c.Tree)
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
			unchanged := m.s.EntryHash(oursTree, p)
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
		if jsonmerge.IsJSONPath(p) {
			var eData []byte
			for _, f := range tr.Files {
				if f.Path == p && f.ID == "" {
					eData = f.Data
				}
			}
			if fd, err := m.fileDiffData(p, e, eData, a); err == nil {
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
		return res, fmt.Errorf("%w: %s differs from the recomputed merge of its parents in %d file(s)", store.ErrConflict, shortHashOf(h), unexplained)
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
func (m *Merges) fileDiffData(path string, expected plumbing.Hash, expectedData []byte, actual plumbing.Hash) ([]jsondiff.Change, error) {
	load := func(h plumbing.Hash, data []byte) (any, bool, error) {
		if data == nil {
			if h.IsZero() {
				return nil, false, nil
			}
			var err error
			if data, err = m.s.Repo().ReadBlob(h); err != nil {
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
