package sqlstate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/sqlstate"
	"github.com/aiwg/aiwg-state/store"
)

// endless is a statement that never ends on its own.
const endless = `INSERT INTO notes(id, title) SELECT 'z' || x, 't' FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0 LIMIT 1)`

func fsck(t *testing.T, st *aiwgstate.Store) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", st.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

func withNotes(t *testing.T) (*aiwgstate.Store, store.WriteOptions) {
	t.Helper()
	st := fixture(t)
	wo := store.WriteOptions{Agent: "alice"}
	if _, err := sqlstate.Open(st.Store, sqlstate.Options{}).CreateTable(context.Background(), "notes", []byte(notesSchema), wo); err != nil {
		t.Fatal(err)
	}
	return st, wo
}

// TestExecHoldsNoIndexLock: a statement that computes forever is ended
// by its deadline, and meanwhile another process's commit and query go
// through (the index is updated while the statement runs).
func TestExecHoldsNoIndexLock(t *testing.T) {
	ctx := context.Background()
	st, wo := withNotes(t)
	head := git(t, st, "rev-parse", "HEAD")
	attacker := sqlstate.Open(st.Store, sqlstate.Options{Timeout: 3 * time.Second})
	var execDone atomic.Bool
	errc := make(chan error, 1)
	go func() {
		_, err := attacker.Exec(ctx, endless, store.WriteOptions{Agent: "evil"})
		execDone.Store(true)
		errc <- err
	}()
	time.Sleep(500 * time.Millisecond) // the statement is computing
	if _, err := st.Set(ctx, "public/p.json", "a", []byte("1"), wo); err != nil {
		t.Fatal(err)
	}
	other := sqlstate.Open(st.Store, sqlstate.Options{})
	same(t, "query during exec", query(t, other, `SELECT count(DISTINCT path) FROM documents WHERE path = 'public/p.json'`, store.ReadOptions{}), []string{"1"})
	if execDone.Load() {
		t.Fatal("the query waited for the statement to end")
	}
	err := <-errc
	if !errors.Is(err, store.ErrLimit) || !strings.Contains(err.Error(), "time limit") {
		t.Fatalf("endless exec: %v", err)
	}
	// A query is bounded the same way.
	q := sqlstate.Open(st.Store, sqlstate.Options{Timeout: 200 * time.Millisecond})
	if _, err := q.Query(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0`, store.ReadOptions{}); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("endless query: %v", err)
	}
	if got := git(t, st, "log", "--format=%s", "-1"); strings.Contains(got, "sql") {
		t.Fatalf("the endless statement committed: %s", got)
	}
	_ = head
	fsck(t, st)
}

// TestExecWritesItsOwnCopy: a statement that names the shared index's
// copy of a table is refused.
func TestExecWritesItsOwnCopy(t *testing.T) {
	st, _ := withNotes(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	_, err := db.Exec(context.Background(), `INSERT INTO aiwg_index.notes(id, title) VALUES ('x', 'y')`, store.WriteOptions{Agent: "evil"})
	if !isRefused(err, sqlstate.RefusedNotAllowed) {
		t.Fatalf("write to aiwg_index.notes: %v", err)
	}
}

// TestStorePathSyntax: a store whose path holds #, ? or % keeps its
// index in its own git directory, and never touches the database file
// its path would name cut at the #.
func TestStorePathSyntax(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"app.db#v2", "app.db?mode=ro", "pct%41", "sp ace"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			foreign := filepath.Join(parent, "app.db")
			fdb, err := sql.Open("sqlite", foreign)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fdb.Exec(`CREATE TABLE customers(name TEXT); INSERT INTO customers VALUES ('alice')`); err != nil {
				t.Fatal(err)
			}
			fdb.Close()
			st, err := aiwgstate.Init(ctx, filepath.Join(parent, name), store.InitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Put(ctx, "a.json", []byte(`{"x":1}`), store.WriteOptions{Agent: "a"}); err != nil {
				t.Fatal(err)
			}
			db := sqlstate.Open(st.Store, sqlstate.Options{})
			same(t, "documents", query(t, db, `SELECT count(DISTINCT path) FROM documents WHERE path = 'a.json'`, store.ReadOptions{}), []string{"1"})
			// sql exec, --at and verify attach the file: the same path.
			wo := store.WriteOptions{Agent: "a"}
			if _, err := db.CreateTable(ctx, "notes", []byte(notesSchema), wo); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(ctx, `INSERT INTO notes(id, title) VALUES ('n1', 'x')`, wo); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Put(ctx, "b.json", []byte(`{"x":2}`), wo); err != nil {
				t.Fatal(err)
			}
			same(t, "--at", query(t, db, `SELECT count(DISTINCT path) FROM documents WHERE path = 'b.json'`, store.ReadOptions{At: "HEAD~1"}), []string{"0"})
			if _, err := db.Verify(ctx, store.ReadOptions{}); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(st.Dir(), "aiwg", "sql", "branch-*.db"))
			if len(files) != 1 {
				t.Fatalf("index files in the git directory: %v", files)
			}
			fdb, _ = sql.Open("sqlite", foreign)
			defer fdb.Close()
			var who string
			if err := fdb.QueryRow(`SELECT name FROM customers`).Scan(&who); err != nil || who != "alice" {
				t.Fatalf("the database beside the store: %q %v", who, err)
			}
		})
	}
}

// TestForeignIndexFile: a database that is not an index, at the index's
// path, is refused, never emptied.
func TestForeignIndexFile(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	dir := filepath.Join(st.Dir(), "aiwg", "sql")
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	if _, err := db.Update(ctx, store.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "branch-*.db"))
	if len(files) != 1 {
		t.Fatalf("index files: %v", files)
	}
	if err := db.Remove(); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	fdb, err := sql.Open("sqlite", files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	if _, err := fdb.Exec(`CREATE TABLE customers(name TEXT); INSERT INTO customers VALUES ('alice')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Query(ctx, `SELECT count(*) FROM documents`, store.ReadOptions{}); !errors.Is(err, store.ErrDenied) {
		t.Fatalf("query over a foreign file: %v", err)
	}
	var n int
	if err := fdb.QueryRow(`SELECT count(*) FROM customers`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("foreign table: %d %v", n, err)
	}
}

// TestExecRowCap: one statement writes at most MaxRowsWritten rows;
// past it nothing is committed.
func TestExecRowCap(t *testing.T) {
	ctx := context.Background()
	st, wo := withNotes(t)
	head := git(t, st, "rev-parse", "HEAD")
	spam := `INSERT INTO notes(title) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1001) SELECT 'spam' || x FROM c`
	if _, err := sqlstate.Open(st.Store, sqlstate.Options{}).Exec(ctx, spam, wo); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("1001 rows: %v", err)
	}
	small := sqlstate.Open(st.Store, sqlstate.Options{MaxRowsWritten: 3})
	if _, err := small.Exec(ctx, `INSERT INTO notes(title) VALUES ('a'), ('b'), ('c'), ('d')`, wo); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("4 rows past 3: %v", err)
	}
	if got := git(t, st, "rev-parse", "HEAD"); got != head {
		t.Fatal("a refused statement committed")
	}
	res, err := small.Exec(ctx, `INSERT INTO notes(title) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT 'const' FROM c`, wo)
	if err != nil || len(res.Written) != 3 {
		t.Fatalf("3 rows: %+v %v", res, err)
	}
	if _, err := small.Exec(ctx, `INSERT INTO notes(title) VALUES ('e')`, wo); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Exec(ctx, `DELETE FROM notes`, wo); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("delete 3 + 1: %v", err)
	}
	fsck(t, st)
}

