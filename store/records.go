package store

import (
	"errors"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/repo"
)

// RuleRecord is the server hook's name for a pushed file, under a record
// kind's directory, that is not a record of that kind.
const RuleRecord = "record"

// A RecordKind is a kind of record kept as files under Dir (memory
// records, queue messages), each of which Check must accept: one rule,
// which its Guard holds every write to and its ValidateFile every pushed
// file.
type RecordKind struct {
	Dir   string
	Check func(file string, data []byte) error
}

// Guard is the kind's store.Guard (see CheckRecords).
func (k RecordKind) Guard(_ *Store, tx *repo.Tx, _ WriteOptions, _ []Change) error {
	return CheckRecords(tx, k.Dir, k.Check)
}

// ValidateFile is the kind's check for the server's hook: the rule a
// pushed file breaks ("" for a file it has nothing to say on) and why.
func (k RecordKind) ValidateFile(path string, body []byte) (rule, detail string) {
	if !strings.HasPrefix(path, k.Dir+"/") {
		return "", ""
	}
	if err := k.Check(path, body); err != nil {
		return RuleRecord, err.Error()
	}
	return "", ""
}

// CheckRecords is the rule of a record kind kept under the directory dir
// (leases, memory, queues), for its feature's guard: a write of any kind
// (put, set, mv, apply, a merge) that leaves a file there that decode
// refuses is refused with an *InvalidRecordError, before the feature's
// verbs would read it as empty and overwrite it, or a bad message would
// stop its queue.
func CheckRecords(tx *repo.Tx, dir string, decode func(file string, data []byte) error) error {
	// Every staged path, not only those the change list names: a
	// rollback records a directory.
	for _, f := range tx.Changed() {
		if rest, ok := strings.CutPrefix(f, dir+"/"); !ok || rest == "" {
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
			return &InvalidRecordError{Dir: dir, Err: errkind.Errorf(ErrInvalidRecord, "%v", err)}
		}
	}
	return nil
}
