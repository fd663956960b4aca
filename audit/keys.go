package audit

import (
	"encoding/binary"
	"strconv"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// KeyChange is a key path whose value differs between two versions of a
// document. Deep says keys below it changed too: one side holds a
// non-empty object or array there (a subtree added, removed or replaced).
type KeyChange struct {
	Path verbiage.Path
	Deep bool
}

// ChangedKeys returns the smallest set of key paths whose value differs
// between old and new, compared position by position (an absent side is
// missing, not null): a leaf that changed, or the top of a subtree that was
// added, removed or replaced by a value of another kind. A key path K
// changed exactly when K is a prefix of a returned path, or a returned path
// is K itself, or a returned Deep path is a prefix of K and K exists on
// one side (one exception: where an array became an object or back, key
// "0" of one and index 0 of the other may hold equal values and still
// count as changed).
func ChangedKeys(old any, oldOK bool, new any, newOK bool) []KeyChange {
	var out []KeyChange
	changedKeys(&out, verbiage.Path{}, old, oldOK, new, newOK)
	return out
}

// nonEmptyContainer is a value with keys below it.
func nonEmptyContainer(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return false
}

func changedKeys(out *[]KeyChange, at verbiage.Path, o any, oOK bool, n any, nOK bool) {
	emit := func() {
		deep := (oOK && nonEmptyContainer(o)) || (nOK && nonEmptyContainer(n))
		*out = append(*out, KeyChange{Path: clonePath(at), Deep: deep})
	}
	switch {
	case !oOK && !nOK:
		return
	case !oOK || !nOK:
		emit()
		return
	}
	switch x := o.(type) {
	case map[string]any:
		y, ok := n.(map[string]any)
		if !ok {
			break
		}
		for k, xv := range x {
			yv, ok := y[k]
			if ok && objects.Equal(xv, yv) {
				continue
			}
			changedKeys(out, append(at, verbiage.Segment{Key: k}), xv, true, yv, ok)
		}
		for k, yv := range y {
			if _, ok := x[k]; !ok {
				changedKeys(out, append(at, verbiage.Segment{Key: k}), nil, false, yv, true)
			}
		}
		return
	case []any:
		y, ok := n.([]any)
		if !ok {
			break
		}
		for i := 0; i < max(len(x), len(y)); i++ {
			var xv, yv any
			xok, yok := i < len(x), i < len(y)
			if xok {
				xv = x[i]
			}
			if yok {
				yv = y[i]
			}
			if xok && yok && objects.Equal(xv, yv) {
				continue
			}
			changedKeys(out, append(at, verbiage.Segment{Key: strconv.Itoa(i)}), xv, xok, yv, yok)
		}
		return
	}
	if !objects.Equal(o, n) {
		emit()
	}
}

func clonePath(p verbiage.Path) verbiage.Path {
	c := make(verbiage.Path, len(p))
	copy(c, p)
	return c
}

// A key of the index names a file and a key path in it: the file, a NUL,
// then each segment as a uvarint length and its bytes. The encoding is
// injective (JSON keys may hold any character, even NUL or nothing), and the
// key of a path prefix is a byte prefix of the key of the path.

func fileKey(file string) string { return file + "\x00" }

func keyOf(file string, p verbiage.Path) string {
	b := []byte(fileKey(file))
	for _, s := range p {
		b = binary.AppendUvarint(b, uint64(len(s.Key)))
		b = append(b, s.Key...)
	}
	return string(b)
}
