// Package cache is the cache tier of the tiered state specification:
// key-value entries with an optional time to live, kept under the store's
// git directory (aiwg/cache/) and never versioned, never fetched, never
// pushed. A cache is not history: what it holds is what this machine
// computed lately, worth keeping warm across runs and worth nothing to a
// clone, so each clone has its own (and the server's hook refuses a
// commit that carries one under the path the tier reserves).
//
// Each agent has a cache of its own: an entry is one file named by the
// hash of its agent and key (prefixed by a tag of the agent's), so no
// agent reads, replaces or removes another's entry. It is written whole
// to a temporary file and renamed into place, so a reader in any process
// sees an entry as one write left it, never a torn one. Writers take a
// lock (flock) to keep the cache's size within limits.max_cache_bytes,
// counted as the disk counts it (each file in whole blocks): past it, the
// least recently used entries are evicted (a read marks an entry used),
// found by the directory's names, sizes and times alone, never by reading
// every entry. An agent holding more than its share (a quarter of the
// bound) evicts only its own entries. Readers take no lock.
package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/internal/sandbox"
	"github.com/aiwg/aiwg-state/internal/sysfile"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
)

// Dir is where a store's cache is kept, inside its git directory.
const Dir = "aiwg/cache"

// ReservedPath is the tree path reserved for the cache tier: no commit
// may hold a file under it (package frame's Guard and ValidateFile check
// both tiers' paths).
const ReservedPath = ".aiwg/cache/"

const maxKey = 1024

var (
	// ErrInvalid: a key or value that is not one.
	ErrInvalid = errors.New("invalid cache argument")
	// ErrNotFound: no entry for the key (or it has expired).
	ErrNotFound = store.ErrNotFound
)

// Entry describes one cache entry.
type Entry struct {
	Key string `json:"key"`
	// Agent is whose cache the entry is in ("": a caller that names none).
	Agent string `json:"agent,omitempty"`
	// Expires is zero for an entry without a time to live.
	Expires time.Time `json:"expires,omitzero"`
	Set     time.Time `json:"set"`
	Size    int64     `json:"size"`
}

// LimitError is a value larger than the whole cache may hold.
type LimitError struct {
	Key   string
	Size  int64
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("cache entry %q of %d bytes; the cache holds %d (limits.max_cache_bytes): %v", e.Key, e.Size, e.Limit, store.ErrLimit)
}

func (e *LimitError) Unwrap() error { return store.ErrLimit }

// Cache is one store's cache on this machine.
type Cache struct {
	dir string
	max int64
	// check bounds an agent's use (its sandbox profile); nil: none.
	check func(ctx context.Context, agent string, size int64) error
	now   func() time.Time
}

// New is the cache kept in dir, bounded to maxBytes (keys' and values'
// sizes); no profile bounds its callers.
func New(dir string, maxBytes int64) *Cache {
	return &Cache{dir: dir, max: maxBytes, now: time.Now}
}

// Of is st's cache, bounded by its manifest's limits.max_cache_bytes, its
// callers by their sandbox profiles.
func Of(st *store.Store) *Cache {
	c := New(filepath.Join(st.Dir(), Dir), st.TierLimits().MaxCacheBytes)
	c.check = func(ctx context.Context, agent string, size int64) error {
		pr, err := sandbox.ProfileOf(ctx, st, agent)
		if err != nil {
			return err
		}
		return pr.CheckCache(agent, size)
	}
	return c
}

// Options are who asks; for a set, the entry's time to live (0: none).
type Options struct {
	Agent string
	TTL   time.Duration
}

func checkKey(key string) error {
	switch {
	case key == "":
		return errkind.Errorf(ErrInvalid, "empty cache key")
	case len(key) > maxKey:
		return errkind.Errorf(ErrInvalid, "cache key of %d bytes; the most is %d", len(key), maxKey)
	case !utf8.ValidString(key) || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errkind.Errorf(ErrInvalid, "cache key %q holds a control character or is not UTF-8", key)
	}
	return nil
}

// file is the entry of agent's key: the agent's tag, then the hash of
// both, so that the directory's names say whose each entry is.
func (c *Cache) file(agent, key string) string {
	sum := sha256.Sum256([]byte(agent + "\x00" + key))
	return filepath.Join(c.dir, agentTag(agent)+"-"+hex.EncodeToString(sum[:]))
}

// agentTag names an agent's entries in the directory.
func agentTag(agent string) string {
	sum := sha256.Sum256([]byte("agent\x00" + agent))
	return hex.EncodeToString(sum[:4])
}

// blockSize is the unit an entry's file is counted in: the disk gives a
// file of one byte a whole block (and an inode), so a bound counted in
// keys' and values' bytes alone would let a cache of tiny entries take a
// thousand times its bound.
const blockSize = 4096

// onDisk is what a file of n bytes takes on disk, as the bound counts it.
func onDisk(n int64) int64 { return (n/blockSize + 1) * blockSize }

