package aiwgstate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
)

// seed1000 makes a store of 1,000 documents in one directory: the shape
// whose ~40 KB directory tree every mutation must rewrite.
func seed1000(b *testing.B, sync bool) *aiwgstate.Store {
	b.Helper()
	st, err := aiwgstate.Init(context.Background(), filepath.Join(b.TempDir(), "s.git"), aiwgstate.InitOptions{Options: aiwgstate.Options{NoSync: !sync}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ops := make([]aiwgstate.Op, 1000)
	for i := range ops {
		ops[i] = aiwgstate.Op{Op: "put", File: fmt.Sprintf("docs/doc-%04d.json", i), Value: []byte(fmt.Sprintf(`{"id":%d,"status":{"value":0}}`, i))}
	}
	if _, err := st.Apply(context.Background(), ops, aiwgstate.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	return st
}

func BenchmarkSet(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			st := seed1000(b, sync)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.Set(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", []byte(fmt.Sprint(i+1)), aiwgstate.WriteOptions{Agent: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	st := seed1000(b, false)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := st.Get(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", aiwgstate.ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
