package sqlstate_test

import (
	"context"
	"fmt"
	"os"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/sqlstate"
	"github.com/aiwg/aiwg-state/store"
)

// Query memory records by a key of their payload, then keep rows of an
// agent table: each statement is one commit.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sqlstate-example-")
	defer os.RemoveAll(dir)
	st, _ := aiwgstate.Init(ctx, dir, store.InitOptions{})
	defer st.Close()
	wo := store.WriteOptions{Agent: "planner"}
	st.Memory().Put(ctx, memory.Key{Namespace: "long_term", Kind: "fact", ID: "f1"}, []byte(`{"topic":"auth"}`), 0, wo)
	st.Memory().Put(ctx, memory.Key{Namespace: "long_term", Kind: "fact", ID: "f2"}, []byte(`{"topic":"db"}`), 0, wo)

	db := sqlstate.Open(st.Store, sqlstate.Options{})
	res, err := db.Query(ctx, `SELECT id FROM memory WHERE kind = 'fact' AND payload->>'$.topic' = 'auth'`, store.ReadOptions{})
	fmt.Println(res.Rows, err)

	db.CreateTable(ctx, "notes", []byte(`{"columns": [{"name": "title", "type": "text"}]}`), wo)
	ex, err := db.Exec(ctx, `INSERT INTO notes(id, title) VALUES ('n1', 'rotate keys')`, wo)
	fmt.Println(ex.Written, ex.Mutation.Changes[0].File, err)

	_, err = db.Query(ctx, `DROP TABLE notes`, store.ReadOptions{})
	fmt.Println(err)
	// Output:
	// [[f1]] <nil>
	// [n1] tables/notes/n1.json <nil>
	// statement refused (ddl): DROP: tables are declared with aiwg-state table create; no other schema change runs
}
