package sqlstate

import (
	"errors"
	"fmt"

	"github.com/aiwg/aiwg-state/store"
)

// ErrRefused: a statement that SQL over the store does not run. Every
// refusal is a *RefusedError, which is also store.ErrDenied (exit 3).
var ErrRefused = errors.New("statement refused")

// ErrSQL: a statement SQLite could not prepare or run (a syntax error, an
// unknown column, a value of the wrong type for a column). It is also
// store.ErrUsage (exit 2).
var ErrSQL = errors.New("sql error")

// Refusal kinds, the word --json's error kind and a caller branch on.
const (
	RefusedDDL         = "ddl"           // CREATE, DROP, ALTER, REINDEX, ANALYZE: tables are declared with table create
	RefusedAttach      = "attach"        // ATTACH, DETACH
	RefusedPragma      = "pragma"        // a pragma other than the schema-reading ones
	RefusedExtension   = "extension"     // load_extension and its kin
	RefusedFilesystem  = "filesystem"    // VACUUM (INTO), a function that reads or writes files
	RefusedMirrored    = "mirrored"      // a write to a table that mirrors the store
	RefusedMultiple    = "multiple"      // more than one statement
	RefusedTransaction = "transaction"   // BEGIN, COMMIT, SAVEPOINT...: each statement is its own commit
	RefusedNotAllowed  = "not_allowed"   // a table the caller's options do not let it read or write
	RefusedWrite       = "write"         // a write through a query (aiwg-state sql): writes are sql exec
	RefusedNotWrite    = "not_write"     // sql exec of a statement that writes no agent table
	RefusedStatement   = "statement"     // any other statement
	RefusedUnknown     = "unknown_table" // a table that is neither mirrored nor declared
)

// RefusedError is a statement refused before or while SQLite compiled
// it: Kind says which rule, Detail what in the statement broke it.
type RefusedError struct {
	Kind   string
	Detail string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("statement refused (%s): %s", e.Kind, e.Detail)
}

// Unwrap makes a refusal ErrRefused and store.ErrDenied, which the CLI
// maps to exit 3.
func (e *RefusedError) Unwrap() []error { return []error{ErrRefused, store.ErrDenied} }

func refused(kind, format string, a ...any) *RefusedError {
	return &RefusedError{Kind: kind, Detail: fmt.Sprintf(format, a...)}
}

// sqlError wraps what SQLite said of a statement.
type sqlError struct{ err error }

func (e *sqlError) Error() string   { return "sql: " + e.err.Error() }
func (e *sqlError) Unwrap() []error { return []error{ErrSQL, store.ErrUsage, e.err} }
