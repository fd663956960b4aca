package repo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// DirEntry is a name in a directory of the store.
type DirEntry struct {
	Name  string
	IsDir bool
	Hash  plumbing.Hash
}

// Lookup finds the tree entry at path under root.
func (r *Repo) Lookup(root plumbing.Hash, path string) (TreeEntry, error) {
	if path == "" {
		return TreeEntry{Mode: 0o040000, Hash: root}, nil
	}
	h := root
	for {
		name, rest, more := strings.Cut(path, "/")
		e, ok, err := r.findEntry(h, name)
		if err != nil {
			return TreeEntry{}, err
		}
		if !ok {
			return TreeEntry{}, fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		if !more {
			return e, nil
		}
		if !e.IsDir() {
			return TreeEntry{}, fmt.Errorf("%s is a file: %w", name, ErrNotFound)
		}
		h, path = e.Hash, rest
	}
}

// findEntry finds name in tree h: in the decoded tree when a write has
// cached one, else by scanning the raw tree, which spares a read of one
// key from decoding a 10,000-entry directory.
func (r *Repo) findEntry(h plumbing.Hash, name string) (TreeEntry, bool, error) {
	if h == emptyTree {
		return TreeEntry{}, false, nil
	}
	r.mu.Lock()
	o, ok := r.cache.get(treeKey(h))
	r.mu.Unlock()
	if ok {
		e, found := o.(*Tree).Find(name)
		return e, found, nil
	}
	t, body, err := r.ReadObject(h)
	if err != nil {
		return TreeEntry{}, false, err
	}
	if t != plumbing.TreeObject {
		return TreeEntry{}, false, fmt.Errorf("object %s is a %s, not a tree: %w", h, t, ErrNotFound)
	}
	return scanTree(body, name)
}

// ReadFileAt returns the content of the file at path in tree root.
func (r *Repo) ReadFileAt(root plumbing.Hash, path string) ([]byte, error) {
	e, err := r.Lookup(root, path)
	if errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if err != nil || e.IsDir() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	return r.ReadBlob(e.Hash)
}

// ReadDirAt lists the directory at path ("" is the root) in tree root.
func (r *Repo) ReadDirAt(root plumbing.Hash, path string) ([]DirEntry, error) {
	e, err := r.Lookup(root, path)
	if errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if err != nil || !e.IsDir() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	t, err := r.ReadTree(e.Hash)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, len(t.Entries))
	for i, te := range t.Entries {
		out[i] = DirEntry{Name: te.Name, IsDir: te.IsDir(), Hash: te.Hash}
	}
	return out, nil
}

// Walk calls fn for every file under dir in tree root, in path order.
func (r *Repo) Walk(root plumbing.Hash, dir string, fn func(path string, h plumbing.Hash) error) error {
	e, err := r.Lookup(root, dir)
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, ErrNotFound)
	}
	if !e.IsDir() {
		return fn(dir, e.Hash)
	}
	t, err := r.ReadTree(e.Hash)
	if err != nil {
		return err
	}
	for _, te := range t.Entries {
		p := te.Name
		if dir != "" {
			p = dir + "/" + te.Name
		}
		if te.IsDir() {
			err = r.Walk(te.Hash, "", func(sub string, h plumbing.Hash) error { return fn(p+"/"+sub, h) })
		} else {
			err = fn(p, te.Hash)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
