package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Memory is the memory API of one store (aiwgstate.Store.Memory): the
// glue that keeps each Record as a file.
type Memory struct{ s *store.Store }

// Of is the memory API of s.
func Of(s *store.Store) *Memory { return &Memory{s: s} }

// Trailer is what a memory commit did: put, append, delete, prune
// or import.
const Trailer = "Memory"

// Put writes a memory record (the tiered state specification's memory.put): payload is
// JSON; a ttl above 0 makes the record expire that long from now. One
// commit to memory/<namespace>/<kind>/<id>.json.
func (m *Memory) Put(ctx context.Context, key Key, payload []byte, ttl time.Duration, wo store.WriteOptions) (*Record, *store.Mutation, error) {
	return m.write(ctx, key, "put", wo, func(old *Record, now time.Time) (*Record, error) {
		return Put(old, key, payload, ttl, now)
	})
}

// Append adds item to the list a memory record holds (the tiered state specification's
// memory.append, for logs such as daily_log), creating the record as a
// list of one when it is absent or expired. The record keeps its time to
// live unless ttl is given.
func (m *Memory) Append(ctx context.Context, key Key, item []byte, ttl time.Duration, wo store.WriteOptions) (*Record, *store.Mutation, error) {
	return m.write(ctx, key, "append", wo, func(old *Record, now time.Time) (*Record, error) {
		return Append(old, key, item, ttl, now)
	})
}

