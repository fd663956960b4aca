package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/aiwg/aiwg-state/sqlstate"
)

// bin is the directory aiwg-state and aiwg-state-sql are built into, as
// go install puts them: aiwg-state sql finds its program beside it.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aiwg-sql-bin-")
	if err != nil {
		panic(err)
	}
	bin = dir
	if out, err := exec.Command("go", "build", "-o", dir, ".", "../aiwg-state").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs aiwg-state in dir and returns its output and exit code.
func cli(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AIWG_AGENT=planner", "PATH=/usr/bin:/bin")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func ok(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errs, code := cli(t, dir, args...)
	if code != 0 {
		t.Fatalf("aiwg-state %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// TestThroughAiwgState: aiwg-state sql and table reach this program,
// with its output formats, exit codes and commits.
func TestThroughAiwgState(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "init")
	ok(t, dir, "memory", "put", "long_term", "fact", "f1", `{"topic":"auth"}`)
	ok(t, dir, "memory", "put", "long_term", "fact", "f2", `{"topic":"db"}`)
	out := ok(t, dir, "sql", `SELECT id FROM memory WHERE kind='fact' AND payload->>'$.topic'='auth'`, "--csv")
	if out != "id\nf1\n" {
		t.Fatalf("csv: %q", out)
	}
	out = ok(t, dir, "sql", "SELECT agent, count(*) AS n FROM mutations GROUP BY agent", "--json")
	var res struct {
		Commit  string
		Columns []string
		Rows    [][]any
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Commit) != 40 || strings.Join(res.Columns, ",") != "agent,n" {
		t.Fatalf("json: %s %v", out, err)
	}
	out = ok(t, dir, "sql", "SELECT count(*) AS n FROM memory", "--at", "HEAD~1")
	if out != "n\n1\n" {
		t.Fatalf("--at: %q", out)
	}
	schema := filepath.Join(dir, "notes.json")
	os.WriteFile(schema, []byte(`{"columns":[{"name":"title","type":"text"},{"name":"priority","type":"integer"}]}`), 0o644)
	ok(t, dir, "table", "create", "notes", "--schema", schema)
	ok(t, dir, "sql", "exec", "INSERT INTO notes(id, title, priority) VALUES ('n1', 'rotate keys', 2)")
	out = ok(t, dir, "sql", "SELECT id, title, priority FROM notes")
	if !strings.Contains(out, "n1  rotate keys  2") {
		t.Fatalf("table: %q", out)
	}
	if out := ok(t, dir, "table", "ls"); out != "notes(id, title text, priority integer)\n" {
		t.Fatalf("table ls: %q", out)
	}
	g := exec.Command("git", "--git-dir", filepath.Join(dir, ".aiwg", "state.git"), "log", "-1", "--format=%an %s|%(trailers:key=Sql-Statement,valueonly)")
	if b, err := g.Output(); err != nil || !strings.Contains(string(b), "planner sql insert notes: 1 written, 0 removed|INSERT INTO notes(id, title, priority) VALUES ('n1', 'rotate keys', 2)") {
		t.Fatalf("git log: %s %v", b, err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"sql", "DROP TABLE notes"}, 3, "statement refused (ddl)"},
		{[]string{"sql", "exec", "DELETE FROM memory"}, 3, "statement refused (mirrored)"},
		{[]string{"sql", "SELECT 1; SELECT 2"}, 3, "statement refused (multiple)"},
		{[]string{"sql", "SELECT nope FROM memory"}, 2, "no such column"},
		{[]string{"sql", "SELECT 1", "--json", "--csv"}, 2, "one of --json"},
		{[]string{"table", "create", "memory", "--schema", schema}, 2, "table name"},
	} {
		_, errs, code := cli(t, dir, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d %q, want %d %q on one line", c.args, code, errs, c.code, c.msg)
		}
	}
	if out, err := exec.Command("git", "--git-dir", filepath.Join(dir, ".aiwg", "state.git"), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("fsck: %v %s", err, out)
	}
}

// TestSandboxProfiles: an agent's sandbox profile bounds the tables it
// may read and write; a refusal names the profile and the rule (exit 3).
func TestSandboxProfiles(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "init")
	schema := filepath.Join(dir, "s.json")
	os.WriteFile(schema, []byte(`{"columns":[{"name":"title","type":"text"}]}`), 0o644)
	ok(t, dir, "table", "create", "scraped_pages", "--schema", schema)
	ok(t, dir, "table", "create", "users", "--schema", schema)
	ok(t, dir, "queue", "put", "jobs", `{"n":1}`)
	pol := filepath.Join(dir, "policy.json")
	os.WriteFile(pol, []byte(`{"default": "allow", "rules": [],
  "profiles": {"scraper": {"documents": {"read": ["**"], "write": ["**"]}, "tables": {"read": ["scraped_*", "documents", "queues"], "write": ["scraped_*"]}}},
  "sandbox": [{"agents": ["scraper-*"], "profile": "scraper"}, {"agents": ["calc"], "profile": "compute-and-store"}]}`), 0o644)
	ok(t, dir, "policy", "set", pol)
	ok(t, dir, "sql", "exec", "INSERT INTO scraped_pages(title) VALUES ('a')", "--agent", "scraper-1")
	if out := ok(t, dir, "sql", "SELECT count(DISTINCT path) AS n FROM documents WHERE path LIKE 'tables/%'", "--agent", "scraper-1", "--csv"); out != "n\n1\n" {
		t.Fatalf("scraper reads documents: %q", out)
	}
	for _, c := range []struct {
		args []string
		rule string
	}{
		{[]string{"sql", "SELECT * FROM users", "--agent", "scraper-1"}, "rule tables.read"},
		{[]string{"sql", "exec", "INSERT INTO users(title) VALUES ('x')", "--agent", "scraper-1"}, "rule tables.write"},
		{[]string{"sql", "SELECT * FROM queues", "--agent", "scraper-1"}, "rule queues"},
		{[]string{"sql", "SELECT * FROM queues", "--agent", "calc"}, `sandbox profile "compute-and-store", rule queues`},
		{[]string{"sql", "SELECT * FROM leases", "--agent", "calc"}, "rule coordination"},
	} {
		_, errs, code := cli(t, dir, c.args...)
		if code != 3 || !strings.Contains(errs, c.rule) || !strings.Contains(errs, "sandbox profile") {
			t.Errorf("%v: exit %d %q, want 3 naming %q", c.args, code, errs, c.rule)
		}
	}
	// calc may read memory and its own tables; a query naming no agent
	// is bounded by no profile.
	ok(t, dir, "sql", "SELECT * FROM memory", "--agent", "calc")
	ok(t, dir, "sql", "SELECT * FROM users", "--agent", "calc")
	ok(t, dir, "sql", "SELECT * FROM queues")
}