// share is the part of the bound an agent may hold and still evict other
// agents' entries: past it, its writes evict its own.
func (c *Cache) share() int64 { return c.max / 4 }

func (c *Cache) allowed(ctx context.Context, agent string, size int64) error {
	if c.check == nil {
		return nil
	}
	return c.check(ctx, agent, size)
}

// An entry's file is one line of JSON (its Entry) and the value.
func encode(e Entry, value []byte) []byte {
	head, _ := json.Marshal(e)
	return append(append(head, '\n'), value...)
}

func decode(data []byte) (Entry, []byte, bool) {
	head, value, ok := bytes.Cut(data, []byte{'\n'})
	var e Entry
	if !ok || json.Unmarshal(head, &e) != nil || e.Key == "" {
		return e, nil, false
	}
	return e, value, true
}

func (e Entry) expired(now time.Time) bool { return !e.Expires.IsZero() && !now.Before(e.Expires) }

// Set keeps value (JSON) under key, replacing any entry of that key,
// evicting the least recently used entries when the cache would pass its
// bound.
func (c *Cache) Set(ctx context.Context, key string, value []byte, o Options) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if !json.Valid(value) {
		return errkind.Errorf(objects.ErrInvalidJSON, "cache value for %q is not JSON", key)
	}
	value = bytes.TrimSpace(value)
	size := int64(len(key) + len(value))
	if err := c.allowed(ctx, o.Agent, int64(len(value))); err != nil {
		return err
	}
	if o.TTL > MaxTTL {
		return errkind.Errorf(ErrInvalid, "a cache entry's time to live of %s; the most is %s", o.TTL, MaxTTL)
	}
	now := c.now()
	e := Entry{Key: key, Agent: o.Agent, Set: now, Size: size}
	if o.TTL > 0 {
		e.Expires = now.Add(o.TTL)
	}
	data := encode(e, value)
	if cost := onDisk(int64(len(data))); cost > c.max {
		return &LimitError{Key: key, Size: cost, Limit: c.max}
	}
	l, err := c.lock()
	if err != nil {
		return err
	}
	defer l.unlock()
	path := c.file(o.Agent, key)
	var old int64
	if info, err := os.Stat(path); err == nil {
		old = onDisk(info.Size())
	}
	// Counted before the write, which a count afresh would see already.
	used, err := c.usage(l)
	if err != nil {
		return err
	}
	if err := c.writeFile(path, data); err != nil {
		return err
	}
	used += onDisk(int64(len(data))) - old
	if used > c.max {
		used, err = c.evict(path, agentTag(o.Agent))
		if err != nil {
			return err
		}
	}
	return c.setUsage(l, used)
}

// MaxTTL is the longest time to live a cache entry may have: a cache
// holds what is worth keeping warm, not what must last.
const MaxTTL = 30 * 24 * time.Hour

// writeFile writes data to a temporary file and renames it to path: a
// reader sees the old entry or the new one, whole.
func (c *Cache) writeFile(path string, data []byte) error {
	return sysfile.Replace(c.dir, path, data)
}

// Get is the value under key, and its entry. A read marks the entry used
// (its file's modification time), which is what eviction goes by.
func (c *Cache) Get(ctx context.Context, key string, o Options) ([]byte, Entry, error) {
	if err := checkKey(key); err != nil {
		return nil, Entry{}, err
	}
	if err := c.allowed(ctx, o.Agent, 0); err != nil {
		return nil, Entry{}, err
	}
	path := c.file(o.Agent, key)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Entry{}, errkind.Errorf(ErrNotFound, "no cache entry %q", key)
	}
	if err != nil {
		return nil, Entry{}, err
	}
	e, value, ok := decode(data)
	now := c.now()
	if !ok || e.Key != key || e.Agent != o.Agent || e.expired(now) {
		return nil, Entry{}, errkind.Errorf(ErrNotFound, "no cache entry %q (expired, or evicted)", key)
	}
	_ = os.Chtimes(path, now, now) // used: a lost race with a removal is harmless
	return value, e, nil
}

// Remove deletes the entry under key; no entry is no error.
func (c *Cache) Remove(ctx context.Context, key string, o Options) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	if err := c.allowed(ctx, o.Agent, 0); err != nil {
		return false, err
	}
	l, err := c.lock()
	if err != nil {
		return false, err
	}
	defer l.unlock()
	path := c.file(o.Agent, key)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	if used, err := c.usage(l); err == nil {
		_ = c.setUsage(l, max(used-onDisk(info.Size()), 0))
	}
	return true, nil
}

