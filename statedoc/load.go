package statedoc

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Files reads the store's files by store path ('/'-separated, relative to
// the store's root). The store reads them from a commit or a transaction;
// a symlink must be refused with verbiage.ErrInvalidPath, since a ref must
// not leave the store through one.
type Files interface {
	ReadFile(path string) ([]byte, error)
}

// MaxMounts bounds the mounts one document resolves, so that a document
// naming one shard many times cannot make a read unbounded.
const MaxMounts = 10000

// Mount is one resolved ref.
type Mount struct {
	// At is where the shard appears in the resolved document.
	At verbiage.Path
	// Ref is the ref string as stored.
	Ref string
	// File is the shard's store path.
	File string
	// From is the file holding the ref, and Inner where in it.
	From  string
	Inner verbiage.Path
}

// Doc is a loaded state document: the stored value of it and of every shard
// it mounts, and the resolved view.
type Doc struct {
	path     string
	stored   map[string]any  // store path -> value as stored, refs as strings
	present  map[string]bool // files that existed when loaded
	mounts   []Mount
	resolved any
}

// Load reads the document at path and every shard it mounts, and validates
// the result: refs (no cycle, no escape, every shard present and JSON),
// verbiage keys everywhere, and the specification's shape.
func Load(fsys Files, path string) (*Doc, error) {
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := objects.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrInvalidState, err)
	}
	return newDoc(fsys, path, v, true)
}

// New is the document at path holding root, for a document not stored yet
// (its first write creates the file); shards it mounts are read from fsys.
func New(fsys Files, path string, root any) (*Doc, error) {
	return newDoc(fsys, path, root, false)
}

func newDoc(fsys Files, path string, root any, present bool) (*Doc, error) {
	d := &Doc{
		path:    path,
		stored:  map[string]any{path: root},
		present: map[string]bool{path: present},
	}
	// Resolve in map order first; only a document with an error is walked
	// again in key order, so that the error named is always the same one.
	r := resolver{d: d, fsys: fsys}
	v, _, err := r.resolve(path, root, nil, nil, []string{path})
	if err != nil {
		d.mounts = nil
		r.sorted = true
		if _, _, again := r.resolve(path, root, nil, nil, []string{path}); again != nil {
			err = again
		}
		return nil, err
	}
	slices.SortStableFunc(d.mounts, func(a, b Mount) int { return comparePaths(a.At, b.At) })
	d.resolved = v
	if err := verbiage.ValidateKeys(v); err != nil {
		return nil, d.keyError(err)
	}
	if err := Validate(v); err != nil {
		return nil, err
	}
	return d, nil
}

// keyError names the file that holds a bad key when it is in a shard.
func (d *Doc) keyError(err error) error {
	ke, ok := err.(*verbiage.KeyError)
	if !ok {
		return err
	}
	file, inner := d.Locate(ke.Path)
	if file == d.path {
		return err
	}
	return fmt.Errorf("in shard %s at %q: %w", file, inner.String(), err)
}

// Path is the document's store path.
func (d *Doc) Path() string { return d.path }

// Resolved is the document with every mount inlined. It shares memory with
// the Doc: treat it as read-only (the verbs never modify their input).
func (d *Doc) Resolved() any { return d.resolved }

// Mounts lists the mounts ordered by their path in the resolved document.
func (d *Doc) Mounts() []Mount { return slices.Clone(d.mounts) }

// Files lists the document and every shard it mounts, sorted.
func (d *Doc) Files() []string { return slices.Sorted(maps.Keys(d.stored)) }

// Mounted reports whether file is the document or one of its shards.
func (d *Doc) Mounted(file string) bool {
	_, ok := d.stored[file]
	return ok
}

// Stored returns a file's value as stored (refs as strings).
func (d *Doc) Stored(file string) (any, bool) {
	v, ok := d.stored[file]
	return v, ok
}

// Locate maps a key path of the resolved document to the file that stores
// it and the key path inside that file: the innermost mount at or above p.
// A path at a mount point itself is the shard's root. This is what blame
// and log of a mounted key follow.
func (d *Doc) Locate(p verbiage.Path) (file string, inner verbiage.Path) {
	file, inner = d.path, p
	best := -1
	for _, m := range d.mounts {
		if len(m.At) > best && p.HasPrefix(m.At) {
			best = len(m.At)
			file, inner = m.File, p[len(m.At):]
		}
	}
	return file, slices.Clone(inner)
}

