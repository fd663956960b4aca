package jsondiff

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Kind is what happened at a key path.
type Kind string

const (
	Added   Kind = "added"
	Removed Kind = "removed"
	Changed Kind = "changed"
	Moved   Kind = "moved"
)

// Change is one difference at one key path.
//
// Indices in paths follow the side the value lives on: a Removed element
// is addressed by its index in the old array, an Added or Changed one by its
// index in the new array, and a Moved one from its old index (From) to its
// new one (Path).
type Change struct {
	Kind Kind
	Path verbiage.Path
	From verbiage.Path // where a Moved value was; empty otherwise
	Old  any           // the value before; nil for Added
	New  any           // the value after; nil for Removed
}

// Options narrows a Diff.
type Options struct {
	// OldMissing and NewMissing say the document does not exist on that side
	// (the file is created or deleted), which is not the same as null.
	OldMissing bool
	NewMissing bool
	// Prefix restricts the diff to the subtree at this key path; a wildcard
	// segment stands for every member there. A prefix that does not resolve
	// on one side makes that side missing, so its subtree is Added or Removed.
	Prefix verbiage.Path
}

// Diff reports the changes from old to new in path order: object members
// sorted by key, array elements in the order of their alignment, a move
// where its value arrives. Values are in the encoding/json UseNumber form
// (anything else is converted first). A subtree removed at one path and
// added with an equal value at another is one Moved change, except for
// null, booleans, numbers and empty values, whose equality across
// unrelated paths is more likely coincidence than a move (within one array,
// any equal element counts as moved).
//
// The result is never nil, so json.Marshal writes [] for no changes.
func Diff(old, new any, opts Options) []Change {
	d := &differ{changes: []Change{}}
	d.under(opts.Prefix, verbiage.Path{}, normalize(old), !opts.OldMissing, normalize(new), !opts.NewMissing)
	d.pairMoves()
	return d.changes
}

type differ struct {
	changes []Change
}

func (d *differ) under(prefix, at verbiage.Path, o any, oOK bool, n any, nOK bool) {
	if len(prefix) == 0 {
		d.top(at, o, oOK, n, nOK)
		return
	}
	seg := prefix[0]
	var keys []string
	if seg.Wildcard {
		keys = unionKeys(o, oOK, n, nOK)
	} else {
		keys = []string{seg.Key}
	}
	for _, k := range keys {
		co, coOK := member(o, oOK, k)
		cn, cnOK := member(n, nOK, k)
		d.under(prefix[1:], at.Child(k), co, coOK, cn, cnOK)
	}
}

func (d *differ) top(at verbiage.Path, o any, oOK bool, n any, nOK bool) {
	switch {
	case !oOK && !nOK:
	case !oOK:
		d.add(Change{Kind: Added, Path: at, New: n})
	case !nOK:
		d.add(Change{Kind: Removed, Path: at, Old: o})
	default:
		d.value(at, o, n)
	}
}

// member looks key up in a container: an object key, or an array index.
func member(v any, ok bool, key string) (any, bool) {
	if !ok {
		return nil, false
	}
	switch t := v.(type) {
	case map[string]any:
		c, ok := t[key]
		return c, ok
	case []any:
		i, ok := verbiage.Segment{Key: key}.Index()
		if !ok || i >= len(t) {
			return nil, false
		}
		return t[i], true
	}
	return nil, false
}

