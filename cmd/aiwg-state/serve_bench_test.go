package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/aiwg/aiwg-state/serve"
	"github.com/aiwg/aiwg-state/store"
)

// benchStore is a store of 1,000 small documents in one directory, as
// bench/mutations seeds it.
func benchStore(b *testing.B) string {
	b.Helper()
	dir, _ := project(b)
	st, err := aiwgstate.Open(context.Background(), dir+"/.aiwg/state.git", store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ops := make([]store.Op, 1000)
	for i := range ops {
		ops[i] = store.Op{Op: "put", File: fmt.Sprintf("docs/doc-%04d.json", i), Value: []byte(fmt.Sprintf(`{"id": %d, "status": {"value": %d}}`, i, i))}
	}
	if _, err := st.Apply(context.Background(), ops, store.WriteOptions{Agent: "seed"}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkServedSet is a server's side of `aiwg-state-client set`: the
// command line run against a pooled store, against BenchmarkStoreSet, the
// same write through the API, to show what the CLI layer adds.
func BenchmarkServedSet(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			dir := benchStore(b)
			store := dir + "/.aiwg/state.git"
			home, err := os.Stat(store)
			if err != nil {
				b.Fatal(err)
			}
			sv := &server{store: store, home: home, pool: newStorePool(store), stop: func() {}, log: io.Discard}
			defer sv.pool.close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				args := []string{"aiwg-state", "set", fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", fmt.Sprint(i + 5000), "--agent", "bench"}
				if !sync {
					args = append(args, "--no-sync")
				}
				var stderr strings.Builder
				req := &serve.Invocation{Request: serve.Request{Args: args, Dir: dir}, Stdout: io.Discard, Stderr: &stderr}
				if code := sv.run(context.Background(), req); code != 0 {
					b.Fatalf("exit %d: %s", code, stderr.String())
				}
			}
		})
	}
}

func BenchmarkStoreSet(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			dir := benchStore(b)
			st, err := aiwgstate.Open(context.Background(), dir+"/.aiwg/state.git", store.Options{NoSync: !sync})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.Set(context.Background(), fmt.Sprintf("docs/doc-%04d.json", i%1000), "status.value", []byte(fmt.Sprint(i+5000)), store.WriteOptions{Agent: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
