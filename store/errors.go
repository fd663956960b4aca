package store

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/repo"
)

// Sentinel errors of the store. Errors returned by a Store wrap one of
// these, or a sentinel of the package that owns the concept: verbiage
// (ErrInvalidPath, ErrInvalidKey, ErrInvalidName, ErrInvalidPattern),
// objects (ErrInvalidJSON, ErrNotFound for a key, ErrNotContainer), repo
// (ErrStale, ErrLocked, ErrNotStore, ErrDetached), merge
// (ErrUnknownStrategy), statedoc (ErrInFlight, ErrInvalidState, ErrExists),
// trajectory (ErrInvalid), lease (ErrHeld, ErrNotHolder, ErrInvalid),
// memory (ErrInvalid, ErrNotList), queue (ErrInvalid, ErrEmpty), docschema
// (ErrInvalid, ErrRules) and hooks (ErrRefused). The CLI maps them to exit
// codes in one table (cmd/aiwg-state/exit.go).
var (
	// ErrNoChange: the write would not change anything; no commit was made.
	ErrNoChange = repo.ErrNoChange
	// ErrNotFound: no such file, revision, branch or store. A missing key
	// inside a document is objects.ErrNotFound (the objects package knows
	// no git); test for both to cover either.
	ErrNotFound = repo.ErrNotFound
	// ErrStale: the branch was not at WriteOptions.Expect (the error is a
	// *repo.StaleError naming the current head), a file the write changes
	// changed since WriteOptions.UnchangedSince, or a push was not a fast
	// forward.
	ErrStale = repo.ErrStale
	// ErrLocked: another writer held the branch lock past the timeout.
	ErrLocked = repo.ErrLocked
	// ErrObjectMissing: an object the store refers to could not be read:
	// in a partial clone, one its promisor remote did not supply; anywhere
	// else, damage. It is never ErrNotFound: nothing is answered, and
	// nothing written, on a base that could not be read.
	ErrObjectMissing = repo.ErrObjectMissing
	// ErrShallow: a revision beyond a shallow clone's history.
	ErrShallow = repo.ErrShallow
	// ErrExists: the target of a create or move already exists.
	ErrExists = errors.New("already exists")
	// ErrLimit: a document or value is over a limit of the store.
	ErrLimit = errors.New("over limit")
	// ErrReadOnly: the path is not writable by these operations.
	ErrReadOnly = errors.New("read-only")
	// ErrInvalidRecord: a file where the store keeps a lease record, a
	// memory record or a queue message that does not read as one
	// (written by hand, or by plain git).
	ErrInvalidRecord = errors.New("invalid record")
	// ErrBadManifest: the store's manifest (.aiwg/store.json), committed
	// by plain git or by hand, does not read as one; writes refuse until
	// `aiwg-state config KEY VALUE` rewrites it (see SetConfig).
	ErrBadManifest = errors.New("the store's manifest is damaged")
	// ErrUsage: a request that is malformed as a whole (unknown operation,
	// missing argument).
	ErrUsage = errors.New("invalid request")
)

// The typed errors below say what happened and nothing of what to run
// next: a Go program has no commands or flags. The CLI adds its hints,
// keyed by type.

// StoreMissingError: no store where one was looked for. It is
// ErrNotFound.
type StoreMissingError struct {
	// Dir is the store directory named; "" when the store was searched
	// for from a working directory up (FindStore).
	Dir string
}

func (e *StoreMissingError) Error() string {
	if e.Dir == "" {
		return "no store here or in any parent directory"
	}
	return "no store at " + e.Dir
}

func (e *StoreMissingError) Unwrap() error { return ErrNotFound }

// BranchMissingError: a branch named to read, write or switch to does not
// exist. It is ErrNotFound.
type BranchMissingError struct{ Name string }

func (e *BranchMissingError) Error() string { return "branch " + e.Name + " does not exist" }

func (e *BranchMissingError) Unwrap() error { return ErrNotFound }

// MergeInProgressError: a branch has a merge waiting for its conflicts to
// be resolved, so nothing else merges into it (or, Pushing, leaves it)
// until the merge is continued or aborted. It is ErrConflict.
type MergeInProgressError struct {
	Branch  string
	Pushing bool // refused a push, rather than a merge
}

func (e *MergeInProgressError) Error() string {
	return ErrConflict.Error() + ": " + e.Branch + " has a merge in progress"
}

func (e *MergeInProgressError) Unwrap() error { return ErrConflict }

// MissingKind is what a MissingError found missing.
type MissingKind int

const (
	MissingState          MissingKind = iota // the branch has no RLM state yet
	MissingTrajectory                        // no trajectory of that id on the branch
	MissingSchema                            // no schema rule of that name
	MissingHandler                           // no completion handler of that name in the manifest
	MissingTrustedHandler                    // no trusted completion handler of that name
)

// MissingError: a named thing of the store does not exist. It is
// ErrNotFound.
type MissingError struct {
	Kind MissingKind
	// Name is what was asked for ("" for MissingState; several names
	// are comma-separated).
	Name string
}

func (e *MissingError) Error() string {
	switch e.Kind {
	case MissingState:
		return "no state on this branch yet"
	case MissingTrajectory:
		return "trajectory " + e.Name + ": no such trajectory on this branch"
	case MissingSchema:
		return "no schema " + e.Name
	case MissingHandler:
		return "no completion handler named " + e.Name
	case MissingTrustedHandler:
		return "no trusted handler named " + e.Name
	}
	return e.Name + ": " + ErrNotFound.Error()
}