func (m *Memory) write(ctx context.Context, key Key, verb string, wo store.WriteOptions, change func(old *Record, now time.Time) (*Record, error)) (*Record, *store.Mutation, error) {
	if err := key.Check(); err != nil {
		return nil, nil, err
	}
	now := wo.Time
	if now.IsZero() {
		now = m.s.Now()
	}
	wo.Time = now
	var out *Record
	mut, err := m.s.Commit(ctx, wo, "memory "+verb+" "+key.String(), func(tx *repo.Tx, rec *store.Recorder) error {
		file := key.File()
		old, err := readTx(tx, file)
		if err != nil {
			return err
		}
		r, err := change(old, now)
		if err != nil {
			return err
		}
		b, err := encode(r)
		if err != nil {
			return err
		}
		if err := tx.WriteFile(file, b); err != nil {
			return err
		}
		op := store.OpUpdate
		if old == nil {
			op = store.OpCreate
		}
		rec.Add(op, file, "")
		rec.Trailer(Trailer, verb)
		out = r
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, mut, nil
}

func readTx(tx *repo.Tx, file string) (*Record, error) {
	data, err := tx.ReadFile(file)
	if errors.Is(err, repo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeFile(file, data)
}

// decodeMemory reads the record in file, or says how to mend a file
// that is not one.
func decodeFile(file string, data []byte) (*Record, error) {
	r, err := Decode(file, data)
	if err != nil {
		return nil, &store.BrokenFileError{Kind: store.BrokenMemoryRecord, File: file,
			Err: errkind.Errorf(store.ErrInvalidRecord, "%v: %s/ holds memory records only; move it out", err, Dir)}
	}
	return r, nil
}

func encode(r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return objects.Canonical(b)
}

// Get reads a live memory record; an absent or expired one is
// store.ErrNotFound.
func (m *Memory) Get(ctx context.Context, key Key, ro store.ReadOptions) (*Record, error) {
	if err := key.Check(); err != nil {
		return nil, err
	}
	root, err := m.s.Tree(ro)
	if err != nil {
		return nil, err
	}
	data, err := m.s.Repo().ReadFileAt(root, key.File())
	if errors.Is(err, repo.ErrNotFound) {
		return nil, errkind.Errorf(store.ErrNotFound, "no memory record %s", key)
	}
	if err != nil {
		return nil, err
	}
	r, err := decodeFile(key.File(), data)
	if err != nil {
		return nil, err
	}
	if r.Expired(m.s.Now()) {
		return nil, errkind.Errorf(store.ErrNotFound, "memory record %s expired at %s (prune removes it)", key, r.ExpiresAt.Format(time.RFC3339))
	}
	return r, nil
}

// ListOptions says which records List returns.
type ListOptions struct {
	store.ReadOptions
	// Namespace and Kind narrow the list ("" = all).
	Namespace, Kind string
	// Expired includes the records that have run out.
	Expired bool
}

// List returns memory records in key order (the tiered state specification's
// memory.list); expired ones only with lo.Expired.
func (m *Memory) List(ctx context.Context, lo ListOptions) ([]Record, error) {
	dir := Dir
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
		return nil, fmt.Errorf("%w: a record kind needs its namespace", store.ErrUsage)
	}
	root, err := m.s.Tree(lo.ReadOptions)
	if err != nil {
		return nil, err
	}
	now := m.s.Now()
	out := []Record{}
	err = m.s.Repo().Walk(root, dir, func(path string, h plumbing.Hash) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, ok := KeyOf(path); !ok {
			return nil // not a record's file: a README beside them, say
		}
		data, err := m.s.Repo().ReadFileAt(root, path)
		if err != nil {
			return err
		}
		r, err := decodeFile(path, data)
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

// Delete removes a memory record (the tiered state specification's memory.delete), live
// or expired.
func (m *Memory) Delete(ctx context.Context, key Key, wo store.WriteOptions) (*store.Mutation, error) {
	if err := key.Check(); err != nil {
		return nil, err
	}
	return m.s.Commit(ctx, wo, "memory delete "+key.String(), func(tx *repo.Tx, rec *store.Recorder) error {
		if err := tx.Remove(key.File()); err != nil {
			if errors.Is(err, repo.ErrNotFound) {
				return errkind.Errorf(store.ErrNotFound, "no memory record %s", key)
			}
			return err
		}
		rec.Add(store.OpDelete, key.File(), "")
		rec.Trailer(Trailer, "delete")
		return nil
	})
}

// Prune removes every expired record under namespace ("" = all) in
// one commit (the tiered state specification's memory.prune), and returns their keys; with none
// expired it is store.ErrNoChange.
func (m *Memory) Prune(ctx context.Context, namespace string, wo store.WriteOptions) ([]Key, *store.Mutation, error) {
	dir := Dir
	if namespace != "" {
		if err := verbiage.ValidIdentifier(namespace); err != nil {
			return nil, nil, fmt.Errorf("memory namespace: %w", err)
		}
		dir += "/" + namespace
	}
	now := wo.Time
	if now.IsZero() {
		now = m.s.Now()
	}
	wo.Time = now
	var pruned []Key
	mut, err := m.s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		pruned = nil
		root, err := tx.ParentTree()
		if err != nil {
			return err
		}
		var files []string
		err = m.s.Repo().Walk(root, dir, func(path string, _ plumbing.Hash) error {
			if _, ok := KeyOf(path); ok {
				files = append(files, path)
			}
			return ctx.Err()
		})
		if err != nil && !errors.Is(err, repo.ErrNotFound) {
			return err
		}
		for _, f := range files {
			r, err := readTx(tx, f)
			if err != nil {
				return err
			}
			if r == nil || !r.Expired(now) {
				continue
			}
			if err := tx.Remove(f); err != nil {
				return err
			}
			rec.Add(store.OpDelete, f, "")
			pruned = append(pruned, r.Key)
		}
		if len(pruned) == 0 {
			return store.ErrNoChange
		}
		rec.Trailer(Trailer, "prune")
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
	return pruned, mut, nil
}

// Imported is what Import did.
type Imported struct {
	// Written records were new or different; Unchanged ones the store
	// held as they are.
	Written   int             `json:"written"`
	Unchanged int             `json:"unchanged"`
	Mutation  *store.Mutation `json:"mutation,omitempty"`
}

// Import writes records read from outside (the tiered state specification's JSON Lines
// bridge) as they are, timestamps included, in one commit: all of them or,
// when one is invalid, none. Records the store holds as they are are not
// written; with nothing to write it is store.ErrNoChange.
func (m *Memory) Import(ctx context.Context, recs []Record, wo store.WriteOptions) (*Imported, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no records to import", store.ErrNoChange)
	}
	seen := map[Key]int{}
	for i := range recs {
		r := &recs[i]
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		if j, dup := seen[r.Key]; dup {
			return nil, fmt.Errorf("%w: records %d and %d are both %s", store.ErrUsage, j+1, i+1, r.Key)
		}
		seen[r.Key] = i
	}
	out := &Imported{}
	mut, err := m.s.Commit(ctx, wo, "", func(tx *repo.Tx, rec *store.Recorder) error {
		*out = Imported{}
		for i := range recs {
			r := recs[i]
			r.Payload = json.RawMessage(strings.TrimSpace(string(r.Payload)))
			b, err := encode(&r)
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
			op := store.OpCreate
			if old != nil {
				op = store.OpUpdate
			}
			rec.Add(op, r.File(), "")
			out.Written++
		}
		if out.Written == 0 {
			return store.ErrNoChange
		}
		rec.Trailer(Trailer, "import")
		rec.Subject = fmt.Sprintf("memory import: %d records", out.Written)
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNoChange) {
			return out, err
		}
		return nil, err
	}
	out.Mutation = mut
	return out, nil
}

// Records is the rule over the files of memory/: each is a memory record, whatever
// the write (put, set, mv, apply, a merge) or the push that leaves it
// there. RecordGuard is its store.Guard and ValidateFile its check in the
// server's hook.
var Records = store.RecordKind{Dir: Dir, Check: CheckFile}

var (
	RecordGuard  store.Guard = Records.Guard
	ValidateFile             = Records.ValidateFile
)

// CheckFile refuses a file under memory/ that is not a memory record.
func CheckFile(file string, data []byte) error {
	_, err := Decode(file, data)
	return err
}
