package statedoc

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// FileWrite is one file a write changes: its new value and canonical bytes.
type FileWrite struct {
	Path string
	// Create is set when the file did not exist.
	Create bool
	Value  any
	Data   []byte
}

// Update writes a new resolved document back through the mounts and
// returns the files that change, sorted by path, and the document as it
// will be. A value inside a mounted subtree goes to its shard and the
// parent keeps the ref string; a ref in init form writes its payload to the
// shard (refused with ErrExists when that file is mounted now) and is
// stored canonical. The result is validated as Load validates; nothing is
// written on error. No change gives no writes.
func (d *Doc) Update(fsys Files, resolved any) ([]FileWrite, *Doc, error) {
	w := writer{d: d, out: map[string]any{}}
	root, err := w.put(d.path, d.stored[d.path], true, resolved, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := w.emit(d.path, root); err != nil {
		return nil, nil, err
	}
	for _, file := range slices.Sorted(maps.Keys(w.inits)) {
		if err := w.emit(file, w.inits[file]); err != nil {
			return nil, nil, err
		}
	}
	return d.finish(fsys, w.out)
}

// Replace makes value the document's stored root, ignoring the mounts it
// has now (reset: refs in it are unmounted, their files kept).
func (d *Doc) Replace(fsys Files, value any) ([]FileWrite, *Doc, error) {
	return d.finish(fsys, map[string]any{d.path: value})
}

// finish turns new stored values into writes of the files that change, and
// loads the result to validate it.
func (d *Doc) finish(fsys Files, out map[string]any) ([]FileWrite, *Doc, error) {
	var writes []FileWrite
	for _, file := range slices.Sorted(maps.Keys(out)) {
		v := out[file]
		old, had := d.stored[file]
		present := d.present[file]
		if had && present && objects.Equal(old, v) {
			continue
		}
		data, err := objects.Encode(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		create := !present
		if !had {
			// A shard written by an init: it may exist unmounted.
			prev, err := fsys.ReadFile(file)
			create = err != nil
			if err == nil && bytes.Equal(prev, data) {
				continue
			}
		}
		writes = append(writes, FileWrite{Path: file, Create: create, Value: v, Data: data})
	}
	next, err := Load(overlay{base: fsys, writes: writes}, d.path)
	if err != nil {
		return nil, nil, err
	}
	return writes, next, nil
}

// overlay reads writes before the files they replace.
type overlay struct {
	base   Files
	writes []FileWrite
}

func (o overlay) ReadFile(path string) ([]byte, error) {
	for _, w := range o.writes {
		if w.Path == path {
			return w.Data, nil
		}
	}
	return o.base.ReadFile(path)
}

type writer struct {
	d     *Doc
	out   map[string]any // file -> new stored value
	inits map[string]any // file -> init payload, written in this update
}

// emit records a file's new value; a file mounted twice must come out the
// same from both mounts.
func (w *writer) emit(file string, v any) error {
	if prev, ok := w.out[file]; ok {
		if !objects.Equal(prev, v) {
			return fmt.Errorf("%w: %s is mounted more than once and the write would give it different values", ErrInvalidState, file)
		}
		return nil
	}
	w.out[file] = v
	return nil
}

// put returns the stored value for position at of file, whose old stored
// value is old (hasOld false when the position is new), given its new
// resolved value nv.
func (w *writer) put(file string, old any, hasOld bool, nv any, at verbiage.Path) (any, error) {
	if !hasOld {
		return w.fresh(file, nv, at)
	}
	switch o := old.(type) {
	case string:
		ref, ok, _ := ParseRef(o)
		if !ok {
			break
		}
		if ns, isStr := nv.(string); isStr && IsRef(ns) {
			// Pointing the mount elsewhere (or at the same file) changes
			// the parent only.
			return w.fresh(file, nv, at)
		}
		target, err := Target(file, ref.Path)
		if err != nil {
			return nil, err
		}
		sv, err := w.put(target, w.d.stored[target], true, nv, at)
		if err != nil {
			return nil, err
		}
		if err := w.emit(target, sv); err != nil {
			return nil, err
		}
		return o, nil
	case map[string]any:
		nm, ok := nv.(map[string]any)
		if !ok {
			break
		}
		out := make(map[string]any, len(nm))
		for _, k := range slices.Sorted(maps.Keys(nm)) {
			ov, had := o[k]
			v, err := w.put(file, ov, had, nm[k], append(at, verbiage.Segment{Key: k}))
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case []any:
		na, ok := nv.([]any)
		if !ok {
			break
		}
		out := make([]any, len(na))
		for i, e := range na {
			v, err := w.put(file, elem(o, i), i < len(o), e, append(at, verbiage.Segment{Key: strconv.Itoa(i)}))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return w.fresh(file, nv, at)
}

func elem(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return nil
}

// fresh returns a new value as it is stored in file: refs in init form are
// made canonical and their payloads recorded; everything else is kept.
func (w *writer) fresh(file string, v any, at verbiage.Path) (any, error) {
	out, _, err := w.freshValue(file, v, at)
	return out, err
}

// freshValue is fresh, reporting whether anything was replaced; an
// unchanged container is returned as is, not copied.
func (w *writer) freshValue(file string, v any, at verbiage.Path) (any, bool, error) {
	switch x := v.(type) {
	case string:
		ref, ok, err := ParseRef(x)
		if !ok {
			return x, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", at.String(), err)
		}
		if !ref.HasInit {
			return x, false, nil
		}
		target, err := Target(file, ref.Path)
		if err != nil {
			return nil, false, err
		}
		if w.d.Mounted(target) {
			return nil, false, fmt.Errorf("%w: %s is already mounted; an init would overwrite it (set the plain ref %q, or write inside it)", ErrExists, target, ref.String())
		}
		if _, dup := w.inits[target]; dup {
			return nil, false, fmt.Errorf("%w: %s is initialized twice in one write", ErrExists, target)
		}
		payload, err := InitValue(ref.Init)
		if err != nil {
			return nil, false, fmt.Errorf("init payload of %q: %w", ref.String(), err)
		}
		if w.inits == nil {
			w.inits = map[string]any{}
		}
		w.inits[target] = nil // reserved: a nested init of the same file is a duplicate
		stored, err := w.fresh(target, payload, at)
		if err != nil {
			return nil, false, err
		}
		w.inits[target] = stored
		return ref.String(), true, nil
	case map[string]any, []any:
		return rebuild(x, true, func(k string, child any) (any, bool, error) {
			return w.freshValue(file, child, at.Child(k))
		})
	}
	return v, false, nil
}
