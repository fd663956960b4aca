package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/cputime"
	"github.com/aiwg/aiwg-state/internal/signtest"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/store"
)

// seed1000 makes a store of 1,000 documents in one directory: the shape
// whose ~40 KB directory tree every mutation must rewrite.
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

func BenchmarkSet(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			st := seed1000(b, sync)
			ctx := context.Background()
			b.ResetTimer()
			defer cputime.Start(b)()
			for i := 0; i < b.N; i++ {
				if _, err := st.Set(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", []byte(fmt.Sprint(i+1)), store.WriteOptions{Agent: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetSigned is BenchmarkSet with the agent's SSH key (ed25519)
// configured in the store's git config: every commit carries git's SSH
// signature. Against BenchmarkSet, the cost of signing a mutation.
func BenchmarkSetSigned(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			st := seed1000(b, sync)
			key := signtest.NewKey(b, b.TempDir(), "bench")
			testutil.RunGit(b, st.Dir(), "config", "aiwg.bench.signingKey", key.Path)
			ctx := context.Background()
			b.ResetTimer()
			defer cputime.Start(b)()
			for i := 0; i < b.N; i++ {
				if _, err := st.Set(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", []byte(fmt.Sprint(i+1)), store.WriteOptions{Agent: "bench"}); err != nil {
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
		if _, err := st.Get(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", store.ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWatchLatency: a write and a watcher's call with it, polling
// every millisecond; the metric ms-after-write is the median time from the
// write's return to the call.
func BenchmarkWatchLatency(b *testing.B) {
	st := seed1000(b, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 1)
	from, err := st.Resolve("HEAD", "")
	if err != nil {
		b.Fatal(err)
	}
	go st.Watch(ctx, store.WatchOptions{From: from.String(), Poll: time.Millisecond}, func(m *store.Mutation) bool {
		seen <- m.Commit
		return true
	})
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := st.Set(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", []byte(fmt.Sprint(i+1)), store.WriteOptions{Agent: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		wrote := time.Now()
		if got := <-seen; got != m.Commit {
			b.Fatalf("watched %s, wrote %s", got, m.Commit)
		}
		lat = append(lat, time.Since(wrote))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-after-write")
}

// BenchmarkSetRuled: BenchmarkSet with a schema rule over the documents
// written (each write validated against it) and with one over other
// paths (each write looks its path up in the rules): against
// BenchmarkSet, what schema validation adds to a write.
func BenchmarkSetRuled(b *testing.B) {
	for _, paths := range []string{"docs/*.json", "other/*.json"} {
		b.Run(paths, func(b *testing.B) {
			st := seed1000(b, false)
			ctx := context.Background()
			schema := []byte(`{"type":"object","required":["id","status"],"properties":{"id":{"type":"integer"},"status":{"type":"object","properties":{"value":{"type":"integer","minimum":0}}}}}`)
			if _, err := st.Schemas().Add(ctx, "doc", []string{paths}, schema, store.WriteOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.Set(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", []byte(fmt.Sprint(i+1)), store.WriteOptions{Agent: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIncr is BenchmarkSet's write as an increment: the number read
// and added under the branch lock, with its Delta trailer, and the
// document's time-to-live file looked up. Against BenchmarkSet, what the
// read-modify-write costs.
func BenchmarkIncr(b *testing.B) {
	st := seed1000(b, false)
	ctx := context.Background()
	b.ResetTimer()
	defer cputime.Start(b)()
	for i := 0; i < b.N; i++ {
		if _, _, err := st.Incr(ctx, fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", nil, store.WriteOptions{Agent: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
