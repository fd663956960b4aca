package sqlstate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/sqlstate"
	"github.com/aiwg/aiwg-state/store"
)

// FuzzStatements: whatever text an agent sends, as a query or as sql
// exec under options that let it write nothing, the store does not move,
// the index keeps what it mirrors, and no file appears outside it.
func FuzzStatements(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM memory", "ATTACH 'OUT/x.db' AS x", "VACUUM INTO 'OUT/y.db'", "PRAGMA query_only = 0",
		"DELETE FROM memory", "WITH x AS (SELECT 1) DELETE FROM documents", "SELECT load_extension('x')",
		"SELECT 1; DROP TABLE memory", "INSERT INTO notes(title) VALUES ('x')", "UPDATE notes SET title = 'y'",
		"CREATE TABLE t AS SELECT * FROM memory", "DROP TABLE meta", "REPLACE INTO meta VALUES ('commit', 'x')",
		"PRAGMA writable_schema = 1", "SELECT * FROM sqlite_dbpage", "BEGIN; DELETE FROM memory; COMMIT",
		"SELECT writefile('OUT/z', 'x')", "EXPLAIN DELETE FROM memory", "SAVEPOINT a", "ANALYZE", "REINDEX",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 5) SELECT * FROM n",
	} {
		f.Add(s)
	}
	ctx := context.Background()
	st := fixture(f)
	db := sqlstate.Open(st.Store, sqlstate.Options{MaxRows: 1000})
	if _, err := db.CreateTable(ctx, "notes", []byte(notesSchema), store.WriteOptions{Agent: "alice"}); err != nil {
		f.Fatal(err)
	}
	readOnly := sqlstate.Open(st.Store, sqlstate.Options{MayWrite: func(string) bool { return false }})
	head := git(f, st, "rev-parse", "HEAD")
	out := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ReplaceAll(s, "OUT/", out+"/")
		db.Query(ctx, s, store.ReadOptions{})
		readOnly.Exec(ctx, s, store.WriteOptions{Agent: "mallory"})
		if got := git(t, st, "rev-parse", "HEAD"); got != head {
			t.Fatalf("%q moved the branch to %s", s, got)
		}
		r, err := db.Query(ctx, `SELECT (SELECT count(*) FROM memory), (SELECT count(*) FROM notes), (SELECT count(*) FROM meta WHERE key = 'commit' AND value = '`+strings.TrimSpace(head)+`')`, store.ReadOptions{})
		if err != nil || fmt.Sprint(r.Rows) != "[[6 0 1]]" {
			t.Fatalf("after %q: %v %v", s, r, err)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Fatalf("%q made %s", s, filepath.Join(out, entries[0].Name()))
		}
	})
}