func (e *MissingError) Unwrap() error { return ErrNotFound }

// BranchInUseError: a delete of the branch the store is on (its HEAD).
// It is ErrReadOnly.
type BranchInUseError struct {
	Name string
	// Other is a branch to switch to first (main when it is not Name);
	// "" when Name is the store's only branch.
	Other string
}

func (e *BranchInUseError) Error() string {
	if e.Other == "" {
		return e.Name + " is the store's only branch, and the one it is on (its HEAD)"
	}
	return e.Name + " is the branch the store is on (its HEAD)"
}

func (e *BranchInUseError) Unwrap() error { return ErrReadOnly }

// StrategiesFileError: a document operation on the store's merge
// strategies (.gitattributes), which only the strategy operations
// change. It is ErrReadOnly.
type StrategiesFileError struct{ Path string }

func (e *StrategiesFileError) Error() string {
	return ErrReadOnly.Error() + ": " + e.Path + " is the store's merge strategies, not a document"
}

func (e *StrategiesFileError) Unwrap() error { return ErrReadOnly }

// BrokenKind is the kind of file a BrokenFileError found broken.
type BrokenKind int

const (
	BrokenQueueHead     BrokenKind = iota // a queue's next message, which stops the queue
	BrokenQueueMessage                    // a queue message
	BrokenSchemaRules                     // the schema rules (docschema.Path)
	BrokenSchemaMissing                   // the rules name a schema the store does not hold
	BrokenSchema                          // a schema the store holds (Name)
	BrokenPolicy                          // the policy (policy.Path)
	BrokenTrust                           // the machine's trust file
	BrokenManifest                        // the manifest (ManifestPath)
	BrokenMemoryRecord                    // a file under memory/ that is not a memory record
	BrokenEvent                           // a file under events/ that is not an event
)

// BrokenFileError: a file the store keeps, written by plain git, by hand
// or by a merge, does not read as what it should be. It wraps the error
// that says why, whose kind (ErrInvalidRecord, ErrBadManifest,
// policy.ErrInvalid) it keeps.
type BrokenFileError struct {
	Kind BrokenKind
	File string // the file at fault
	Name string // BrokenSchema: the schema's name
	Err  error
}

func (e *BrokenFileError) Error() string { return e.Err.Error() }

func (e *BrokenFileError) Unwrap() error { return e.Err }

// InvalidRecordError: a write leaves a file in the directory of a record
// kind (Dir: leases, memory, queues) that does not decode as its record.
// It is ErrInvalidRecord.
type InvalidRecordError struct {
	Dir string
	Err error // the record's decoding error, as ErrInvalidRecord
}

func (e *InvalidRecordError) Error() string { return e.Err.Error() }

func (e *InvalidRecordError) Unwrap() error { return e.Err }

// NotABranchError: a write names a ref that is not a branch to write on
// (a remote-tracking branch, which fetch moves; a tag). It is ErrReadOnly.
type NotABranchError struct {
	Name string
	Is   string // what Name is, e.g. "a remote-tracking branch (fetch moves it)"
}

func (e *NotABranchError) Error() string {
	return e.Name + " is " + e.Is + ", not a branch to write"
}

func (e *NotABranchError) Unwrap() error { return ErrReadOnly }

// RefNameTakenError: a new branch would take the name of another ref
// (a remote-tracking branch, a tag), which reads and writes naming it
// would then no longer reach. It is ErrExists.
type RefNameTakenError struct {
	Name string
	Is   string // what Name already is
}

func (e *RefNameTakenError) Error() string {
	return e.Name + " is already " + e.Is + ", which a branch of that name would hide from reads and writes that name it"
}

func (e *RefNameTakenError) Unwrap() error { return ErrExists }

// BranchNotMergedError: deleting a branch would lose work: a merge in
// progress on it (ErrConflict), or commits the head does not contain
// (ErrReadOnly). Deleting with force loses it.
type BranchNotMergedError struct {
	Name    string
	Head    string // the branch that lacks its commits
	Merging bool
}

func (e *BranchNotMergedError) Error() string {
	if e.Merging {
		return fmt.Sprintf("%v: %s has a merge in progress; resolve or abort it first", ErrConflict, e.Name)
	}
	return fmt.Sprintf("%v: %s has commits that %s does not contain; merge it first", ErrReadOnly, e.Name, e.Head)
}

func (e *BranchNotMergedError) Unwrap() error {
	if e.Merging {
		return ErrConflict
	}
	return ErrReadOnly
}

// EmptyRevisionError: WriteOptions.Expect or UnchangedSince was given
// empty, which must not read as "no check": an unset variable would
// silently switch the compare-and-swap off. It is ErrUsage.
type EmptyRevisionError struct {
	Field string // "Expect" or "UnchangedSince"
}

func (e *EmptyRevisionError) Error() string {
	return fmt.Sprintf("%v: %s is empty: name the revision to compare with (an unset variable?), or leave it out", ErrUsage, e.Field)
}

func (e *EmptyRevisionError) Unwrap() error { return ErrUsage }

// SigningKeyMissingError: the policy requires an agent's commits to be
// signed, and no signing key is configured for it. It is ErrDenied.
type SigningKeyMissingError struct {
	Agent string
	Dir   string // the store, whose git config names agents' keys
}

func (e *SigningKeyMissingError) Error() string {
	return fmt.Sprintf("the policy requires agent %q's commits to be signed, and no signing key is configured for it", e.Agent)
}

func (e *SigningKeyMissingError) Unwrap() error { return ErrDenied }
