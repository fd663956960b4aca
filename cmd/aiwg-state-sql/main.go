// Command aiwg-state-sql is SQL over a store: read-only queries over
// tables that mirror it, and agent tables whose rows are documents.
// `aiwg-state sql` and `aiwg-state table` run it; it is a program of its
// own so that SQLite, which it links, costs nothing to every other
// aiwg-state command (docs/sql.md has the figures).
//
//	aiwg-state sql 'SELECT agent, count(*) FROM mutations GROUP BY agent'
//	aiwg-state sql "SELECT * FROM memory WHERE kind='fact'" --at HEAD~10 --json
//	aiwg-state table create notes --schema notes.json
//	aiwg-state sql exec "INSERT INTO notes(title) VALUES ('rotate keys')"
//
// It finds the store as aiwg-state does (--store, $AIWG_STATE_STORE, the
// nearest .aiwg/state.git). Errors are one line on stderr, and the exit
// codes are aiwg-state's (3: a statement refused).
package main

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/exitcode"
	"github.com/aiwg/aiwg-state/internal/termtext"
	"github.com/aiwg/aiwg-state/sqlstate"
	"github.com/aiwg/aiwg-state/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: aiwg-state sql QUERY [--at REV] [--branch B] [--json|--csv|--table] [--store DIR]
       aiwg-state sql exec STATEMENT [--agent NAME] [--branch B] [--expect REV] [--json] [--store DIR]
       aiwg-state sql index [--rebuild|--verify] [--json] [--store DIR]
       aiwg-state table create NAME --schema FILE [--agent NAME] [--store DIR]
       aiwg-state table ls [--json] [--store DIR]

SQL over the store. SQLite is a query index derived from the store at a
revision (kept in the store's git directory under aiwg/sql/, safe to
delete), never the source of truth.

Tables that mirror the store, read-only: documents, mutations, memory,
variables, trajectories, iterations, leases, queues, index_problems.
Agent tables are declared with table create; their rows are documents
(tables/NAME/ROWID.json), and sql exec runs one INSERT, UPDATE or DELETE
on one of them as one commit. DDL, ATTACH, pragmas other than the
schema-reading ones, load_extension and more than one statement are
refused (exit 3). A statement runs 10 s at most (--timeout), an answer
holds 256 MB at most and one exec writes 1,000 rows at most (exit 3).
docs/sql.md has every table's columns.

