package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/store"
)

var ctx = context.Background()

func TestSetGetRemove(t *testing.T) {
	c := New(t.TempDir(), 1<<20)
	if err := c.Set(ctx, "monitors/last_run", []byte(` {"at": 3} `), Options{}); err != nil {
		t.Fatal(err)
	}
	v, e, err := c.Get(ctx, "monitors/last_run", Options{})
	if err != nil || string(v) != `{"at": 3}` || e.Key != "monitors/last_run" || !e.Expires.IsZero() {
		t.Fatalf("Get = %s %+v %v", v, e, err)
	}
	if err := c.Set(ctx, "monitors/last_run", []byte(`4`), Options{}); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := c.Get(ctx, "monitors/last_run", Options{}); string(v) != "4" {
		t.Fatalf("replaced value: %s", v)
	}
	if ok, err := c.Remove(ctx, "monitors/last_run", Options{}); !ok || err != nil {
		t.Fatalf("Remove = %v %v", ok, err)
	}
	if _, _, err := c.Get(ctx, "monitors/last_run", Options{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Remove = %v", err)
	}
	if ok, err := c.Remove(ctx, "monitors/last_run", Options{}); ok || err != nil {
		t.Fatalf("second Remove = %v %v", ok, err)
	}
}

func TestRefusals(t *testing.T) {
	c := New(t.TempDir(), 100)
	for name, err := range map[string]error{
		"empty key":       c.Set(ctx, "", []byte("1"), Options{}),
		"control in key":  c.Set(ctx, "a\nb", []byte("1"), Options{}),
		"long key":        c.Set(ctx, strings.Repeat("k", maxKey+1), []byte("1"), Options{}),
		"not JSON":        c.Set(ctx, "k", []byte("{"), Options{}),
		"over the bound":  c.Set(ctx, "k", []byte(`"`+strings.Repeat("x", 100)+`"`), Options{}),
		"key in get":      func() error { _, _, err := c.Get(ctx, "", Options{}); return err }(),
		"key in remove":   func() error { _, err := c.Remove(ctx, "\x00", Options{}); return err }(),
		"not JSON (text)": c.Set(ctx, "k", []byte("hello"), Options{}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	var le *LimitError
	if err := c.Set(ctx, "k", []byte(`"`+strings.Repeat("x", 100)+`"`), Options{}); !errors.As(err, &le) || !errors.Is(err, store.ErrLimit) {
		t.Errorf("over the bound: %v", err)
	}
}

func TestTTL(t *testing.T) {
	c := New(t.TempDir(), 1<<20)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	if err := c.Set(ctx, "short", []byte("1"), Options{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "long", []byte("2"), Options{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "forever", []byte("3"), Options{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(59 * time.Second)
	if _, _, err := c.Get(ctx, "short", Options{}); err != nil {
		t.Fatalf("before its TTL: %v", err)
	}
	now = now.Add(time.Second)
	if _, _, err := c.Get(ctx, "short", Options{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("at its TTL: %v", err)
	}
	if es, _ := c.List(ctx, Options{}); len(es) != 2 {
		t.Fatalf("List = %+v", es)
	}
	res, err := c.Prune(ctx)
	if err != nil || res.Removed != 1 || res.Entries != 2 {
		t.Fatalf("Prune = %+v %v", res, err)
	}
	now = now.Add(24 * time.Hour)
	if res, _ := c.Prune(ctx); res.Removed != 1 || res.Entries != 1 {
		t.Fatalf("second Prune = %+v", res)
	}
	if _, _, err := c.Get(ctx, "forever", Options{}); err != nil {
		t.Fatalf("an entry without TTL: %v", err)
	}
}

// TestLRUEviction: past its bound the cache drops the entries least
// recently used, a read counting as a use, never the one just written,
// down to an eighth under the bound.
func TestLRUEviction(t *testing.T) {
	c := New(t.TempDir(), 4*blockSize) // room for four small entries
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { now = now.Add(time.Second); return now }
	set := func(k string) {
		t.Helper()
		if err := c.Set(ctx, k, []byte(`"vvvvvvvv"`), Options{}); err != nil {
			t.Fatal(err)
		}
		// The file's time is what eviction reads: give it the fake clock's.
		os.Chtimes(c.file("", k), now, now)
	}
	for _, k := range []string{"k1", "k2", "k3", "k4"} {
		set(k)
	}
	if _, _, err := c.Get(ctx, "k1", Options{}); err != nil { // k1 used: k2 is now the oldest
		t.Fatal(err)
	}
	set("k5")
	have := map[string]bool{}
	es, _ := c.List(ctx, Options{})
	for _, e := range es {
		have[e.Key] = true
	}
	// Down to an eighth under the bound: the two least recently used go.
	if have["k2"] || have["k3"] || !have["k1"] || !have["k4"] || !have["k5"] || len(es) != 3 {
		t.Fatalf("after eviction: %+v", es)
	}
	if u := usageOf(t, c); u != 3*blockSize {
		t.Fatalf("usage %d, want three blocks", u)
	}
}

// TestBoundCountsTheDisk: an entry counts as the disk holds it, in whole
// blocks, so that tiny entries cannot take a thousand times the bound;
// the count matches what prune finds.
func TestBoundCountsTheDisk(t *testing.T) {
	dir := t.TempDir()
	c := New(dir, 64*blockSize)
	for i := range 500 {
		if err := c.Set(ctx, fmt.Sprint(i), []byte("1"), Options{Agent: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	des, _ := os.ReadDir(dir)
	if len(des) > 64+1 { // the entries, and the lock
		t.Fatalf("%d files under a bound of 64 blocks", len(des))
	}
	res, err := c.Prune(ctx)
	if err != nil || res.Bytes > 64*blockSize || res.Bytes != usageOf(t, c) {
		t.Fatalf("prune %+v %v, usage %d", res, err, usageOf(t, c))
	}
	if err := c.Set(ctx, "k", []byte("1"), Options{TTL: MaxTTL + time.Hour}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a ttl past the most: %v", err)
	}
}

// TestAgentsHaveTheirOwnCache: an agent reads, replaces and removes only
// its own entries; one agent's flood evicts its own entries once it holds
// more than its share, never all of another's.
func TestAgentsHaveTheirOwnCache(t *testing.T) {
	c := New(t.TempDir(), 40*blockSize)
	alice, bob := Options{Agent: "alice"}, Options{Agent: "bob"}
	if err := c.Set(ctx, "monitors/cooldown", []byte(`"2026-11-26T12:00:00Z"`), alice); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "monitors/cooldown", bob); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob reads alice's entry: %v", err)
	}
	if err := c.Set(ctx, "monitors/cooldown", []byte(`"1970-01-01T00:00:00Z"`), bob); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Remove(ctx, "monitors/cooldown", Options{Agent: "carol"}); ok {
		t.Fatal("carol removed an entry")
	}
	if v, _, err := c.Get(ctx, "monitors/cooldown", alice); err != nil || string(v) != `"2026-11-26T12:00:00Z"` {
		t.Fatalf("alice's entry after bob's set: %s %v", v, err)
	}
	if es, _ := c.List(ctx, bob); len(es) != 1 || es[0].Agent != "bob" {
		t.Fatalf("bob's list: %+v", es)
	}
	for i := range 5 {
		c.Set(ctx, fmt.Sprint("a", i), []byte("1"), alice)
	}
	for i := range 500 {
		if err := c.Set(ctx, fmt.Sprint("flood-", i), []byte("1"), bob); err != nil {
			t.Fatal(err)
		}
	}
	if es, _ := c.List(ctx, alice); len(es) != 6 {
		t.Fatalf("bob's flood evicted alice's entries: %d left", len(es))
	}
	if u := usageOf(t, c); u > 40*blockSize {
		t.Fatalf("usage %d past the bound", u)
	}
}

// TestHelperProcess is a child of TestConcurrentProcesses: it sets and
// reads entries of a shared cache and fails on any value that is not one
// whole write.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("AIWG_CACHE_HAMMER")
	if dir == "" {
		t.Skip("run by TestConcurrentProcesses")
	}
	id, _ := strconv.Atoi(os.Getenv("AIWG_CACHE_WORKER"))
	c := New(dir, 64<<10)
	for i := 0; i < 150; i++ {
		key := fmt.Sprintf("k%d", (i+id)%6)
		if err := c.Set(ctx, key, value(key, id, i), Options{}); err != nil {
			t.Fatalf("set: %v", err)
		}
		for j := 0; j < 3; j++ {
			k := fmt.Sprintf("k%d", (i+j)%6)
			v, _, err := c.Get(ctx, k, Options{})
			if errors.Is(err, store.ErrNotFound) {
				continue // evicted
			}
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if err := whole(k, v); err != nil {
				t.Fatalf("torn read of %s: %v", k, err)
			}
		}
	}
}

// value is a value whose parts say what it must be: a padding of one
// letter, as long as it says, which a torn read would break.
func value(key string, worker, i int) []byte {
	n := 2000 + (worker*131+i*17)%9000
	b, _ := json.Marshal(map[string]any{"key": key, "worker": worker, "n": n, "pad": strings.Repeat(string(rune('a'+worker)), n)})
	return b
}

func whole(key string, v []byte) error {
	var m struct {
		Key    string `json:"key"`
		Worker int    `json:"worker"`
		N      int    `json:"n"`
		Pad    string `json:"pad"`
	}
	if err := json.Unmarshal(v, &m); err != nil {
		return err
	}
	if m.Key != key || len(m.Pad) != m.N || m.Pad != strings.Repeat(string(rune('a'+m.Worker)), m.N) {
		return fmt.Errorf("value of %s is not one write's", m.Key)
	}
	return nil
}

// TestConcurrentProcesses: several processes set and get the same keys
// of one cache, small enough that they evict each other's entries all
// the time; none reads a torn value, and the cache stays within bounds.
func TestConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "AIWG_CACHE_HAMMER="+dir, "AIWG_CACHE_WORKER="+strconv.Itoa(w))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("worker %d: %v\n%s", w, err, out)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	c := New(dir, 64<<10)
	es, err := c.List(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range es {
		total += e.Size
		v, _, err := c.Get(ctx, e.Key, Options{})
		if err != nil || whole(e.Key, v) != nil {
			t.Errorf("%s: %v", e.Key, err)
		}
	}
	total = diskOf(t, c) // the bound counts the disk
	if total > 64<<10 {
		t.Errorf("the cache holds %d bytes, past its bound", total)
	}
	if u := usageOf(t, c); u != total {
		t.Errorf("usage count %d, entries %d", u, total)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// diskOf is the entries' size as the bound counts it.
func diskOf(t *testing.T, c *Cache) int64 {
	t.Helper()
	st, err := c.stats()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range st {
		n += f.disk
	}
	return n
}

// usageOf is the writers' count of the cache's size.
func usageOf(t *testing.T, c *Cache) int64 {
	t.Helper()
	l, err := c.lock()
	if err != nil {
		t.Fatal(err)
	}
	defer l.unlock()
	data, _ := os.ReadFile(filepath.Join(c.dir, "lock"))
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatalf("the count %q: %v", data, err)
	}
	return n
}

// TestConcurrentGoroutines: one Cache shared by goroutines (a server's
// tool calls); run under -race it checks they share nothing unguarded.
func TestConcurrentGoroutines(t *testing.T) {
	c := New(t.TempDir(), 32<<10)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				key := fmt.Sprintf("k%d", (i+w)%5)
				if err := c.Set(ctx, key, value(key, w, i), Options{}); err != nil {
					t.Error(err)
					return
				}
				if v, _, err := c.Get(ctx, key, Options{}); err == nil && whole(key, v) != nil {
					t.Errorf("torn read of %s", key)
				}
			}
		}(w)
	}
	wg.Wait()
	total := diskOf(t, c)
	if u := usageOf(t, c); u != total || total > 32<<10 {
		t.Errorf("usage %d, entries %d, bound %d", u, total, 32<<10)
	}
}
