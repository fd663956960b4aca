package store

import (
	"errors"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/repo"
)

// checkRecords keeps the files of leases/, memory/ and queues/ what their
// verbs read: a write of any kind (put, set, mv, apply, a merge) that
// leaves one there that does not decode as its record is refused, before
// a lease acquire would read it as empty and overwrite it, or a bad
// message would stop its queue.
func checkRecords(tx *repo.Tx, _ WriteOptions, _ []Change) error {
	// Every staged path, not only those the change list names: a
	// rollback records a directory.
	for _, f := range tx.Changed() {
		decode, verb := recordDecoder(f)
		if decode == nil {
			continue
		}
		data, err := tx.ReadFile(f)
		if errors.Is(err, repo.ErrNotFound) {
			continue // removed
		}
		if err != nil {
			return err
		}
		if err := decode(f, data); err != nil {
			return errkind.Errorf(ErrInvalidRecord, "%v: write %s/ with aiwg-state %s", err, strings.SplitN(f, "/", 2)[0], verb)
		}
	}
	return nil
}

// recordDecoder is the check of the record kind whose directory holds
// file, and the CLI group that writes it; nil for other files.
func recordDecoder(file string) (func(file string, data []byte) error, string) {
	dir, rest, _ := strings.Cut(file, "/")
	if rest == "" {
		return nil, ""
	}
	switch dir {
	case LeaseDir:
		return func(f string, data []byte) error {
			if !strings.HasSuffix(rest, ".json") {
				return errkind.Errorf(lease.ErrInvalid, "%s is not a lease record's file (leases/<resource>.json)", f)
			}
			_, err := lease.Decode(strings.TrimSuffix(rest, ".json"), data)
			return err
		}, "lease"
	case memory.Dir:
		return func(f string, data []byte) error { _, err := memory.Decode(f, data); return err }, "memory"
	case queue.Dir:
		return func(f string, data []byte) error { _, err := queue.Decode(f, data); return err }, "queue"
	}
	return nil, ""
}