// unionKeys lists the members of o and n for a wildcard, array indices in
// numeric order.
func unionKeys(o any, oOK bool, n any, nOK bool) []string {
	seen := make(map[string]bool)
	var keys []string
	collect := func(v any, ok bool) {
		if !ok {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for k := range t {
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		case []any:
			for i := range t {
				k := strconv.Itoa(i)
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	collect(o, oOK)
	collect(n, nOK)
	sort.Slice(keys, func(a, b int) bool { return lessKey(keys[a], keys[b]) })
	return keys
}

// lessKey orders array indices numerically and anything else bytewise.
func lessKey(a, b string) bool {
	if digits(a) && digits(b) {
		ia, aok := verbiage.Segment{Key: a}.Index()
		ib, bok := verbiage.Segment{Key: b}.Index()
		if aok && bok {
			return ia < ib
		}
	}
	return a < b
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// add records a change. Paths handed to it may share their backing array
// with the walk's path (see child), so they are copied here.
func (d *differ) add(c Change) {
	c.Path = slices.Clone(c.Path)
	if c.From != nil {
		c.From = slices.Clone(c.From)
	}
	if c.Path == nil {
		c.Path = verbiage.Path{}
	}
	d.changes = append(d.changes, c)
}

// child extends a path in place when it has room: the walk is depth first,
// so a sibling overwriting the last segment never disturbs a path still in
// use, and nothing is allocated per key. Anything kept must be cloned.
func child(p verbiage.Path, key string) verbiage.Path {
	return append(p, verbiage.Segment{Key: key})
}

func (d *differ) value(at verbiage.Path, o, n any) {
	ko, kn := kindOf(o), kindOf(n)
	if ko != kn {
		d.add(Change{Kind: Changed, Path: at, Old: o, New: n})
		return
	}
	switch ko {
	case kindObject:
		d.object(at, o.(map[string]any), n.(map[string]any))
	case kindArray:
		d.array(at, o.([]any), n.([]any))
	default:
		if !objects.Equal(o, n) {
			d.add(Change{Kind: Changed, Path: at, Old: o, New: n})
		}
	}
}

func (d *differ) object(at verbiage.Path, o, n map[string]any) {
	for _, k := range differingKeys(o, n) {
		ov, inOld := o[k]
		nv, inNew := n[k]
		switch {
		case !inNew:
			d.add(Change{Kind: Removed, Path: child(at, k), Old: ov})
		case !inOld:
			d.add(Change{Kind: Added, Path: child(at, k), New: nv})
		default:
			d.value(child(at, k), ov, nv)
		}
	}
}

// differingKeys is the sorted list of members that are not equal on both
// sides. Most members of a large state document are unchanged, and
// comparing them is cheaper than sorting and walking them all.
func differingKeys(o, n map[string]any) []string {
	var keys []string
	for k, ov := range o {
		if nv, ok := n[k]; !ok || !objects.Equal(ov, nv) {
			keys = append(keys, k)
		}
	}
	for k := range n {
		if _, ok := o[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func (d *differ) array(at verbiage.Path, o, n []any) {
	if objects.Equal(o, n) {
		return
	}
	for _, s := range align(o, n) {
		switch s.kind {
		case stepKeep, stepPair:
			d.value(child(at, strconv.Itoa(s.j)), o[s.i], n[s.j])
		case stepRemove:
			d.add(Change{Kind: Removed, Path: child(at, strconv.Itoa(s.i)), Old: o[s.i]})
		case stepAdd:
			d.add(Change{Kind: Added, Path: child(at, strconv.Itoa(s.j)), New: n[s.j]})
		case stepMoveTo:
			// Others moving around it can leave an element at its old
			// index: "items.1 moved to items.1" would tell nobody anything.
			if s.i != s.j {
				d.add(Change{Kind: Moved, Path: at.Child(strconv.Itoa(s.j)), From: at.Child(strconv.Itoa(s.i)), Old: o[s.i], New: n[s.j]})
			}
			// An element matched by id may also have been edited.
			d.value(child(at, strconv.Itoa(s.j)), o[s.i], n[s.j])
		}
	}
}

// movable reports whether equal values at two unrelated paths are evidence
// of a move: a non-empty container or string, not a lone number or flag.
func movable(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) > 0
	case []any:
		return len(t) > 0
	case string:
		return t != ""
	}
	return false
}

// pairMoves turns a Removed and an Added of one movable value into a Moved
// at the Added's place, pairing first with first in path order.
func (d *differ) pairMoves() {
	removed := make(map[string][]int)
	for i, c := range d.changes {
		if c.Kind == Removed && movable(c.Old) {
			k := canonical(c.Old)
			removed[k] = append(removed[k], i)
		}
	}
	if len(removed) == 0 {
		return
	}
	drop := make(map[int]bool)
	for i, c := range d.changes {
		if c.Kind != Added || !movable(c.New) {
			continue
		}
		k := canonical(c.New)
		queue := removed[k]
		for len(queue) > 0 && samePath(d.changes[queue[0]].Path, c.Path) {
			queue = queue[1:]
		}
		if len(queue) == 0 {
			continue
		}
		r := queue[0]
		removed[k] = queue[1:]
		drop[r] = true
		d.changes[i] = Change{Kind: Moved, Path: c.Path, From: d.changes[r].Path, Old: d.changes[r].Old, New: c.New}
	}
	if len(drop) == 0 {
		return
	}
	kept := d.changes[:0]
	for i, c := range d.changes {
		if !drop[i] {
			kept = append(kept, c)
		}
	}
	d.changes = kept
}

func samePath(a, b verbiage.Path) bool {
	return len(a) == len(b) && a.HasPrefix(b)
}

// displayPath is a path as people read it; the root has no dot form.
func displayPath(p verbiage.Path) string {
	if len(p) == 0 {
		return "(root)"
	}
	return p.String()
}

// MarshalJSON writes {"kind","path","pointer","from","from_pointer","old",
// "new"}: paths in dot form and as RFC 6901 pointers; "from" only for moves,
// "old" unless Added, "new" unless Removed (null is a value, so absence is
// what says "none").
func (c Change) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString(`{"kind":`)
	writeString(&b, string(c.Kind))
	b.WriteString(`,"path":`)
	writeString(&b, c.Path.String())
	b.WriteString(`,"pointer":`)
	writeString(&b, c.Path.Pointer())
	if c.Kind == Moved {
		b.WriteString(`,"from":`)
		writeString(&b, c.From.String())
		b.WriteString(`,"from_pointer":`)
		writeString(&b, c.From.Pointer())
	}
	if c.Kind != Added {
		b.WriteString(`,"old":`)
		writeJSON(&b, c.Old, "", 0)
	}
	if c.Kind != Removed {
		b.WriteString(`,"new":`)
		writeJSON(&b, c.New, "", 0)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
