package sqlstate

import (
	"strings"

	sqlite "modernc.org/sqlite"
)

// guard is SQLite's authorizer for one statement of a caller: SQLite asks
// it about every table read, every function, every pragma and every
// write while it compiles the statement (and the triggers it fires), so
// what a statement may do is decided on what SQLite understood, not on
// its text. It denies by default: an action it does not know is refused.
type guard struct {
	write       bool                                 // sql exec: writes to agent tables allowed
	agent       map[string]bool                      // declared agent tables, lower-case
	mayRead     func(table string) bool              // nil: every mirrored and agent table
	mayWrite    func(table string) bool              // nil: every agent table
	refuseTable func(table string, write bool) error // nil: a RefusedError
	err         error                                // the first refusal
	saw         bool                                 // an action a statement of its mode does was seen
	written     map[string]bool                      // agent tables the statement writes
	real        map[string]bool                      // every table, view and virtual table module, lower case
}

// captureTrigger prefixes the temporary triggers through which sql exec
// learns the rows a statement changed; only they may write the temp
// table they fill.
const captureTrigger = "aiwg_capture_"

// readOnlyPragmas are the pragmas a statement may run: they read the
// schema of the index. Any other pragma is refused, whether it writes or
// not, so that no setting of the connection can be changed.
var readOnlyPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true,
	"index_info": true, "index_xinfo": true, "collation_list": true, "function_list": true,
}

// readableSystem are the tables that are not the store's a query may
// read: the schema, and SQLite's JSON table-valued functions.
var readableSystem = map[string]bool{
	"sqlite_master": true, "sqlite_schema": true, "sqlite_temp_master": true, "sqlite_temp_schema": true,
	"json_each": true, "json_tree": true, "jsonb_each": true, "jsonb_tree": true,
}

// deniedFunctions load code or touch files.
var deniedFunctions = map[string]string{
	"load_extension": RefusedExtension,
	"fts3_tokenizer": RefusedExtension,
	"readfile":       RefusedFilesystem,
	"writefile":      RefusedFilesystem,
	"edit":           RefusedFilesystem,
	"lsdir":          RefusedFilesystem,
}

func (g *guard) refuse(e *RefusedError) sqlite.AuthorizerReturnCode {
	if g.err == nil {
		g.err = e
	}
	return sqlite.AuthorizerDeny
}

// notAllowed refuses a table the caller's options do not allow.
func (g *guard) notAllowed(table string, write bool) sqlite.AuthorizerReturnCode {
	if g.refuseTable != nil && g.err == nil {
		if err := g.refuseTable(table, write); err != nil {
			g.err = err
			return sqlite.AuthorizerDeny
		}
	}
	access := "reading"
	if write {
		access = "writing"
	}
	return g.refuse(refused(RefusedNotAllowed, "%s table %s is not allowed here", access, table))
}

