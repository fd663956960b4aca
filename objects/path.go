package objects

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/verbiage"
)

var (
	// ErrNotFound is returned when a key path addresses nothing.
	ErrNotFound = errors.New("not found")
	// ErrNotContainer is returned when a key path goes through a value that
	// is not an object or an array, or through an array with a key that is
	// not an index. Writes never turn such a value into a container.
	ErrNotContainer = errors.New("not a container")
)

// Match is one value a key path selects, with its concrete path (wildcards
// replaced by the keys and indexes they matched).
type Match struct {
	Path  verbiage.Path
	Value any
}

func notFound(p verbiage.Path, detail string) error {
	if detail != "" {
		return fmt.Errorf("%w: key path %q: %s", ErrNotFound, p.String(), detail)
	}
	return fmt.Errorf("%w: key path %q", ErrNotFound, p.String())
}

func notContainer(p verbiage.Path, i int, v any) error {
	return fmt.Errorf("%w: key path %q: %s is %s", ErrNotContainer, p.String(), where(p[:i]), KindOf(v))
}

// where names the value at key path p in a message: the document itself
// has the empty path, which quoted reads as a key named "".
func where(p verbiage.Path) string {
	if len(p) == 0 {
		return "the document"
	}
	return strconv.Quote(p.String())
}

// KindOf names the JSON kind of a decoded value, for messages: "an
// object", "a string", "null".
func KindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

func refuseWildcard(p verbiage.Path) error {
	for _, s := range p {
		if s.Wildcard {
			return fmt.Errorf("%w: key path %q: wildcard where one value is addressed", verbiage.ErrInvalidPath, p.String())
		}
	}
	return nil
}

// Get returns the value at p. On an object every segment is a key; on an
// array a segment must be an index in range ("-" addresses nothing).
func Get(doc any, p verbiage.Path) (any, error) {
	if err := refuseWildcard(p); err != nil {
		return nil, err
	}
	cur := doc
	for i, seg := range p {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[seg.Key]
			if !ok {
				return nil, notFound(p[:i+1], "")
			}
			cur = v
		case []any:
			n, ok := seg.Index()
			if !ok || n >= len(x) {
				return nil, notFound(p[:i+1], "")
			}
			cur = x[n]
		default:
			return nil, notContainer(p, i, cur)
		}
	}
	return cur, nil
}

// Set returns a new root with v at p; doc is not modified (the objects and
// arrays on the way to p are copied, everything else is shared, and v is
// stored as is). Missing object members on the way are created as objects,
// or as arrays when the next segment is "-".
// On an array an index in range replaces, an index equal to the length or
// "-" appends, and anything beyond is ErrNotFound. The empty path replaces
// the root. A nil doc (no document yet, or a null root) starts a new object;
// any other scalar on the way is ErrNotContainer, never silently replaced.
func Set(doc any, p verbiage.Path, v any) (any, error) {
	if err := refuseWildcard(p); err != nil {
		return nil, err
	}
	return set(doc, doc != nil, p, 0, v)
}

// set returns node with v at p[i:]; exists is false when node is a member
// being created.
func set(node any, exists bool, p verbiage.Path, i int, v any) (any, error) {
	if i == len(p) {
		return v, nil
	}
	seg := p[i]
	if !exists {
		node = map[string]any(nil)
		if seg.Append() {
			// "-" is RFC 6901's end of an array: a.- on a missing a
			// means a new array, not an object with a key "-".
			node = []any(nil)
		}
	}
	switch x := node.(type) {
	case map[string]any:
		child, ok := x[seg.Key]
		if !ok && !utf8.ValidString(seg.Key) {
			// The document could no longer be encoded.
			return nil, fmt.Errorf("%w: key path %q: key is not valid UTF-8", verbiage.ErrInvalidPath, p[:i+1].String())
		}
		nv, err := set(child, ok, p, i+1, v)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(x)+1)
		maps.Copy(out, x)
		out[seg.Key] = nv
		return out, nil
	case []any:
		n, isIndex := seg.Index()
		switch {
		case seg.Append() || (isIndex && n == len(x)):
			nv, err := set(nil, false, p, i+1, v)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(x)+1)
			copy(out, x)
			out[len(x)] = nv
			return out, nil
		case isIndex && n < len(x):
			nv, err := set(x[n], true, p, i+1, v)
			if err != nil {
				return nil, err
			}
			out := slices.Clone(x)
			out[n] = nv
			return out, nil
		case isIndex:
			return nil, notFound(p[:i+1], fmt.Sprintf("index %d beyond the end of an array of %d", n, len(x)))
		default:
			return nil, fmt.Errorf("%w: key path %q: %s is an array and %q is not an index",
				ErrNotContainer, p.String(), where(p[:i]), seg.Key)
		}
	default:
		return nil, notContainer(p, i, node)
	}
}

