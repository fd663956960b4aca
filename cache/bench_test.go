package cache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/store"
)

// The cache against a plain file, for a 1 KiB value: what the cache's
// atomic replace, its size count under a lock, and a read's header and
// LRU mark cost over os.WriteFile and os.ReadFile. Interleave rounds to
// compare (each run of the command runs all four):
//
//	for i in 1 2 3 4 5; do go test -run '^$' -bench 'Set|Get|File' -benchtime 3000x ./cache; done

var benchValue = []byte(`"` + strings.Repeat("x", 1022) + `"`)

func BenchmarkCacheSet(b *testing.B) {
	c := New(b.TempDir(), 64<<20)
	for i := 0; i < b.N; i++ {
		if err := c.Set(ctx, "bench/key", benchValue, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCacheGet(b *testing.B) {
	c := New(b.TempDir(), 64<<20)
	if err := c.Set(ctx, "bench/key", benchValue, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := c.Get(ctx, "bench/key", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreCacheGet is a get as a store's agent makes it: with the
// sandbox profile looked up (the policy at the branch head, kept parsed).
func BenchmarkStoreCacheGet(b *testing.B) {
	st, err := store.Init(context.Background(), filepath.Join(b.TempDir(), "s.git"), store.InitOptions{Options: store.Options{NoSync: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	c := Of(st)
	if err := c.Set(ctx, "bench/key", benchValue, Options{Agent: "a"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := c.Get(ctx, "bench/key", Options{Agent: "a"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFileWrite(b *testing.B) {
	path := filepath.Join(b.TempDir(), "value")
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(path, benchValue, 0o666); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFileRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "value")
	if err := os.WriteFile(path, benchValue, 0o666); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
