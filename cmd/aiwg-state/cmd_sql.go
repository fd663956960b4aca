package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/urfave/cli/v2"
)

// newSQLCommand and newTableCommand hand over to aiwg-state-sql, SQL over
// the store. It is a program of its own: linked here, SQLite (6.2 MB of
// the binary, 17.2 MB without it) and its initialisation would be paid by
// every aiwg-state command; --version started 0.25-0.4 ms slower at the
// fastest (3.73-3.96 ms against 3.99-4.40 ms, six interleaved rounds of
// hyperfine -N --runs 300; docs/sql.md).
func newSQLCommand() *cli.Command {
	return &cli.Command{
		Name:      "sql",
		Usage:     "query the store with SQL (read-only tables that mirror it), and write agent tables with sql exec",
		ArgsUsage: "QUERY [--at REV] [--json|--csv|--table] | exec STATEMENT | index [--rebuild|--verify]",
		Description: `Runs aiwg-state-sql (beside this program or on $PATH). SQLite is a
query index derived from the store at a revision, kept in the store's git
directory (aiwg/sql/, safe to delete), built on first use and brought up
to date from the new commits only. --at REV queries a past revision.

Tables that mirror the store (read-only): documents (path, key, value,
type), mutations (seq, commit_id, agent, time, operation, path, key,
mutation_id, source, correlation, signature, subject, parents), memory,
variables, trajectories, iterations, leases, queues, index_problems.
Agent tables (aiwg-state table create) keep each row as a document,
tables/NAME/ROWID.json; sql exec runs one INSERT, UPDATE or DELETE on
one as one commit, the statement in its trailers. DDL, ATTACH, VACUUM,
pragmas other than the schema-reading ones, load_extension, writes to
mirrored tables and more than one statement are refused (exit 3), as is
a table the agent's sandbox profile does not allow (a query's agent is
the one --agent or AIWG_AGENT names).

Flags (aiwg-state-sql's):
   --at REV          query the store at REV
   --branch NAME     the branch (default: the store's)
   --json, --csv, --table   output (default: --table)
   --agent NAME      exec: the commit's author
   --expect REV      exec: the revision the branch must be at (exit 6)
   --store DIR       the store (default: the nearest .aiwg/state.git)
   --timeout D       the longest a statement runs (default 10s; exit 3)

A query's answer holds at most 256 MB and 1,000,000 rows, and one sql
exec statement writes or removes at most 1,000 rows (exit 3 past them).

Examples:
   aiwg-state sql 'SELECT agent, count(*) FROM mutations GROUP BY agent'
   aiwg-state sql "SELECT * FROM memory WHERE kind='fact' AND payload->>'$.topic'='auth'"
   aiwg-state sql 'SELECT count(*) FROM documents' --at HEAD~100 --json
   aiwg-state sql exec "INSERT INTO notes(title, priority) VALUES ('rotate keys', 2)"
   aiwg-state sql index --rebuild
   aiwg-state sql index --verify    # rebuild in memory, compare with the file`,
		SkipFlagParsing: true,
		Action:          handOverToSQL("sql"),
	}
}

func newTableCommand() *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "declare agent tables for aiwg-state sql: their rows are documents (tables/NAME/ROWID.json)",
		ArgsUsage: "create NAME --schema FILE | ls",
		Description: `Runs aiwg-state-sql. A table's schema is a JSON file naming its
columns in order, each text, integer, real, boolean or json, and
optionally the merge strategy that settles a clash on it; every table
also has id, its row's file name. create stores it as
.aiwg/tables/NAME.json (and the strategies in .gitattributes) in one
commit.

Example schema: {"columns": [{"name": "title", "type": "text"},
                 {"name": "priority", "type": "integer", "merge": "max"}]}

Examples:
   aiwg-state table create notes --schema notes.json
   aiwg-state table ls`,
		SkipFlagParsing: true,
		Action:          handOverToSQL("table"),
	}
}

func handOverToSQL(verb string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if a := c.Args().First(); a == "--help" || a == "-h" || a == "help" {
			return cli.ShowCommandHelp(c.Lineage()[1], verb)
		}
		if invocationOf(c).client != nil {
			return usagef("%s runs in its own process: run aiwg-state %s, not through a server", verb, verb)
		}
		bin, err := findProgram("aiwg-state-sql")
		if err != nil {
			return err
		}
		// In this process's place: its output and exit status are the
		// command's.
		err = syscall.Exec(bin, append([]string{"aiwg-state-sql", verb}, c.Args().Slice()...), os.Environ())
		return fmt.Errorf("running %s: %w", bin, err)
	}
}
