// Package sqlstate is SQL over versioned state, the tiered state
// specification's SQLite tier done the git-native way: SQLite is a
// derived, rebuildable query index over the store at a revision, never
// the source of truth.
//
// Where each part is:
//   - The index (index.go, mirror.go, schema.go): read-only tables that
//     mirror the store (documents, mutations, memory, variables,
//     trajectories, iterations, leases, queues, index_problems), kept in
//     <gitdir>/aiwg/sql/ per branch, built on first use and then brought
//     up to date from the commits since the one it mirrors and the files
//     that differ between their trees. Any other revision is built in
//     memory. The files are safe to delete.
//   - Agent tables (tables.go): a table declared in the store
//     (.aiwg/tables/NAME.json) keeps each row as a document,
//     tables/NAME/ROWID.json, so rows are versioned, merged and blamed as
//     every document is. Exec runs INSERT, UPDATE or DELETE in a private
//     in-memory database (the agent tables it may write copied, the
//     branch's index attached for reading, so no statement holds the
//     shared file's write lock), and records the rows the statement
//     changed as one commit, an UPDATE's changed columns merged into each
//     row's file.
//   - Limits (Options): a statement's deadline, an answer's rows and
//     bytes, the rows one Exec writes. Verify rebuilds the index in
//     memory and compares: the file is as trustworthy as the git
//     directory's permissions.
//   - What may run (guard.go, lex.go): SQLite's authorizer judges every
//     table, function, pragma and write a statement compiles to, denying
//     what it does not know; queries also run with query_only. The lexer
//     only gives a refusal its clear message (and refuses a second
//     statement). Options.MayRead and MayWrite narrow the tables a caller
//     may touch.
//   - The CLI is the aiwg-state-sql program (cmd/aiwg-state-sql), which
//     aiwg-state sql and aiwg-state table run: linking SQLite into every
//     aiwg-state command would slow each one's start.
package sqlstate