// PruneResult says what Prune removed and what the cache holds after.
type PruneResult struct {
	Removed int   `json:"removed"`
	Freed   int64 `json:"freed"`
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// Prune removes every expired entry (and damaged or stray files), and
// counts the cache's size afresh.
func (c *Cache) Prune(ctx context.Context) (PruneResult, error) {
	l, err := c.lock()
	if err != nil {
		return PruneResult{}, err
	}
	defer l.unlock()
	var res PruneResult
	now := c.now()
	es, err := c.entries("")
	if err != nil {
		return res, err
	}
	for _, f := range es {
		if f.ok && !f.e.expired(now) {
			res.Entries++
			res.Bytes += f.disk
			continue
		}
		if os.Remove(f.path) == nil {
			res.Removed++
			res.Freed += f.disk
		}
	}
	return res, c.setUsage(l, res.Bytes)
}

// List is the agent's live entries, by key.
func (c *Cache) List(ctx context.Context, o Options) ([]Entry, error) {
	if err := c.allowed(ctx, o.Agent, 0); err != nil {
		return nil, err
	}
	es, err := c.entries(agentTag(o.Agent) + "-")
	if err != nil {
		return nil, err
	}
	now := c.now()
	out := []Entry{}
	for _, f := range es {
		if f.ok && !f.e.expired(now) && f.e.Agent == o.Agent {
			out = append(out, f.e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

type file struct {
	path string
	e    Entry
	used time.Time
	disk int64 // the file's size on disk, as the bound counts it
	ok   bool
}

// entries reads every entry file whose name starts with prefix ("": all;
// temporary files of a crashed writer older than a minute count as
// damaged, to be removed).
func (c *Cache) entries(prefix string) ([]file, error) {
	des, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []file
	now := c.now()
	for _, de := range des {
		name := de.Name()
		if name == "lock" {
			continue
		}
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		path := filepath.Join(c.dir, name)
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if strings.HasPrefix(name, "tmp-") {
			if now.Sub(info.ModTime()) > time.Minute {
				out = append(out, file{path: path})
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		e, _, ok := decode(data)
		ok = ok && filepath.Base(c.file(e.Agent, e.Key)) == name
		out = append(out, file{path: path, e: e, used: info.ModTime(), disk: onDisk(info.Size()), ok: ok})
	}
	return out, nil
}

// evict removes the least recently used entries until the cache is
// an eighth under its bound, never keep (the entry just written). While the
// writer (its agent's tag) holds more than its share, only its own
// entries go. It reads the directory's names, sizes and times, never the
// entries (an expired entry, never read, ages like any other; prune
// removes it). It returns the size left. The lock is held.
func (c *Cache) evict(keep, tag string) (int64, error) {
	es, err := c.stats()
	if err != nil {
		return 0, err
	}
	// mine is the writer's entries but the one just written, which stays
	// (it fits the bound alone: Set refused it otherwise).
	var used, mine int64
	for _, f := range es {
		used += f.disk
		if f.tag == tag && f.path != keep {
			mine += f.disk
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].used.Before(es[j].used) })
	// Down to a low-water mark an eighth under the bound, so that a cache
	// at its bound lists its directory once per many writes, not at each.
	target := c.max - c.max/8
	gone := make([]bool, len(es))
	for progress := true; used > target && progress; {
		progress = false
		for i, f := range es {
			if used <= target {
				break
			}
			if gone[i] || f.path == keep || (f.tag != tag && mine > c.share()) {
				continue
			}
			if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
				gone[i], progress = true, true
				used -= f.disk
				if f.tag == tag {
					mine -= f.disk
				}
			}
		}
	}
	return used, nil
}

type stat struct {
	path, tag string
	used      time.Time
	disk      int64
}

// stats lists the entry files by name, size and time, reading none of
// them; a crashed writer's temporary file older than a minute is removed.
func (c *Cache) stats() ([]stat, error) {
	des, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := c.now()
	var out []stat
	for _, de := range des {
		name := de.Name()
		if name == "lock" {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(c.dir, name)
		if strings.HasPrefix(name, "tmp-") {
			if now.Sub(info.ModTime()) > time.Minute {
				os.Remove(path)
			}
			continue
		}
		tag, _, _ := strings.Cut(name, "-")
		out = append(out, stat{path: path, tag: tag, used: info.ModTime(), disk: onDisk(info.Size())})
	}
	return out, nil
}

// lock takes the cache's writers' lock. The lock file holds the writers'
// count of the cache's size (usage), which only its holder reads or
// writes.
func (c *Cache) lock() (*lockFile, error) {
	if err := os.MkdirAll(c.dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(c.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return &lockFile{f}, nil
}

// lockFile is the writers' lock, held.
type lockFile struct{ f *os.File }

func (l *lockFile) unlock() { l.f.Close() }

// usage is the cache's size as the writers keep count of it (the lock is
// held); a missing or damaged count (a writer died mid-way) is counted
// afresh.
func (c *Cache) usage(l *lockFile) (int64, error) {
	if l != nil {
		buf := make([]byte, 32)
		n, _ := l.f.ReadAt(buf, 0)
		if v, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64); err == nil && v >= 0 {
			return v, nil
		}
	}
	es, err := c.stats()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range es {
		n += f.disk
	}
	return n, nil
}

func (c *Cache) setUsage(l *lockFile, n int64) error {
	line := strconv.FormatInt(n, 10) + "\n"
	if _, err := l.f.WriteAt([]byte(line), 0); err != nil {
		return err
	}
	return l.f.Truncate(int64(len(line)))
}
