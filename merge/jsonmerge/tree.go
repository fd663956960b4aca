package jsonmerge

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
)

// File is one side's copy of a file in a three-way merge. Clock is the
// hybrid logical clock of the last write of the file on that side; it orders
// the two writes for last-write-wins and first-write-wins.
type File struct {
	Data    []byte
	Missing bool
	Clock   Clock
}

// FileResult is a merged file. Conflicts lists what no strategy settled,
// key by key; Reason is set instead when the file could not be merged key
// by key at all (it is not JSON on a side, or not a .json file). With
// conflicts, Data is still a complete document: ours' value stands at each
// conflicted key, or ours' whole file when Reason is set.
type FileResult struct {
	Data      []byte
	Missing   bool
	Conflicts []Conflict
	Reason    string
}

// Clean reports whether the merge settled everything.
func (r FileResult) Clean() bool { return len(r.Conflicts) == 0 && r.Reason == "" }

// IsJSONPath reports whether a path is merged as JSON: documents are .json
// files; anything else is merged only when one side left it alone.
func IsJSONPath(path string) bool { return strings.HasSuffix(path, ".json") }

// MergeFile merges the three copies of the file at path. A .json file is
// decoded and merged key by key (Values) and written back canonical; a
// deletion on one side against a change on the other is a clash like any
// other, settled by the strategy or recorded at the document root. Any
// other file changed differently on both sides is a conflict. Copies equal
// on both sides, or changed on one side only, are taken as they are,
// without decoding.
func MergeFile(path string, base, ours, theirs File, opts Options) FileResult {
	return mergeFile(IsJSONPath(path), base, ours, theirs, opts)
}

func mergeFile(asJSON bool, base, ours, theirs File, opts Options) FileResult {
	sums := asJSON && opts.sums() && !base.Missing && !ours.Missing && !sameFile(base, ours)
	switch {
	case sameFile(ours, theirs) && !sums:
		return FileResult{Data: ours.Data, Missing: ours.Missing}
	case sameFile(base, ours):
		return FileResult{Data: theirs.Data, Missing: theirs.Missing}
	case sameFile(base, theirs):
		return FileResult{Data: ours.Data, Missing: ours.Missing}
	}
	keep := FileResult{Data: ours.Data, Missing: ours.Missing}
	if !asJSON {
		keep.Reason = "not a JSON document: " + fileClash(ours, theirs)
		return keep
	}
	var sides [3]Side
	for i, f := range [3]File{base, ours, theirs} {
		sides[i] = Side{Missing: f.Missing, Clock: f.Clock}
		if f.Missing {
			continue
		}
		v, err := objects.Decode(f.Data)
		if err != nil {
			keep.Reason = fmt.Sprintf("the %s copy is not valid JSON: %v", [3]string{"base", "ours", "theirs"}[i], err)
			return keep
		}
		sides[i].Value = v
	}
	v, missing, conflicts := Values(sides[0], sides[1], sides[2], opts)
	out := FileResult{Missing: missing, Conflicts: conflicts}
	if missing {
		return out
	}
	data, err := objects.Encode(v)
	if err != nil {
		// Values only recombines decoded input, which always encodes.
		keep.Reason = "merged document does not encode: " + err.Error()
		return keep
	}
	out.Data = data
	return out
}

func sameFile(a, b File) bool {
	return a.Missing == b.Missing && (a.Missing || bytes.Equal(a.Data, b.Data))
}

func fileClash(ours, theirs File) string {
	if ours.Missing || theirs.Missing {
		return "deleted on one side, changed on the other"
	}
	return "both sides changed it differently"
}

// TreeFile is a path that changed on at least one side, with the id of
// each side's content (a git blob id in the store): "" when the file is
// absent on that side.
type TreeFile struct {
	Path               string
	Base, Ours, Theirs string
}