// TestSQLiteStaysOut: aiwg-state, the root package and the other programs
// do not link SQLite (it would slow every command's start); this program
// alone does.
func TestSQLiteStaysOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../aiwg-state", "../aiwg-state-client", "../aiwg-state-mcp", "../..").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "modernc.org/sqlite") {
		t.Fatal("a program other than aiwg-state-sql links modernc.org/sqlite")
	}
}

// TestHostileOutput: text an agent wrote cannot drive the terminal of
// the person who reads a table: control characters and bidirectional
// overrides are shown escaped, never written raw.
func TestHostileOutput(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "init")
	ok(t, dir, "put", "public/t.json", `{"note":"ok\u001b[1A\u001b[2K\rplan.json approved\u009b2J\u202eevil\u007f"}`, "--agent", "evil")
	out := ok(t, dir, "sql", `SELECT path, value->>'$' AS note FROM documents WHERE key = 'note'`)
	for _, raw := range []string{"\x1b", "\r", "\u009b", "\u202e", "\x7f"} {
		if strings.Contains(out, raw) {
			t.Fatalf("raw %q in the table: %q", raw, out)
		}
	}
	for _, esc := range []string{`\x1b[1A`, `\x0d`, `\u009b`, `\u202e`, `\x7f`} {
		if !strings.Contains(out, esc) {
			t.Fatalf("%s missing from the table: %q", esc, out)
		}
	}
	// Column names too.
	if out := ok(t, dir, "sql", "SELECT 1 AS \"a\x1b[2Jb\""); strings.Contains(out, "\x1b") {
		t.Fatalf("raw ESC in a column name: %q", out)
	}
}

