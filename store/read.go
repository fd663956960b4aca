package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

func (s *Store) Tree(ro ReadOptions) (plumbing.Hash, error) {
	h, err := s.Resolve(ro.At, ro.Branch)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	c, err := s.repo.ReadCommit(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.Tree, nil
}

// TreeOf is the tree of a commit (the zero hash when it cannot be read).
func (s *Store) TreeOf(commit plumbing.Hash) plumbing.Hash {
	c, err := s.repo.ReadCommit(commit)
	if err != nil {
		return plumbing.ZeroHash
	}
	return c.Tree
}

// Get returns the canonical JSON of a key of a document (the whole
// document when keypath is empty). A key path with wildcards returns an
// object from each matching key path to its value.
func (s *Store) Get(ctx context.Context, file, keypath string, ro ReadOptions) ([]byte, error) {
	p, err := verbiage.ParsePath(keypath)
	if err != nil {
		return nil, err
	}
	if ro.At == "" {
		// Pin the revision once, so the rule and the data come from the
		// same commit even while others write.
		h, err := s.Resolve("HEAD", ro.Branch)
		if err != nil {
			return nil, err
		}
		ro.At, ro.named = h.String(), "HEAD"
	}
	if !ro.NoResolve {
		if ruled, err := s.isRuled(file, ro); err != nil {
			return nil, err
		} else if ruled {
			return s.GetState(ctx, file, keypath, ro, false)
		}
	}
	data, err := s.Cat(ctx, file, ro)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return data, nil
	}
	for _, seg := range p {
		if seg.Wildcard {
			return s.selectKeys(file, data, p)
		}
	}
	out, err := objects.GetRaw(data, p)
	if err != nil {
		return nil, fmt.Errorf("%s#%s: %w", file, p, err)
	}
	return out, nil
}

func (s *Store) selectKeys(file string, data []byte, p verbiage.Path) ([]byte, error) {
	doc, err := objects.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ms, err := objects.Select(doc, p)
	if err != nil {
		return nil, fmt.Errorf("%s#%s: %w", file, p, err)
	}
	out := make(map[string]any, len(ms))
	for _, m := range ms {
		out[m.Path.String()] = m.Value
	}
	return objects.Encode(out)
}

// Cat returns a document's stored bytes, checked to be canonical JSON: a
// file written by plain git that is not canonical is returned canonicalized,
// and one that is not JSON is an error naming the file.
//
// What has expired (see TTL) is left out: an expired document is not
// found, expired keys are not in it.
func (s *Store) Cat(ctx context.Context, file string, ro ReadOptions) ([]byte, error) {
	clean, root, data, err := s.readFileAt(file, ro)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, errkind.Errorf(ErrNotFound, "%s: no such document at %s", clean, RevName(ro))
	}
	out, err := objects.Canonical(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", clean, err)
	}
	return s.expire(root, clean, out)
}

// ReadRaw returns a file's bytes as stored, whatever they hold.
func (s *Store) ReadRaw(ctx context.Context, file string, ro ReadOptions) ([]byte, error) {
	clean, data, err := s.readFile(file, ro)
	if err == nil && data == nil {
		err = errkind.Errorf(ErrNotFound, "%s: no such file at %s", clean, RevName(ro))
	}
	return data, err
}

// readFile reads a store path at a revision; a missing file is nil data
// and no error (a bad revision is an error).
func (s *Store) readFile(file string, ro ReadOptions) (string, []byte, error) {
	clean, _, data, err := s.readFileAt(file, ro)
	return clean, data, err
}

// readFileAt is readFile, with the tree read.
func (s *Store) readFileAt(file string, ro ReadOptions) (string, plumbing.Hash, []byte, error) {
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return "", plumbing.ZeroHash, nil, err
	}
	root, err := s.Tree(ro)
	if err != nil {
		return clean, root, nil, err
	}
	data, err := s.repo.ReadFileAt(root, clean)
	if errors.Is(err, repo.ErrNotFound) {
		return clean, root, nil, nil
	}
	if err == nil && data == nil {
		data = []byte{} // an empty file is not a missing one
	}
	return clean, root, data, err
}

func RevName(ro ReadOptions) string {
	switch {
	case ro.named != "":
		return ro.named
	case ro.At == "":
		return "HEAD"
	}
	return ro.At
}

// Entry is one name in a directory of the store.
type Entry struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	IsDir bool   `json:"dir,omitempty"`
}

// List lists a directory of the store ("" is the root).
func (s *Store) List(ctx context.Context, dir string, ro ReadOptions) ([]Entry, error) {
	clean, err := verbiage.CleanStoreDir(dir)
	if err != nil {
		return nil, err
	}
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	es, err := s.repo.ReadDirAt(root, clean)
	if err != nil {
		return nil, fmt.Errorf("%s: no such directory at %s: %w", dir, RevName(ro), ErrNotFound)
	}
	expired := s.expiredIn(root, clean)
	out := make([]Entry, 0, len(es))
	for _, e := range es {
		p := e.Name
		if clean != "" {
			p = clean + "/" + e.Name
		}
		if !e.IsDir && expired[e.Name] {
			continue // absent to reads (see TTL)
		}
		out = append(out, Entry{Name: e.Name, Path: p, IsDir: e.IsDir})
	}
	return out, nil
}

// isRuled reports whether file is a verbiage-ruled document at the
// revision read, whose reads resolve its shards.
// A manifest that cannot be read (a partial clone offline) is an error:
// read as absent, a ruled document would be read and written as a plain
// one.
func (s *Store) isRuled(file string, ro ReadOptions) (bool, error) {
	clean, err := verbiage.CleanStorePath(file)
	if err != nil {
		return false, nil
	}
	root, err := s.Tree(ro)
	if err != nil {
		return false, nil
	}
	data, err := absentIsNil(s.repo.ReadFileAt(root, ManifestPath))
	if err != nil {
		return false, err
	}
	patterns, err := ruledPatterns(data)
	return err == nil && matchesAny(patterns, clean), nil
}

// treeReader reads the files of the tree root.
func treeReader(r *repo.Repo, root plumbing.Hash) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) { return r.ReadFileAt(root, p) }
}