Flags:
`

type options struct {
	store, at, branch, agent, expect, schema   string
	json, csv, table, rebuild, noSync, version bool
	verify                                     bool
	timeout                                    time.Duration
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("aiwg-state sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	fs.StringVar(&o.store, "store", os.Getenv("AIWG_STATE_STORE"), "the store's directory (default: the nearest .aiwg/state.git)")
	fs.StringVar(&o.at, "at", "", "query the store at this revision (a commit, tag, branch, HEAD~N or an RFC 3339 time)")
	fs.StringVar(&o.branch, "branch", "", "the branch (default: the store's)")
	fs.StringVar(&o.agent, "agent", "", "exec, table create: the agent the commit is authored by (default: $AIWG_AGENT, the store's, $USER)")
	fs.StringVar(&o.expect, "expect", "", "exec: the revision the branch must be at (exit 6 if it moved)")
	fs.StringVar(&o.schema, "schema", "", "table create: the table's schema, a JSON file (- reads standard input)")
	fs.BoolVar(&o.json, "json", false, "print JSON")
	fs.BoolVar(&o.csv, "csv", false, "print CSV with a header line")
	fs.BoolVar(&o.table, "table", false, "print aligned columns with a header (the default)")
	fs.BoolVar(&o.rebuild, "rebuild", false, "index: delete the index and build it again")
	fs.BoolVar(&o.verify, "verify", false, "index: build the index again in memory and compare (exit 3 if the file was edited)")
	fs.BoolVar(&o.noSync, "no-sync", false, "skip fsync: faster, but a machine crash may lose the last writes")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.DurationVar(&o.timeout, "timeout", sqlstate.DefaultTimeout, "the longest a statement runs (a query's or exec's; exit 3 past it)")
	// Flags may come after the arguments, as aiwg-state's do.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return exitcode.Usage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if o.version {
		fmt.Fprintln(stdout, version())
		return 0
	}
	if len(pos) == 0 || pos[0] != "sql" && pos[0] != "table" {
		return fail(stderr, exitcode.UsageError("aiwg-state sql QUERY, aiwg-state sql exec STATEMENT or aiwg-state table create NAME (aiwg-state sql --help)"))
	}
	n := 0
	for _, b := range []bool{o.json, o.csv, o.table} {
		if b {
			n++
		}
	}
	if n > 1 {
		return fail(stderr, exitcode.UsageError("one of --json, --csv and --table"))
	}
	dir, err := storeDir(o.store)
	if err != nil {
		return fail(stderr, err)
	}
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: o.noSync})
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	agent, _ := st.AgentFor(o.agent, os.Getenv)
	// The sandbox profile that bounds the tables: a write's author's; a
	// query's, the agent --agent or AIWG_AGENT names (a query no agent is
	// named for is a person's or a program's with the store at hand,
	// which no profile bounds, as for aiwg-state's reads).
	bound := agent
	if pos[0] == "sql" && (len(pos) < 2 || pos[1] != "exec") {
		bound = o.agent
		if bound == "" {
			bound = os.Getenv("AIWG_AGENT")
		}
	}
	opts, err := sqlstate.ProfileOptions(ctx, st.Store, bound)
	if err != nil {
		return fail(stderr, err)
	}
	if o.timeout <= 0 {
		return fail(stderr, exitcode.UsageError("--timeout is a positive duration (10s, 2m)"))
	}
	opts.Timeout = o.timeout
	db := sqlstate.Open(st.Store, opts)
	wo := store.WriteOptions{Agent: agent, Branch: o.branch}
	if o.expect != "" {
		wo.Expect = &o.expect
	}
	cmd, rest := pos[0], pos[1:]
	switch {
	case cmd == "table" && len(rest) == 2 && rest[0] == "create":
		if o.schema == "" {
			return fail(stderr, exitcode.UsageError("table create NAME --schema FILE"))
		}
		var data []byte
		if o.schema == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(o.schema)
		}
		if err != nil {
			return fail(stderr, err)
		}
		m, err := db.CreateTable(ctx, rest[1], data, wo)
		if err != nil {
			return fail(stderr, err)
		}
		if o.json {
			return fail(stderr, printJSON(stdout, map[string]any{"table": rest[1], "commit": m.Commit, "path": sqlstate.SchemaPath(rest[1])}))
		}
		fmt.Fprintf(stdout, "%s %s declared table %s (%s)\n", short(m.Commit), m.MutationID, rest[1], sqlstate.SchemaPath(rest[1]))
		return 0
	case cmd == "table" && len(rest) == 1 && (rest[0] == "ls" || rest[0] == "list"):
		tables, err := db.Tables(ctx, store.ReadOptions{At: o.at, Branch: o.branch})
		if err != nil {
			return fail(stderr, err)
		}
		names := make([]string, 0, len(tables))
		for n := range tables {
			names = append(names, n)
		}
		sort.Strings(names)
		if o.json {
			out := []map[string]any{}
			for _, n := range names {
				out = append(out, map[string]any{"table": n, "columns": tables[n].Columns})
			}
			return fail(stderr, printJSON(stdout, out))
		}
		for _, n := range names {
			var cols []string
			for _, c := range tables[n].Columns {
				cols = append(cols, c.Name+" "+c.Type)
			}
			fmt.Fprintf(stdout, "%s(id, %s)\n", n, strings.Join(cols, ", "))
		}
		return 0
	case cmd == "sql" && len(rest) == 2 && rest[0] == "exec":
		res, err := db.Exec(ctx, rest[1], wo)
		if err != nil {
			return fail(stderr, err)
		}
		if o.json {
			v := map[string]any{"table": res.Table, "written": nonNil(res.Written), "removed": nonNil(res.Removed)}
			if res.Mutation != nil {
				v["commit"], v["mutation_id"] = res.Mutation.Commit, res.Mutation.MutationID
			}
			return fail(stderr, printJSON(stdout, v))
		}
		if res.Mutation == nil {
			fmt.Fprintln(stdout, "no row changed; nothing committed")
			return 0
		}
		fmt.Fprintf(stdout, "%s %s %s: %d written, %d removed\n", short(res.Mutation.Commit), res.Mutation.MutationID, res.Table, len(res.Written), len(res.Removed))
		return 0
	case cmd == "sql" && len(rest) == 1 && rest[0] == "index":
		if o.rebuild {
			if err := db.Remove(); err != nil {
				return fail(stderr, err)
			}
		}
		if o.verify {
			s, err := db.Verify(ctx, store.ReadOptions{Branch: o.branch})
			if err != nil {
				return fail(stderr, err)
			}
			if o.json {
				return fail(stderr, printJSON(stdout, map[string]any{"commit": s.Commit, "verified": true}))
			}
			fmt.Fprintf(stdout, "index at %s verified: it holds what the store does\n", short(s.Commit))
			return 0
		}
		s, err := db.Update(ctx, store.ReadOptions{Branch: o.branch})
		if err != nil {
			return fail(stderr, err)
		}
		if o.json {
			return fail(stderr, printJSON(stdout, map[string]any{"commit": s.Commit, "full": s.Full, "commits": s.Commits, "files": s.Files, "up_to_date": s.UpToDate, "seconds": s.Took.Seconds()}))
		}
		switch {
		case s.UpToDate:
			fmt.Fprintf(stdout, "index at %s, up to date\n", short(s.Commit))
		case s.Full:
			fmt.Fprintf(stdout, "index built at %s: %d commits, %d files in %s\n", short(s.Commit), s.Commits, s.Files, s.Took.Round(1e6))
		default:
			fmt.Fprintf(stdout, "index updated to %s: %d new commits, %d files in %s\n", short(s.Commit), s.Commits, s.Files, s.Took.Round(1e6))
		}
		return 0
	case cmd == "sql" && len(rest) == 1:
		res, err := db.Query(ctx, rest[0], store.ReadOptions{At: o.at, Branch: o.branch})
		if err != nil {
			return fail(stderr, err)
		}
		switch {
		case o.json:
			return fail(stderr, printJSON(stdout, map[string]any{"commit": res.Commit, "columns": res.Columns, "rows": jsonRows(res.Rows)}))
		case o.csv:
			return fail(stderr, printCSV(stdout, res, isTerminal(stdout)))
		}
		return fail(stderr, printTable(stdout, res))
	}
	return fail(stderr, exitcode.UsageError(fmt.Sprintf("unexpected arguments %q (aiwg-state sql --help)", pos)))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// cell is a value as text: NULL is empty in a table and CSV.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return base64.StdEncoding.EncodeToString(x)
	}
	return fmt.Sprint(v)
}

func jsonRows(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, v := range r {
			if b, ok := v.([]byte); ok {
				out[i][j] = cell(b)
			} else {
				out[i][j] = v
			}
		}
	}
	return out
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printCSV writes res as CSV; on a terminal (safe), values are escaped as
// a table's are, since a person reads them there.
func printCSV(w io.Writer, res *sqlstate.Result, safe bool) error {
	cw := csv.NewWriter(w)
	head := res.Columns
	if safe {
		head = make([]string, len(res.Columns))
		for i, c := range res.Columns {
			head[i] = termtext.Safe(c)
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range res.Rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = cell(v)
			if safe {
				rec[i] = termtext.Safe(rec[i])
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func printTable(w io.Writer, res *sqlstate.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		head[i] = termtext.Safe(c)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range res.Rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = termtext.Safe(cell(v))
		}
		fmt.Fprintln(tw, strings.Join(rec, "\t"))
	}
	return tw.Flush()
}

// isTerminal tells whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// storeDir is the store named, else the nearest.
func storeDir(named string) (string, error) {
	if named != "" {
		return store.StoreDir(named), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return store.FindStore(wd)
}

// fail reports err as aiwg-state does, and returns its exit code.
func fail(w io.Writer, err error) int { return exitcode.Report(w, "aiwg-state sql", err) }

func version() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "aiwg-state-sql " + v
}