// Delete returns a new root without the value at p; doc is not modified.
// Deleting an array element removes it, shifting the ones after it. The root
// itself cannot be deleted (ErrInvalidPath): that is deleting the file.
func Delete(doc any, p verbiage.Path) (any, error) {
	if err := refuseWildcard(p); err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: the document root cannot be deleted", verbiage.ErrInvalidPath)
	}
	return del(doc, p, 0)
}

func del(node any, p verbiage.Path, i int) (any, error) {
	seg := p[i]
	last := i == len(p)-1
	switch x := node.(type) {
	case map[string]any:
		child, ok := x[seg.Key]
		if !ok {
			return nil, notFound(p[:i+1], "")
		}
		if last {
			out := make(map[string]any, len(x)-1)
			for k, v := range x {
				if k != seg.Key {
					out[k] = v
				}
			}
			return out, nil
		}
		nv, err := del(child, p, i+1)
		if err != nil {
			return nil, err
		}
		out := maps.Clone(x)
		out[seg.Key] = nv
		return out, nil
	case []any:
		n, ok := seg.Index()
		if !ok || n >= len(x) {
			return nil, notFound(p[:i+1], "")
		}
		if last {
			out := make([]any, 0, len(x)-1)
			out = append(out, x[:n]...)
			return append(out, x[n+1:]...), nil
		}
		nv, err := del(x[n], p, i+1)
		if err != nil {
			return nil, err
		}
		out := slices.Clone(x)
		out[n] = nv
		return out, nil
	default:
		return nil, notContainer(p, i, node)
	}
}

// Select returns every value p matches, in a deterministic order (object
// keys sorted, array order). A wildcard matches every member of an object
// or array; with wildcards, branches that do not match are skipped and no
// match is not an error. A path without wildcards addresses one value and
// fails as Get does.
func Select(doc any, p verbiage.Path) ([]Match, error) {
	if refuseWildcard(p) == nil {
		v, err := Get(doc, p)
		if err != nil {
			return nil, err
		}
		return []Match{{Path: slices.Clone(p), Value: v}}, nil
	}
	var out []Match
	selectInto(&out, doc, p, make(verbiage.Path, 0, len(p)))
	return out, nil
}

func selectInto(out *[]Match, node any, rest, at verbiage.Path) {
	if len(rest) == 0 {
		*out = append(*out, Match{Path: slices.Clone(at), Value: node})
		return
	}
	seg := rest[0]
	switch x := node.(type) {
	case map[string]any:
		if !seg.Wildcard {
			if v, ok := x[seg.Key]; ok {
				selectInto(out, v, rest[1:], append(at, seg))
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			selectInto(out, x[k], rest[1:], append(at, verbiage.Segment{Key: k}))
		}
	case []any:
		if !seg.Wildcard {
			if n, ok := seg.Index(); ok && n < len(x) {
				selectInto(out, x[n], rest[1:], append(at, seg))
			}
			return
		}
		for i, v := range x {
			selectInto(out, v, rest[1:], append(at, verbiage.Segment{Key: strconv.Itoa(i)}))
		}
	}
}

// Leaves returns every leaf of doc (a scalar, an empty object or an empty
// array) with its path, object keys sorted and arrays in order, so blame and
// diff see documents line by line in the order the canonical encoding
// writes them.
func Leaves(doc any) []Match {
	var out []Match
	leaves(&out, doc, verbiage.Path{})
	return out
}

func leaves(out *[]Match, v any, at verbiage.Path) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			for _, k := range slices.Sorted(maps.Keys(x)) {
				leaves(out, x[k], append(at, verbiage.Segment{Key: k}))
			}
			return
		}
	case []any:
		if len(x) > 0 {
			for i, el := range x {
				leaves(out, el, append(at, verbiage.Segment{Key: strconv.Itoa(i)}))
			}
			return
		}
	}
	*out = append(*out, Match{Path: slices.Clone(at), Value: v})
}
