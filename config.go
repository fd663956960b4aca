package aiwgstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Config returns a key of the store manifest (the whole manifest when key
// is empty), as canonical JSON.
func (s *Store) Config(ctx context.Context, key string, ro ReadOptions) ([]byte, error) {
	root, err := s.tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := s.repo.ReadFileAt(root, ManifestPath)
	if errors.Is(err, repo.ErrNotFound) {
		data = defaultManifest()
	} else if err != nil {
		return nil, err
	}
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return objects.Canonical(data)
	}
	return objects.GetRaw(data, p)
}

// SetConfig sets a key of the store manifest (e.g. limits.max_document_bytes,
// sync) in one commit. The result must still be a manifest the store can
// read; documents cannot write .aiwg/, so this is the way to change it.
func (s *Store) SetConfig(ctx context.Context, key string, value []byte, wo WriteOptions) (*Mutation, error) {
	p, err := verbiage.ParsePath(key)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: name the setting to change", ErrUsage)
	}
	v, err := objects.Decode(value)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return s.commit(ctx, wo, "", func(tx *repo.Tx, rec *recorder) error {
		data, err := tx.ReadFile(ManifestPath)
		if errors.Is(err, repo.ErrNotFound) {
			data = defaultManifest()
		} else if err != nil {
			return err
		}
		doc, err := objects.Decode(data)
		if err != nil {
			return fmt.Errorf("%s: %w", ManifestPath, err)
		}
		if doc, err = objects.Set(doc, p, v); err != nil {
			return err
		}
		out, err := objects.Encode(doc)
		if err != nil {
			return err
		}
		if _, err := parseManifest(out); err != nil {
			return fmt.Errorf("%w: %s would not be a valid manifest: %v", ErrUsage, ManifestPath, err)
		}
		rec.add(OpUpdate, ManifestPath, p.String())
		return tx.WriteFile(ManifestPath, out)
	})
}
