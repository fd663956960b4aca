package benchutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/store"
)

// Docs is how many documents the write benchmarks' store holds, in one
// directory: the writes of bench/mutations and bench/concurrent touch a
// tree of this size.
const Docs = 1000

// DocPath is the path of document i (modulo Docs).
func DocPath(i int) string { return fmt.Sprintf("docs/doc-%04d.json", i%Docs) }

// DocBody is document i's body: a small agent's record, canonical JSON.
func DocBody(i int) string {
	return fmt.Sprintf("{\n  \"id\": \"doc-%04d\",\n  \"owner\": \"agent-%d\",\n  \"status\": {\n    \"updated_at\": \"2026-11-22T00:00:00Z\",\n    \"value\": %d\n  },\n  \"tags\": [\n    \"alpha\",\n    \"beta\"\n  ]\n}\n", i, i%7, i)
}

// SeedStore creates a store at dir holding the Docs documents in one
// commit, with fsync or without; it ends the program when it cannot.
func SeedStore(ctx context.Context, dir string, sync bool) *aiwgstate.Store {
	st, err := aiwgstate.Init(ctx, dir, store.InitOptions{Options: store.Options{NoSync: !sync}})
	if err == nil {
		ops := make([]store.Op, Docs)
		for i := range ops {
			ops[i] = store.Op{Op: "put", File: DocPath(i), Value: []byte(DocBody(i))}
		}
		_, err = st.Apply(ctx, ops, store.WriteOptions{Agent: "seed"})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seeding a store:", err)
		os.Exit(1)
	}
	return st
}

// SeedFloor writes the Docs documents as plain files in dir, for
// FloorWrite to replace: the floor a versioned write is measured against.
func SeedFloor(dir string) string {
	check(os.MkdirAll(dir, 0o755))
	for i := 0; i < Docs; i++ {
		check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("doc-%04d.json", i)), []byte(DocBody(i)), 0o644))
	}
	return dir
}

// FloorWrite replaces document i of a SeedFloor directory without
// versioning it: a temp file renamed over it, with the file and its
// directory flushed under fsync.
func FloorWrite(dir string, i int, sync bool) {
	dst := filepath.Join(dir, fmt.Sprintf("doc-%04d.json", i%Docs))
	f, err := os.CreateTemp(dir, ".tmp-")
	check(err)
	_, err = f.Write([]byte(DocBody(i % Docs)))
	check(err)
	if sync {
		check(f.Sync())
	}
	check(f.Close())
	check(os.Rename(f.Name(), dst))
	if sync {
		d, err := os.Open(dir)
		check(err)
		check(d.Sync())
		d.Close()
	}
}
