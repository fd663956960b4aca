package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// TrailerMemory is what a memory commit did: put, append, delete, prune
// or import.
const TrailerMemory = "Memory"

// PutMemory writes a memory record (the tiered state specification's memory.put): payload is
// JSON; a ttl above 0 makes the record expire that long from now. One
// commit to memory/<namespace>/<kind>/<id>.json.
func (s *Store) PutMemory(ctx context.Context, key memory.Key, payload []byte, ttl time.Duration, wo WriteOptions) (*memory.Record, *Mutation, error) {
	return s.writeMemory(ctx, key, "put", wo, func(old *memory.Record, now time.Time) (*memory.Record, error) {
		return memory.Put(old, key, payload, ttl, now)
	})
}

// AppendMemory adds item to the list a memory record holds (the tiered state specification's
// memory.append, for logs such as daily_log), creating the record as a
// list of one when it is absent or expired. The record keeps its time to
// live unless ttl is given.
func (s *Store) AppendMemory(ctx context.Context, key memory.Key, item []byte, ttl time.Duration, wo WriteOptions) (*memory.Record, *Mutation, error) {
	return s.writeMemory(ctx, key, "append", wo, func(old *memory.Record, now time.Time) (*memory.Record, error) {
		return memory.Append(old, key, item, ttl, now)
	})
}