// TestUpdateKeepsKeys: an UPDATE changes the columns it sets, and keeps
// the row file's other keys: keys that are no column, and values of a
// type the index could not hold.
func TestUpdateKeepsKeys(t *testing.T) {
	ctx := context.Background()
	st, wo := withNotes(t)
	if _, err := st.Put(ctx, "tables/notes/e1.json", []byte(`{"title":"a","extra":"keepme","priority":"high","tags":{"owner":"ops"}}`), wo); err != nil {
		t.Fatal(err)
	}
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	if _, err := db.Exec(ctx, `UPDATE notes SET done = 1 WHERE id = 'e1'`, store.WriteOptions{Agent: "evil"}); err != nil {
		t.Fatal(err)
	}
	got := git(t, st, "show", "HEAD:tables/notes/e1.json")
	for _, want := range []string{`"extra": "keepme"`, `"priority": "high"`, `"done": true`, `"owner": "ops"`, `"title": "a"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("row file lost %s: %s", want, got)
		}
	}
	// A column set to NULL leaves the file; a changed id moves it, keys kept.
	if _, err := db.Exec(ctx, `UPDATE notes SET title = NULL, id = 'e2' WHERE id = 'e1'`, wo); err != nil {
		t.Fatal(err)
	}
	got = git(t, st, "show", "HEAD:tables/notes/e2.json")
	if strings.Contains(got, `"title"`) || !strings.Contains(got, `"extra": "keepme"`) {
		t.Fatalf("e2: %s", got)
	}
	fsck(t, st)
}

// TestQueryBytes: a query's whole answer is bounded, not only a value.
func TestQueryBytes(t *testing.T) {
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{MaxBytes: 1000})
	_, err := db.Query(context.Background(), `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT x, zeroblob(600) FROM c`, store.ReadOptions{})
	if !errors.Is(err, store.ErrLimit) {
		t.Fatalf("3 x 600 bytes past 1000: %v", err)
	}
}

// TestCommonTableExpressions: a CTE read without naming a column runs;
// tables the options do not allow stay refused, however they are named.
func TestCommonTableExpressions(t *testing.T) {
	ctx := context.Background()
	st, wo := withNotes(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	same(t, "cte", query(t, db, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT 1 FROM c`, store.ReadOptions{}), []string{"1", "1", "1"})
	narrow := sqlstate.Open(st.Store, sqlstate.Options{MayRead: func(t string) bool { return t == "notes" }})
	for _, q := range []string{
		`SELECT count(*) FROM documents`,
		`SELECT 1 FROM documents`,
		`WITH c AS (SELECT 1 FROM documents) SELECT 1 FROM c`,
		`SELECT 1 FROM sqlite_stat1`,
		`SELECT 1 FROM pragma_database_list`,
		`SELECT 1 FROM unknown_thing`,
	} {
		// Refused by the guard, or unknown to SQLite: never an answer.
		if _, err := narrow.Query(ctx, q, store.ReadOptions{}); err == nil {
			t.Errorf("%s: answered", q)
		}
	}
	if _, err := narrow.Exec(ctx, `INSERT INTO notes(title) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2) SELECT 'const' FROM c`, wo); err != nil {
		t.Fatal(err)
	}
	same(t, "inserted", query(t, db, `SELECT title FROM notes`, store.ReadOptions{}), []string{"const", "const"})
	fsck(t, st)
}