// TreeOptions configure Trees.
type TreeOptions struct {
	// Attributes pick the options per path (a store's .gitattributes).
	Attributes Attributes
	// Override, when its Strategy is set, replaces the attributes for
	// every path.
	Override Options
	// Load returns the content of an id.
	Load func(id string) ([]byte, error)
	// Clocks returns the clocks of ours' and theirs' last writes of a
	// path; nil means no clocks (writes then order by their data's own
	// times, and last by content).
	Clocks func(path string) (ours, theirs Clock, err error)
}

// OptionsFor is the strategy in force at path: the override, else the
// attributes, else merge-objects.
func (o TreeOptions) OptionsFor(path string) Options {
	if o.Override.Strategy != "" {
		return o.Override
	}
	opts, ok := o.Attributes.Lookup(path)
	if !ok {
		opts.Strategy = MergeObjects
	}
	return opts
}

// TreeResult is the outcome of a tree merge, against ours: Files are the
// paths whose merged content differs from ours' (in path order), Conflicts
// the files with something left to resolve (their merged content, ours'
// where undecided, is in Files when it differs from ours').
type TreeResult struct {
	Files     []MergedFile
	Conflicts []Record
}

// MergedFile is a path's merged content. ID is set when the content is a
// side's unchanged (no need to store it again); Data otherwise.
type MergedFile struct {
	Path    string
	ID      string
	Data    []byte
	Missing bool
	// From says where the content came from: "theirs" (changed on their
	// side only) or "merged".
	From string
}

// Trees merges two trees file by file: a path changed on one side only
// takes that side (additions and deletions alike), a path changed the same
// way on both is kept, and a path changed differently on both goes to
// MergeFile with the options in force there. Nothing is decoded that one
// side left alone, so the cost follows the changes, not the tree.
func Trees(files []TreeFile, opts TreeOptions) (TreeResult, error) {
	var out TreeResult
	sorted := append([]TreeFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, f := range sorted {
		// Under sum the same change on both sides is two changes: both
		// sides' identical copies are merged, not taken as one.
		sums := f.Ours == f.Theirs && f.Base != f.Ours && f.Base != "" && f.Ours != "" && IsJSONPath(f.Path) && opts.OptionsFor(f.Path).sums()
		switch {
		case (f.Ours == f.Theirs && !sums), f.Base == f.Theirs:
			continue
		case f.Base == f.Ours:
			out.Files = append(out.Files, MergedFile{Path: f.Path, ID: f.Theirs, Missing: f.Theirs == "", From: "theirs"})
			continue
		}
		var sides [3]File
		for i, id := range [3]string{f.Base, f.Ours, f.Theirs} {
			if id == "" {
				sides[i].Missing = true
				continue
			}
			data, err := opts.Load(id)
			if err != nil {
				return TreeResult{}, fmt.Errorf("%s: %w", f.Path, err)
			}
			sides[i].Data = data
		}
		if opts.Clocks != nil {
			var err error
			if sides[1].Clock, sides[2].Clock, err = opts.Clocks(f.Path); err != nil {
				return TreeResult{}, fmt.Errorf("%s: %w", f.Path, err)
			}
		}
		o := opts.OptionsFor(f.Path)
		r := MergeFile(f.Path, sides[0], sides[1], sides[2], o)
		if !r.Clean() {
			out.Conflicts = append(out.Conflicts, Record{
				File: f.Path, Strategy: o.Strategy, Reason: r.Reason, Keys: r.Conflicts,
				BaseID: f.Base, OursID: f.Ours, TheirsID: f.Theirs,
			})
		}
		if sameFile(File{Data: r.Data, Missing: r.Missing}, sides[1]) {
			continue
		}
		mf := MergedFile{Path: f.Path, Data: r.Data, Missing: r.Missing, From: "merged"}
		if !r.Missing && bytes.Equal(r.Data, sides[2].Data) && !sides[2].Missing {
			mf.ID, mf.Data = f.Theirs, nil
		}
		out.Files = append(out.Files, mf)
	}
	return out, nil
}
