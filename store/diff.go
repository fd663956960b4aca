package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// FileDiff is the semantic difference of one document between two
// revisions.
type FileDiff struct {
	File string `json:"file"`
	// Status is "added", "deleted", "modified", "renamed" (moved whole,
	// unchanged: From is where it was), or "binary" for a file that is
	// not JSON (its changes are not shown key by key).
	Status string `json:"status"`
	From   string `json:"from,omitempty"`
	// Change says what happened to a binary file, which has no key-level
	// changes: "added", "deleted" or "modified".
	Change string `json:"change,omitempty"`
	// Old and New are the decoded documents (nil when absent), for
	// jsondiff.Patch and jsondiff.WriteMarkdown.
	Old     any               `json:"-"`
	New     any               `json:"-"`
	Changes []jsondiff.Change `json:"changes"`
}

// Patch is the RFC 6902 patch from the document's old version to its new
// one; with a key path, only that subtree's operations (pointers still
// from the document root). A binary file's is empty.
func (d FileDiff) Patch(keypath string) ([]jsondiff.Op, error) {
	if d.Status == "binary" {
		return []jsondiff.Op{}, nil
	}
	p, err := verbiage.ParsePath(keypath)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nonNilOps(jsondiff.Patch(d.Old, d.New)), nil
	}
	ov, oerr := objects.Get(d.Old, p)
	nv, nerr := objects.Get(d.New, p)
	ptr := p.Pointer()
	switch {
	case oerr != nil && nerr != nil:
		return []jsondiff.Op{}, nil
	case oerr != nil:
		return []jsondiff.Op{{Op: "add", Path: ptr, Value: nv}}, nil
	case nerr != nil:
		return []jsondiff.Op{{Op: "remove", Path: ptr}}, nil
	}
	ops := jsondiff.Patch(ov, nv)
	for i := range ops {
		ops[i].Path = ptr + ops[i].Path
		if ops[i].From != "" || ops[i].Op == "move" || ops[i].Op == "copy" {
			ops[i].From = ptr + ops[i].From
		}
	}
	return nonNilOps(ops), nil
}

func nonNilOps(ops []jsondiff.Op) []jsondiff.Op {
	if ops == nil {
		return []jsondiff.Op{}
	}
	return ops
}

// DiffResult is what changed between two commits, key by key.
type DiffResult struct {
	// From and To are the commits compared (From "" when To has no
	// parent).
	From  string     `json:"from"`
	To    string     `json:"to"`
	Files []FileDiff `json:"files"`
	// MergeBases, with DiffOptions.MergeBase, are the merge bases of the
	// two revisions, newest first; From is the first, as git diff A...B
	// takes one when a criss-cross history has several.
	MergeBases []string `json:"merge_bases,omitempty"`
}

// Diff compares documents between two revisions, key by key.
func (s *Store) Diff(ctx context.Context, o DiffOptions) (*DiffResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var bases []string
	if o.MergeBase {
		hs, err := s.MergeBases(o.From, o.To, o.Branch)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			bases = append(bases, h.String())
		}
		o.From, o.MergeBase = bases[0], false
	}
	files, from, to, err := s.diff(o)
	if err != nil {
		return nil, err
	}
	res := &DiffResult{To: to.String(), Files: files, MergeBases: bases}
	if !from.IsZero() {
		res.From = from.String()
	}
	return res, nil
}

// MergeBases are the best common ancestors of two revisions, newest
// first, as git merge-base --all finds them. Histories with none are an
// error wrapping ErrNotFound; in a shallow clone whose boundary hides the
// common part, a *repo.ShallowError.
func (s *Store) MergeBases(a, b, branch string) ([]plumbing.Hash, error) {
	ha, err := s.Resolve(a, branch)
	if err != nil {
		return nil, err
	}
	hb, err := s.Resolve(b, branch)
	if err != nil {
		return nil, err
	}
	bases, err := s.repo.MergeBases(ha, hb)
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		if s.repo.IsShallow() {
			return nil, &repo.ShallowError{Rev: "the common history of " + a + " and " + b}
		}
		return nil, fmt.Errorf("%s and %s have no common history (no merge base): %w", a, b, ErrNotFound)
	}
	return bases, nil
}