// TestLimitsExitCodes: a statement past its deadline or its row cap is
// exit 3, with a message that says which limit.
func TestLimitsExitCodes(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "init")
	schema := filepath.Join(dir, "s.json")
	os.WriteFile(schema, []byte(`{"columns":[{"name":"title","type":"text"}]}`), 0o644)
	ok(t, dir, "table", "create", "notes", "--schema", schema)
	endless := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0"
	if _, errs, code := cli(t, dir, "sql", endless, "--timeout", "300ms"); code != 3 || !strings.Contains(errs, "time limit of 300ms") {
		t.Fatalf("endless query: exit %d %q", code, errs)
	}
	if _, errs, code := cli(t, dir, "sql", "exec", "INSERT INTO notes(title) SELECT 't' FROM ("+endless+")", "--timeout", "300ms"); code != 3 || !strings.Contains(errs, "time limit") {
		t.Fatalf("endless exec: exit %d %q", code, errs)
	}
	if _, _, code := cli(t, dir, "sql", "SELECT 1", "--timeout", "0s"); code != 2 {
		t.Fatalf("--timeout 0: exit %d", code)
	}
	spam := "INSERT INTO notes(title) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1001) SELECT 'spam' || x FROM c"
	if _, errs, code := cli(t, dir, "sql", "exec", spam); code != 3 || !strings.Contains(errs, "more than 1000 rows") {
		t.Fatalf("1001 rows: exit %d %q", code, errs)
	}
	// The store's manifest lowers it for every caller.
	ok(t, dir, "config", "limits.max_sql_rows_written", "2")
	if _, errs, code := cli(t, dir, "sql", "exec", "INSERT INTO notes(title) VALUES ('a'), ('b'), ('c')"); code != 3 || !strings.Contains(errs, "more than 2 rows") {
		t.Fatalf("3 rows past the store's 2: exit %d %q", code, errs)
	}
	ok(t, dir, "sql", "exec", "INSERT INTO notes(title) VALUES ('a'), ('b')")
	if _, _, code := cli(t, dir, "config", "limits.max_sql_rows_written", "-1"); code == 0 {
		t.Fatal("a negative limit was stored")
	}
}

// TestIndexVerify: sql index --verify passes on an honest index and is
// exit 3 on one edited behind the store's back.
func TestIndexVerify(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "init")
	ok(t, dir, "put", "a.json", `{"x":1}`, "--agent", "evil")
	if out := ok(t, dir, "sql", "index", "--verify"); !strings.Contains(out, "verified") {
		t.Fatalf("verify: %q", out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".aiwg", "state.git", "aiwg", "sql", "branch-*.db"))
	if len(files) != 1 {
		t.Fatalf("index files: %v", files)
	}
	db, err := sql.Open("sqlite", files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE mutations SET agent = 'admin', signature = 'good' WHERE agent = 'evil'`); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, dir, "sql", "index", "--verify"); code != 3 || !strings.Contains(errs, "differs from the store in mutations") {
		t.Fatalf("verify of a forged index: exit %d %q", code, errs)
	}
}

// TestCSVOnATerminal: CSV meant for a person's terminal is escaped as a
// table is; CSV into a file or a pipe is the values as they are.
func TestCSVOnATerminal(t *testing.T) {
	res := &sqlstate.Result{Columns: []string{"note"}, Rows: [][]any{{"ok\x1b[2K\rforged"}}}
	var safe, raw strings.Builder
	if err := printCSV(&safe, res, true); err != nil {
		t.Fatal(err)
	}
	if err := printCSV(&raw, res, false); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(safe.String(), "\x1b\r") || !strings.Contains(safe.String(), `\x1b[2K\x0dforged`) {
		t.Fatalf("terminal CSV: %q", safe.String())
	}
	if !strings.Contains(raw.String(), "\x1b[2K\rforged") {
		t.Fatalf("piped CSV: %q", raw.String())
	}
}