func (s *Store) writeMemory(ctx context.Context, key memory.Key, verb string, wo WriteOptions, change func(old *memory.Record, now time.Time) (*memory.Record, error)) (*memory.Record, *Mutation, error) {
	if err := key.Check(); err != nil {
		return nil, nil, err
	}
	now := wo.Time
	if now.IsZero() {
		now = s.now()
	}
	wo.Time = now
	var out *memory.Record
	m, err := s.Commit(ctx, wo, "memory "+verb+" "+key.String(), func(tx *repo.Tx, rec *Recorder) error {
		file := key.File()
		old, err := readMemoryTx(tx, file)
		if err != nil {
			return err
		}
		r, err := change(old, now)
		if err != nil {
			return err
		}
		b, err := encodeMemory(r)
		if err != nil {
			return err
		}
		if err := tx.WriteFile(file, b); err != nil {
			return err
		}
		op := OpUpdate
		if old == nil {
			op = OpCreate
		}
		rec.Add(op, file, "")
		rec.Trailer(TrailerMemory, verb)
		out = r
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

func readMemoryTx(tx *repo.Tx, file string) (*memory.Record, error) {
	data, err := tx.ReadFile(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeMemory(file, data)
}

// decodeMemory reads the record in file, or says how to mend a file
// that is not one.
func decodeMemory(file string, data []byte) (*memory.Record, error) {
	r, err := memory.Decode(file, data)
	if err != nil {
		return nil, &BrokenFileError{Kind: BrokenMemoryRecord, File: file,
			Err: errkind.Errorf(ErrInvalidRecord, "%v: %s/ holds memory records only; move it out", err, memory.Dir)}
	}
	return r, nil
}

func encodeMemory(r *memory.Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return objects.Canonical(b)
}

// GetMemory reads a live memory record; an absent or expired one is
// ErrNotFound.
func (s *Store) GetMemory(ctx context.Context, key memory.Key, ro ReadOptions) (*memory.Record, error) {
	if err := key.Check(); err != nil {
		return nil, err
	}
	root, err := s.Tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := s.repo.ReadFileAt(root, key.File())
	if errors.Is(err, repo.ErrNotFound) {
		return nil, errkind.Errorf(ErrNotFound, "no memory record %s", key)
	}
	if err != nil {
		return nil, err
	}
	r, err := decodeMemory(key.File(), data)
	if err != nil {
		return nil, err
	}
	if r.Expired(s.now()) {
		return nil, errkind.Errorf(ErrNotFound, "memory record %s expired at %s (prune removes it)", key, r.ExpiresAt.Format(time.RFC3339))
	}
	return r, nil
}

// MemoryListOptions says which records ListMemory returns.
type MemoryListOptions struct {
	ReadOptions
	// Namespace and Kind narrow the list ("" = all).
	Namespace, Kind string
	// Expired includes the records that have run out.
	Expired bool
}

// ListMemory returns memory records in key order (the tiered state specification's
// memory.list); expired ones only with lo.Expired.
func (s *Store) ListMemory(ctx context.Context, lo MemoryListOptions) ([]memory.Record, error) {
	dir := memory.Dir
	for _, p := range []struct{ what, v string }{{"namespace", lo.Namespace}, {"record kind", lo.Kind}} {
		if p.v == "" {
			break
		}
		if err := verbiage.ValidIdentifier(p.v); err != nil {
			return nil, fmt.Errorf("memory %s: %w", p.what, err)
		}
		dir += "/" + p.v
	}
	if lo.Kind != "" && lo.Namespace == "" {
		return nil, fmt.Errorf("%w: a record kind needs its namespace", ErrUsage)
	}
	root, err := s.Tree(lo.ReadOptions)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := []memory.Record{}
	err = s.repo.Walk(root, dir, func(path string, h plumbing.Hash) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, ok := memory.KeyOf(path); !ok {
			return nil // not a record's file: a README beside them, say
		}
		data, err := s.repo.ReadFileAt(root, path)
		if err != nil {
			return err
		}
		r, err := decodeMemory(path, data)
		if err != nil {
			return err
		}
		if lo.Expired || !r.Expired(now) {
			out = append(out, *r)
		}
		return nil
	})
	if err != nil && !errors.Is(err, repo.ErrNotFound) {
		return nil, err
	}
	return out, nil
}

// DeleteMemory removes a memory record (the tiered state specification's memory.delete), live
// or expired.
func (s *Store) DeleteMemory(ctx context.Context, key memory.Key, wo WriteOptions) (*Mutation, error) {
	if err := key.Check(); err != nil {
		return nil, err
	}
	return s.Commit(ctx, wo, "memory delete "+key.String(), func(tx *repo.Tx, rec *Recorder) error {
		if err := tx.Remove(key.File()); err != nil {
			if errors.Is(err, repo.ErrNotFound) {
				return errkind.Errorf(ErrNotFound, "no memory record %s", key)
			}
			return err
		}
		rec.Add(OpDelete, key.File(), "")
		rec.Trailer(TrailerMemory, "delete")
		return nil
	})
}

// PruneMemory removes every expired record under namespace ("" = all) in
// one commit (the tiered state specification's memory.prune), and returns their keys; with none
// expired it is ErrNoChange.
func (s *Store) PruneMemory(ctx context.Context, namespace string, wo WriteOptions) ([]memory.Key, *Mutation, error) {
	dir := memory.Dir
	if namespace != "" {
		if err := verbiage.ValidIdentifier(namespace); err != nil {
			return nil, nil, fmt.Errorf("memory namespace: %w", err)
		}
		dir += "/" + namespace
	}
	now := wo.Time
	if now.IsZero() {
		now = s.now()
	}
	wo.Time = now
	var pruned []memory.Key
	m, err := s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		pruned = nil
		root, err := tx.ParentTree()
		if err != nil {
			return err
		}
		var files []string
		err = s.repo.Walk(root, dir, func(path string, _ plumbing.Hash) error {
			if _, ok := memory.KeyOf(path); ok {
				files = append(files, path)
			}
			return ctx.Err()
		})
		if err != nil && !errors.Is(err, repo.ErrNotFound) {
			return err
		}
		for _, f := range files {
			r, err := readMemoryTx(tx, f)
			if err != nil {
				return err
			}
			if r == nil || !r.Expired(now) {
				continue
			}
			if err := tx.Remove(f); err != nil {
				return err
			}
			rec.Add(OpDelete, f, "")
			pruned = append(pruned, r.Key)
		}
		if len(pruned) == 0 {
			return ErrNoChange
		}
		rec.Trailer(TrailerMemory, "prune")
		where := "memory"
		if namespace != "" {
			where += " " + namespace
		}
		rec.Subject = fmt.Sprintf("memory prune: %d expired records of %s", len(pruned), where)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return pruned, m, nil
}

// MemoryImport is what ImportMemory did.
type MemoryImport struct {
	// Written records were new or different; Unchanged ones the store
	// held as they are.
	Written   int       `json:"written"`
	Unchanged int       `json:"unchanged"`
	Mutation  *Mutation `json:"mutation,omitempty"`
}

// ImportMemory writes records read from outside (the tiered state specification's JSON Lines
// bridge) as they are, timestamps included, in one commit: all of them or,
// when one is invalid, none. Records the store holds as they are are not
// written; with nothing to write it is ErrNoChange.
func (s *Store) ImportMemory(ctx context.Context, recs []memory.Record, wo WriteOptions) (*MemoryImport, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no records to import", ErrNoChange)
	}
	seen := map[memory.Key]int{}
	for i := range recs {
		r := &recs[i]
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		if j, dup := seen[r.Key]; dup {
			return nil, fmt.Errorf("%w: records %d and %d are both %s", ErrUsage, j+1, i+1, r.Key)
		}
		seen[r.Key] = i
	}
	out := &MemoryImport{}
	m, err := s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *Recorder) error {
		*out = MemoryImport{}
		for i := range recs {
			r := recs[i]
			r.Payload = json.RawMessage(strings.TrimSpace(string(r.Payload)))
			b, err := encodeMemory(&r)
			if err != nil {
				return err
			}
			old, err := tx.ReadFile(r.File())
			switch {
			case err == nil && string(old) == string(b):
				out.Unchanged++
				continue
			case err != nil && !errors.Is(err, repo.ErrNotFound):
				return err
			}
			if err := tx.WriteFile(r.File(), b); err != nil {
				return err
			}
			op := OpCreate
			if old != nil {
				op = OpUpdate
			}
			rec.Add(op, r.File(), "")
			out.Written++
		}
		if out.Written == 0 {
			return ErrNoChange
		}
		rec.Trailer(TrailerMemory, "import")
		rec.Subject = fmt.Sprintf("memory import: %d records", out.Written)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNoChange) {
			return out, err
		}
		return nil, err
	}
	out.Mutation = m
	return out, nil
}