// StoredAt returns the value at p as stored: inside the file Locate names,
// with refs below it shown as strings (get --no-resolve).
func (d *Doc) StoredAt(p verbiage.Path) (any, error) {
	file, inner := d.Locate(p)
	return objects.Get(d.stored[file], inner)
}

type resolver struct {
	d      *Doc
	fsys   Files
	sorted bool // visit object keys in order (for a deterministic error)
}

// comparePaths orders paths segment by segment, indexes numerically.
func comparePaths(a, b verbiage.Path) int {
	for i := range min(len(a), len(b)) {
		ai, aok := a[i].Index()
		bi, bok := b[i].Index()
		if aok && bok {
			if c := ai - bi; c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(a[i].Key, b[i].Key); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// resolve returns v with its refs inlined; changed is false when v holds no
// ref, in which case v itself is returned and nothing is copied. at is the
// path in the resolved document, inner the path inside file, stack the files
// being resolved (a ref to one of them is a cycle).
func (r *resolver) resolve(file string, v any, at, inner verbiage.Path, stack []string) (any, bool, error) {
	switch x := v.(type) {
	case string:
		ref, ok, err := ParseRef(x)
		if !ok {
			return x, false, nil
		}
		where := fmt.Sprintf("%s at %q", file, inner.String())
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", where, err)
		}
		if ref.HasInit {
			return nil, false, fmt.Errorf("%s: %w", where, refError(x, "a stored ref holds white space (an init payload is only taken when setting)"))
		}
		target, err := Target(file, ref.Path)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", where, err)
		}
		if i := slices.Index(stack, target); i >= 0 {
			return nil, false, fmt.Errorf("%s: %w: ref cycle %s", where, ErrInvalidState, strings.Join(slices.Concat(stack[i:], []string{target}), " -> "))
		}
		if len(r.d.mounts) >= MaxMounts {
			return nil, false, fmt.Errorf("%s: %w: more than %d mounts", where, ErrInvalidState, MaxMounts)
		}
		sv, loaded := r.d.stored[target]
		if !loaded {
			data, err := r.fsys.ReadFile(target)
			if errors.Is(err, verbiage.ErrInvalidPath) {
				return nil, false, fmt.Errorf("%s: shard %s: %w", where, target, err)
			}
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w: shard %s: %w", where, ErrInvalidState, target, err)
			}
			if sv, err = objects.Decode(data); err != nil {
				return nil, false, fmt.Errorf("%s: %w: shard %s: %w", where, ErrInvalidState, target, err)
			}
			r.d.stored[target] = sv
			r.d.present[target] = true
		}
		if s, ok := sv.(string); ok && IsRef(s) {
			return nil, false, fmt.Errorf("%s: %w: shard %s holds only a ref (chained mounts are not allowed)", where, ErrInvalidState, target)
		}
		r.d.mounts = append(r.d.mounts, Mount{At: slices.Clone(at), Ref: x, File: target, From: file, Inner: slices.Clone(inner)})
		out, _, err := r.resolve(target, sv, at, verbiage.Path{}, slices.Concat(stack, []string{target}))
		return out, true, err
	case map[string]any, []any:
		// at and inner grow in place: nothing keeps them past the call
		// but Mount, which copies them.
		return rebuild(x, r.sorted, func(k string, child any) (any, bool, error) {
			seg := verbiage.Segment{Key: k}
			return r.resolve(file, child, append(at, seg), append(inner, seg), stack)
		})
	}
	return v, false, nil
}

// rebuild calls fn on each child of an object (in key order when sorted)
// or array, with its key or index, and returns v with the children fn
// changed, copying v only when one did: most walks of a document change
// nothing, and then allocate nothing.
func rebuild(v any, sorted bool, fn func(key string, child any) (any, bool, error)) (any, bool, error) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		keys := maps.Keys(x)
		if sorted {
			keys = slices.Values(slices.Sorted(keys))
		}
		for k := range keys {
			nv, changed, err := fn(k, x[k])
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = nv
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	case []any:
		var out []any
		for i, e := range x {
			nv, changed, err := fn(strconv.Itoa(i), e)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = nv
			}
		}
		if out == nil {
			return x, false, nil
		}
		return out, true, nil
	}
	return v, false, nil
}
