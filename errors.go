package aiwgstate

import (
	"errors"

	"github.com/aiwg/aiwg-state/repo"
)

// Sentinel errors of the store. Errors returned by a Store wrap one of
// these, or a sentinel of the package that owns the concept: verbiage
// (ErrInvalidPath, ErrInvalidKey, ErrInvalidName, ErrInvalidPattern),
// objects (ErrInvalidJSON, ErrNotFound for a key, ErrNotContainer), repo
// (ErrStale, ErrLocked, ErrNotStore, ErrDetached), merge
// (ErrUnknownStrategy), statedoc (ErrInFlight, ErrInvalidState, ErrExists),
// trajectory (ErrInvalid), lease (ErrHeld, ErrNotHolder, ErrInvalid),
// memory (ErrInvalid, ErrNotList), queue (ErrInvalid), docschema
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
	// ErrEmpty: a queue take found no message (after waiting, if it
	// waited).
	ErrEmpty = errors.New("queue empty")
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