func (s *Store) diff(o DiffOptions) ([]FileDiff, plumbing.Hash, plumbing.Hash, error) {
	var from, to plumbing.Hash
	var err error
	switch {
	case o.From == "" && o.To == "":
		o.From = "HEAD"
		fallthrough
	case o.To == "":
		if to, err = s.Resolve(o.From, o.Branch); err != nil {
			return nil, from, to, err
		}
		c, err := s.repo.ReadCommit(to)
		if err != nil {
			return nil, from, to, err
		}
		if c.Shallow {
			// What it changed is against a parent the clone lacks.
			return nil, from, to, &repo.ShallowError{Rev: o.From + "^"}
		}
		if len(c.Parents) > 0 {
			from = c.Parents[0]
		}
	default:
		if from, err = s.Resolve(o.From, o.Branch); err != nil {
			return nil, from, to, err
		}
		if to, err = s.Resolve(o.To, o.Branch); err != nil {
			return nil, from, to, err
		}
	}
	key, err := verbiage.ParsePath(o.Key)
	if err != nil {
		return nil, from, to, err
	}
	file := ""
	if o.File != "" {
		if file, err = verbiage.CleanStorePath(o.File); err != nil {
			return nil, from, to, err
		}
	}
	treeOf := func(h plumbing.Hash) (plumbing.Hash, error) {
		if h.IsZero() {
			return plumbing.ZeroHash, nil
		}
		c, err := s.repo.ReadCommit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return c.Tree, nil
	}
	ta, err := treeOf(from)
	if err != nil {
		return nil, from, to, err
	}
	tb, err := treeOf(to)
	if err != nil {
		return nil, from, to, err
	}
	files, err := s.repo.DiffTrees(ta, tb)
	if err != nil {
		return nil, from, to, err
	}
	var out []FileDiff
	// A file moved whole (aiwg-state mv, git mv) is one rename, as log and
	// blame follow it, not a deletion and an addition. Only exact moves:
	// a file moved and changed in one commit shows as both.
	deleted := map[plumbing.Hash][]string{}
	for _, f := range files {
		if f.New.IsZero() {
			deleted[f.Old] = append(deleted[f.Old], f.Path)
		}
	}
	movedFrom := map[string]string{}
	for _, f := range files {
		if f.Old.IsZero() && len(deleted[f.New]) > 0 {
			movedFrom[f.Path] = deleted[f.New][0]
			deleted[f.New] = deleted[f.New][1:]
		}
	}
	moved := map[string]bool{}
	for _, from := range movedFrom {
		moved[from] = true
	}
	for _, f := range files {
		if from, ok := movedFrom[f.Path]; ok {
			if file == "" || file == f.Path || file == from {
				out = append(out, FileDiff{File: f.Path, From: from, Status: "renamed", Changes: []jsondiff.Change{}})
			}
			continue
		}
		if moved[f.Path] || (file != "" && f.Path != file) {
			continue
		}
		fd, err := s.fileDiff(f.Path, f.Old, f.New, key)
		if err != nil {
			return nil, from, to, err
		}
		if fd.Status == "binary" || len(fd.Changes) > 0 {
			out = append(out, fd)
		}
	}
	return out, from, to, nil
}

func (s *Store) fileDiff(path string, oldH, newH plumbing.Hash, key verbiage.Path) (FileDiff, error) {
	fd := FileDiff{File: path, Status: "modified"}
	switch {
	case oldH.IsZero():
		fd.Status = "added"
	case newH.IsZero():
		fd.Status = "deleted"
	}
	load := func(h plumbing.Hash) (any, bool, error) {
		if h.IsZero() {
			return nil, false, nil
		}
		data, err := s.repo.ReadBlob(h)
		if err != nil {
			return nil, false, err
		}
		v, err := objects.Decode(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return v, true, nil
	}
	binary := func() (FileDiff, error) {
		return FileDiff{File: path, Status: "binary", Change: fd.Status, Changes: []jsondiff.Change{}}, nil
	}
	if !strings.HasSuffix(path, ".json") {
		return binary()
	}
	var okOld, okNew bool
	var err error
	if fd.Old, okOld, err = load(oldH); err != nil {
		return binary()
	}
	if fd.New, okNew, err = load(newH); err != nil {
		return binary()
	}
	fd.Changes = jsondiff.Diff(fd.Old, fd.New, jsondiff.Options{OldMissing: !okOld, NewMissing: !okNew, Prefix: key})
	return fd, nil
}
