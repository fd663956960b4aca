package snapshot_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/snapshot"
	"github.com/aiwg/aiwg-state/store"
)

// BenchmarkRestore1000 restores a snapshot of 1,000 documents every one
// of which changed since: one commit rewriting 1,000 files (the worst
// case; a restore costs what changed). Two snapshots are restored in
// turn, so each restore changes all 1,000.
func BenchmarkRestore1000(b *testing.B) {
	st := storetest.NewWith(b, store.Options{NoSync: true})
	ctx := context.Background()
	wo := store.WriteOptions{Agent: "bench"}
	sn := st.Snapshots()
	for v, name := range []string{"a", "b"} {
		ops := make([]store.Op, 1000)
		for i := range ops {
			ops[i] = store.Op{Op: "put", File: fmt.Sprintf("docs/doc-%04d.json", i), Value: []byte(fmt.Sprintf(`{"id":%d,"status":{"value":%d}}`, i, v))}
		}
		if _, err := st.Apply(ctx, ops, wo); err != nil {
			b.Fatal(err)
		}
		if _, err := sn.Create(ctx, name, snapshot.CreateOptions{Paths: []string{"docs"}}, wo); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, _, err := sn.Restore(ctx, []string{"a", "b"}[i%2], snapshot.RestoreOptions{}, wo)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Files) != 1000 {
			b.Fatalf("%d files restored", len(res.Files))
		}
	}
}