// TestVerify: an index built step by step verifies; one edited by a
// process that can write the git directory does not, and the tables
// edited are named.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	st, wo := withNotes(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	if _, err := db.Exec(ctx, `INSERT INTO notes(id, title) VALUES ('n1', 'a'), ('n2', 'b')`, wo); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := st.Set(ctx, "public/p.json", "n", []byte(fmt.Sprint(i)), wo); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Update(ctx, store.ReadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Verify(ctx, store.ReadOptions{}); err != nil {
		t.Fatalf("an honest index: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(st.Dir(), "aiwg", "sql", "branch-*.db"))
	fdb, err := sql.Open("sqlite", files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	if _, err := fdb.Exec(`UPDATE notes SET title = 'forged' WHERE id = 'n1'; UPDATE mutations SET agent = 'admin', signature = 'good' WHERE agent = 'bob'`); err != nil {
		t.Fatal(err)
	}
	_, err = db.Verify(ctx, store.ReadOptions{})
	if !errors.Is(err, repo.ErrCorrupt) || !strings.Contains(err.Error(), "mutations, notes") {
		t.Fatalf("a forged index: %v", err)
	}
}

// TestIndexBusy: while another process holds the index file's write lock
// past the busy timeout, a query that must update the index fails with
// ErrBusy, store.ErrLocked (exit 5), not an unexpected error.
func TestIndexBusy(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	db := sqlstate.Open(st.Store, sqlstate.Options{})
	if _, err := db.Update(ctx, store.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	defer sqlstate.SetBusyTimeout(200 * time.Millisecond)()
	files, _ := filepath.Glob(filepath.Join(st.Dir(), "aiwg", "sql", "branch-*.db"))
	other, err := sql.Open("sqlite", files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "public/p.json", "a", []byte("1"), store.WriteOptions{Agent: "alice"}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Query(ctx, `SELECT count(*) FROM documents`, store.ReadOptions{})
	if !errors.Is(err, sqlstate.ErrBusy) || !errors.Is(err, store.ErrLocked) {
		t.Fatalf("query of a locked index: %v", err)
	}
	conn.ExecContext(ctx, "ROLLBACK")
	same(t, "after", query(t, db, `SELECT count(DISTINCT path) FROM documents WHERE path = 'public/p.json'`, store.ReadOptions{}), []string{"1"})
}
