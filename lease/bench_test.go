package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/store"
)

// BenchmarkLease: an acquire and its release (two commits) on one of 100
// resources, in the store of 1,000 documents: against BenchmarkSet, what
// a lease costs over the writes it guards.
func BenchmarkLease(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			st := seed1000(b, sync)
			ctx := context.Background()
			wo := store.WriteOptions{Agent: "bench"}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := fmt.Sprintf("tasks/t-%02d", i%100)
				if _, err := st.Leases().Acquire(ctx, r, lease.Options{TTL: time.Minute}, wo); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Leases().Release(ctx, r, lease.ReleaseOptions{}, wo); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// seed1000 is a store of 1,000 documents, as the core's benchmarks
// start from.
func seed1000(b *testing.B, sync bool) *aiwgstate.Store {
	b.Helper()
	st := storetest.NewWith(b, store.Options{NoSync: !sync})
	ops := make([]store.Op, 1000)
	for i := range ops {
		ops[i] = store.Op{Op: "put", File: fmt.Sprintf("docs/doc-%04d.json", i), Value: []byte(fmt.Sprintf(`{"id":%d,"status":{"value":0}}`, i))}
	}
	if _, err := st.Apply(context.Background(), ops, store.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	return st
}