func (g *guard) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, trigger string) sqlite.AuthorizerReturnCode {
	ours := strings.HasPrefix(trigger, captureTrigger)
	table := strings.ToLower(arg1)
	switch action {
	case sqlite.AuthSelect:
		if !g.write {
			g.saw = true
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if kind, bad := deniedFunctions[strings.ToLower(arg2)]; bad {
			return g.refuse(refused(kind, "function %s", arg2))
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthRead:
		if ours || (dbName == "temp" && table == "aiwg_changes") {
			return sqlite.AuthorizerOK
		}
		if strings.HasPrefix(table, "pragma_") && readOnlyPragmas[strings.TrimPrefix(table, "pragma_")] {
			return sqlite.AuthorizerOK
		}
		if readableSystem[table] {
			return sqlite.AuthorizerOK
		}
		if isMirrored(table) || g.agent[table] {
			if g.mayRead != nil && !g.mayRead(table) {
				return g.notAllowed(table, false)
			}
			return sqlite.AuthorizerOK
		}
		if arg2 == "" && g.real != nil && !g.real[table] && !strings.HasPrefix(table, "pragma_") && !strings.HasPrefix(table, "sqlite_") {
			// A common table expression of the statement, none of whose
			// columns is read (SELECT 1 FROM c): SQLite names it with no
			// column. Its own sources were judged where it is defined.
			return sqlite.AuthorizerOK
		}
		return g.refuse(refused(RefusedUnknown, "table %s is neither one that mirrors the store nor a declared agent table", arg1))
	case sqlite.AuthPragma:
		name := strings.ToLower(arg1)
		if readOnlyPragmas[name] {
			g.saw = g.saw || !g.write
			return sqlite.AuthorizerOK
		}
		return g.refuse(refused(RefusedPragma, "pragma %s: only the schema-reading pragmas (table_info, table_list, index_list...) run here", arg1))
	case sqlite.AuthInsert, sqlite.AuthUpdate, sqlite.AuthDelete:
		if ours && dbName == "temp" && action == sqlite.AuthInsert && table == "aiwg_changes" {
			return sqlite.AuthorizerOK
		}
		if table == "sqlite_master" || table == "sqlite_temp_master" || table == "sqlite_schema" {
			return g.refuse(refused(RefusedDDL, "the schema is declared with aiwg-state table create"))
		}
		if isMirrored(table) {
			return g.refuse(refused(RefusedMirrored, "table %s mirrors the store: write the store (set, put, memory, queue...) and it follows", arg1))
		}
		if !g.agent[table] {
			return g.refuse(refused(RefusedUnknown, "table %s is not a declared agent table (aiwg-state table create)", arg1))
		}
		if !g.write {
			return g.refuse(refused(RefusedWrite, "a query does not write: run it with aiwg-state sql exec"))
		}
		if g.mayWrite != nil && !g.mayWrite(table) {
			return g.notAllowed(table, true)
		}
		if dbName != "main" {
			// sql exec writes its own copy of the table (main); the
			// shared index (aiwg_index) follows the store only.
			return g.refuse(refused(RefusedNotAllowed, "table %s.%s: write agent tables by their own name", dbName, arg1))
		}
		g.saw = true
		if g.written == nil {
			g.written = map[string]bool{}
		}
		g.written[table] = true
		return sqlite.AuthorizerOK
	case sqlite.AuthAttach, sqlite.AuthDetach:
		// VACUUM (INTO) presents itself as an ATTACH of its target file.
		return g.refuse(refused(RefusedAttach, "ATTACH, DETACH and VACUUM reach other database files"))
	case sqlite.AuthTransaction, sqlite.AuthSavepoint:
		return g.refuse(refused(RefusedTransaction, "each statement is its own commit; transactions are not run"))
	case sqlite.AuthCreateIndex, sqlite.AuthCreateTable, sqlite.AuthCreateTempIndex, sqlite.AuthCreateTempTable,
		sqlite.AuthCreateTempTrigger, sqlite.AuthCreateTempView, sqlite.AuthCreateTrigger, sqlite.AuthCreateView,
		sqlite.AuthDropIndex, sqlite.AuthDropTable, sqlite.AuthDropTempIndex, sqlite.AuthDropTempTable,
		sqlite.AuthDropTempTrigger, sqlite.AuthDropTempView, sqlite.AuthDropTrigger, sqlite.AuthDropView,
		sqlite.AuthAlterTable, sqlite.AuthReindex, sqlite.AuthAnalyze, sqlite.AuthCreateVTable, sqlite.AuthDropVTable:
		return g.refuse(refused(RefusedDDL, "tables are declared with aiwg-state table create; no other schema change runs"))
	}
	return g.refuse(refused(RefusedStatement, "SQLite action %d is not one a statement here may take", int(action)))
}

// gate refuses, from the statement's first keyword, what cannot be a
// query (write false) or an agent table's write (write true), so that the
// message names the rule; what passes is still judged by the guard.
func gate(sql string, write bool) error {
	st := lex(sql)
	switch st.Keyword {
	case "":
		return refused(RefusedStatement, "no statement")
	case "CREATE", "DROP", "ALTER", "REINDEX", "ANALYZE":
		return refused(RefusedDDL, "%s: tables are declared with aiwg-state table create; no other schema change runs", st.Keyword)
	case "ATTACH", "DETACH":
		return refused(RefusedAttach, "%s reaches other database files", st.Keyword)
	case "VACUUM":
		return refused(RefusedFilesystem, "VACUUM writes database files")
	case "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE":
		return refused(RefusedTransaction, "%s: each statement is its own commit; transactions are not run", st.Keyword)
	}
	if st.Multiple {
		return refused(RefusedMultiple, "one statement at a time (each is its own query, or its own commit)")
	}
	if write {
		switch st.Keyword {
		case "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH":
			return nil
		case "SELECT", "VALUES", "PRAGMA", "EXPLAIN":
			return refused(RefusedNotWrite, "%s writes nothing: run it with aiwg-state sql", st.Keyword)
		}
		return refused(RefusedStatement, "%s: sql exec runs INSERT, UPDATE or DELETE on an agent table", st.Keyword)
	}
	switch st.Keyword {
	case "SELECT", "WITH", "VALUES", "PRAGMA", "EXPLAIN":
		return nil
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return refused(RefusedWrite, "%s: a query does not write; run it with aiwg-state sql exec", st.Keyword)
	}
	return refused(RefusedStatement, "%s: aiwg-state sql runs SELECT (and schema-reading pragmas)", st.Keyword)
}
