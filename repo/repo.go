package repo

import (
	"compress/zlib"
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
)

// Options tune a Repo.
type Options struct {
	// Sync makes a commit visible only after its objects and ref are on
	// disk (fsync of files and directories). Off trades crash durability of
	// the last few writes for speed; the store stays consistent either way.
	Sync bool
	// SyncOff, when set, is asked once, at the first write that would
	// sync, whether the store's own settings turn Sync off. Such a
	// setting lives in the store's files, whose format this package does
	// not know; asking at the first write spares a command that only
	// reads the cost of reading it.
	SyncOff func() bool
	// Compression is the zlib level of written objects. Default: none,
	// since the tail pack is rewritten on every commit and git's repack
	// recompresses and deltifies what it rolls up (git accepts any level).
	Compression int
	// LockTimeout bounds how long a writer waits for a ref lock held by
	// another writer before failing with ErrLocked. Default 10s.
	LockTimeout time.Duration
	// CacheEntries bounds the decoded-tree and object cache. Default 4096.
	CacheEntries int
	// CacheBytes bounds the same cache by the memory its entries take
	// (estimated). Default 64 MiB: a store whose directories hold
	// thousands of files writes a tree of hundreds of kilobytes per
	// commit, and 4,096 of them would hold gigabytes.
	CacheBytes int64
}

func (o *Options) fill() {
	if o.Compression == 0 {
		o.Compression = zlib.NoCompression
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = 10 * time.Second
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = 4096
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 64 << 20
	}
}

// Repo is an open bare repository. It is safe for concurrent use by
// goroutines (reads of the object database are serialized here: the object
// reader keeps one decompressor and its mappings); several processes may
// open the same repository.
type Repo struct {
	dir  string
	opts Options
	// syncOnce settles opts.Sync (see Options.SyncOff and syncing).
	syncOnce sync.Once

	mu    sync.Mutex // guards objs, cache and lastTrees
	objs  *objReader
	cache *lru
	// walkLinks: the parents and times history walks read (commitlinks.go).
	walkLinks commitLinks
	// lastTrees holds the encoded trees of this process's last commit:
	// the next commit's delta bases, which the cache keeps only decoded
	// (re-encoding a 1,000-entry directory is 40 KB a commit). Only the
	// last commit's, so a store of big trees does not hold every tree
	// twice.
	lastTrees map[plumbing.Hash][]byte

	zlibPool   sync.Pool
	background sync.WaitGroup // maintenance started by this Repo
	// maintainingHere: a roll-up this Repo started is running.
	maintainingHere atomic.Bool

	// packMu serializes this process's pack writes: a write extends the
	// tail pack's buffers in place.
	packMu sync.Mutex
	// packAdded is set when a write adds a pack rather than replacing the
	// tail: the only time this process makes the pack count grow.
	packAdded atomic.Bool
	// packsSeen is how many packs the last search for a tail listed: packs
	// also pile up without any write adding one, when writers are killed
	// between writing a new tail and removing the old.
	packsSeen atomic.Int64
	tailMu    sync.Mutex
	tail      *tailPack // the last tail pack this process wrote
	// tailFilled: the last pack this process wrote is full (see
	// currentTail).
	tailFilled bool
	// foundTail is the last tail found on disk rather than written here:
	// git may have written it, with files beside it (see removePack).
	foundTail plumbing.Hash
	// inFlight counts the packs this process has put in place under a
	// .keep of its own and whose commit is not yet published (see
	// writePack): such a pack must not be superseded by a copy of it,
	// which a repack could roll up without the objects the kept one
	// holds. Under tailMu.
	inFlight map[plumbing.Hash]int
	// keepMade: this process's in-flight keep file, which every
	// in-flight .keep links to, was written (see linkKeep).
	keepMade bool

	// superseded are the tails this process replaced, oldest first,
	// waiting out supersededGrace before they are removed.
	supMu      sync.Mutex
	superseded []supersededTail
	listed     *listings // see listings.go; under supMu

	lockMu   sync.Mutex
	lockF    *os.File // see lockFile
	lockPath string

	// precious: the repository forbids deleting objects
	// (extensions.preciousObjects); see writable.
	precious bool

	partial promisor // see partial.go
	shallow shallow
	remotes remoteConfig // see remoteconfig.go
}

// Init creates a bare repository at dir whose HEAD points at branch. It
// refuses a directory that already holds a repository.
func Init(ctx context.Context, dir, branch string, opts Options) (*Repo, error) {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil, fmt.Errorf("init %s: %w", dir, os.ErrExist)
	}
	for _, d := range []string{"objects/pack", "objects/info", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
	}
	// The config marks the repository bare and keeps git's automatic gc
	// from repacking under our writers at every CLI call; aiwg-state runs
	// its own cheaper geometric maintenance (see Maintain).
	config := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n" +
		"[gc]\n\tauto = 0\n[receive]\n\tdenyNonFastForwards = false\n"
	files := map[string]string{
		"config":      config,
		"description": "aiwg-state store\n",
		"HEAD":        "ref: refs/heads/" + branch + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
	}
	return Open(ctx, dir, opts)
}

// Open opens the bare repository at dir.
func Open(_ context.Context, dir string, opts Options) (*Repo, error) {
	opts.fill()
	fi, err := os.Stat(filepath.Join(dir, "objects"))
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s has no git object database", ErrNotStore, dir)
	}
	format, err := checkFormat(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &Repo{dir: abs, opts: opts, objs: newObjReader(abs), cache: newLRU(opts.CacheEntries, opts.CacheBytes), precious: format.precious}, nil
}

// Dir is the repository's directory (the git dir).
func (r *Repo) Dir() string { return r.dir }

// Options returns the options the repository was opened with, Sync as
// it applies to writes.
func (r *Repo) Options() Options {
	r.syncing()
	return r.opts
}

// SetSync turns fsync of writes on or off, overriding Options.SyncOff.
// Call it before the first write.
func (r *Repo) SetSync(on bool) {
	r.syncOnce.Do(func() {}) // an explicit setting is not asked about
	r.opts.Sync = on
}

// syncing reports whether writes are synced, asking Options.SyncOff the
// first time.
func (r *Repo) syncing() bool {
	r.syncOnce.Do(func() {
		if r.opts.Sync && r.opts.SyncOff != nil && r.opts.SyncOff() {
			r.opts.Sync = false
		}
	})
	return r.opts.Sync
}

// Close waits for maintenance this Repo started and releases file
// descriptors.
func (r *Repo) Close() error {
	r.background.Wait()
	r.closeListings()
	freeHeld()
	r.closeLockFile()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objs.close()
	return nil
}

// ReadObject returns an object's type and body.
func (r *Repo) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.cache.get(h); ok {
		if raw, ok := o.(rawObject); ok {
			return raw.typ, raw.body, nil
		}
	}
	if o, ok := pendingObject(r.dir, h); ok {
		return o.typ, o.body, nil
	}
	t, body, err := r.readObjectLocked(h)
	if err != nil {
		return 0, nil, err
	}
	if t != plumbing.BlobObject || len(body) <= maxCachedBlob {
		r.cache.put(h, rawObject{typ: t, hash: h, body: body})
	}
	return t, body, nil
}

func (r *Repo) readObjectLocked(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	var lastErr error
	prev := ""
	// While `git repack` or another writer replaces packs, an object can be
	// missing from every listing for a moment. A miss is believed only once
	// the pack directory reads the same on two scans in a row; until then
	// it is retried with backoff, so a concurrent gc never looks like a
	// missing document.
	for attempt := 0; attempt < 12; attempt++ {
		if attempt > 0 {
			// Not holding r.mu: every other read and write of this
			// process would wait out the backoff too.
			r.mu.Unlock()
			time.Sleep(min(time.Duration(1<<attempt)*time.Millisecond, 200*time.Millisecond))
			r.mu.Lock()
		}
		t, body, err := r.objs.read(h)
		if err == nil {
			return t, body, nil
		}
		lastErr = err
		sig := r.objs.packNames()
		if attempt > 0 && sig == prev {
			break // the same answer from the same packs: believe it
		}
		prev = sig
	}
	if errors.Is(lastErr, errNotHere) {
		if err := r.objs.damaged(); err != nil {
			return 0, nil, fmt.Errorf("object %s not found, and %w", h, err)
		}
		// Not "not found": whatever named h (a ref, a commit, a tree)
		// says it exists. A partial clone fetches it (without r.mu: the
		// fetch takes a while); elsewhere it is damage.
		r.mu.Unlock()
		err := r.missingObject(h)
		r.mu.Lock()
		if err == nil {
			if t, body, err := r.objs.read(h); err == nil {
				return t, body, nil
			}
			err = &MissingObjectError{Hash: h, Promisor: true, Remote: r.partial.remotes[0], Cause: errors.New("the remote did not send it")}
		}
		return 0, nil, err
	}
	return 0, nil, fmt.Errorf("object %s: %w", h, lastErr)
}

// ReadBlob returns a blob's content.
func (r *Repo) ReadBlob(h plumbing.Hash) ([]byte, error) {
	t, body, err := r.ReadObject(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.BlobObject {
		return nil, fmt.Errorf("object %s is a %s, not a blob: %w", h, t, ErrNotFound)
	}
	return body, nil
}

// ReadTree returns a decoded tree; decoded trees are cached, since every
// write re-reads the trees along its path.
func (r *Repo) ReadTree(h plumbing.Hash) (*Tree, error) {
	if h == emptyTree {
		return &Tree{}, nil
	}
	r.mu.Lock()
	if o, ok := r.cache.get(treeKey(h)); ok {
		if t, ok := o.(*Tree); ok {
			r.mu.Unlock()
			return t, nil
		}
	}
	r.mu.Unlock()
	t, body, err := r.ReadObject(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, not a tree: %w", h, t, ErrNotFound)
	}
	tree, err := decodeTree(body)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	r.mu.Lock()
	r.cache.put(treeKey(h), tree)
	r.mu.Unlock()
	return tree, nil
}

// remember caches objects this process wrote, so the next transaction
// reads its own trees without a trip through the pack index.
func (r *Repo) remember(objs []rawObject, trees map[plumbing.Hash]*Tree) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for h, t := range trees {
		r.cache.put(treeKey(h), t)
	}
	r.lastTrees = map[plumbing.Hash][]byte{}
	for _, o := range objs {
		switch {
		case o.typ == plumbing.TreeObject:
			r.lastTrees[o.hash] = o.body
		case len(o.body) <= maxCachedBlob:
			r.cache.put(o.hash, o)
		}
	}
	// The storage does not know our new pack until a lookup misses and
	// readObjectLocked re-indexes; re-indexing here would re-read every
	// .idx on the next read.
}

// maxCachedBlob keeps large values out of the cache; small documents are
// the ones read back on every write.
const maxCachedBlob = 16 << 10

var emptyTree = hashObject(plumbing.TreeObject, nil)

// lru is a small least-recently-used cache of decoded objects, bounded
// both by its number of entries and by the memory they take, so that a
// long-running process (serve, the MCP server) stays flat however large
// the store's trees grow.
type lru struct {
	max      int
	maxBytes int64
	bytes    int64
	ll       *list.List
	items    map[plumbing.Hash]*list.Element
}

type lruEntry struct {
	key  plumbing.Hash
	val  any
	size int64
}

func newLRU(max int, maxBytes int64) *lru {
	return &lru{max: max, maxBytes: maxBytes, ll: list.New(), items: make(map[plumbing.Hash]*list.Element)}
}

func (c *lru) get(k plumbing.Hash) (any, bool) {
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruEntry).val, true
	}
	return nil, false
}

func (c *lru) put(k plumbing.Hash, v any) {
	size := sizeOf(v)
	if e, ok := c.items[k]; ok {
		le := e.Value.(*lruEntry)
		c.bytes += size - le.size
		le.val, le.size = v, size
		c.ll.MoveToFront(e)
	} else {
		c.items[k] = c.ll.PushFront(&lruEntry{k, v, size})
		c.bytes += size
	}
	c.trim()
}

// trim evicts the oldest entries until the cache is within its bounds.
func (c *lru) trim() {
	// The newest entry stays, whatever it weighs: it is about to be read.
	for c.ll.Len() > 1 && (c.ll.Len() > c.max || c.bytes > c.maxBytes) {
		old := c.ll.Back()
		le := old.Value.(*lruEntry)
		c.ll.Remove(old)
		delete(c.items, le.key)
		c.bytes -= le.size
	}
}

// sizeOf estimates the memory a cached value holds: its bytes, and a
// tree's entries with their names.
func sizeOf(v any) int64 {
	const overhead = 96 // the entry, its list element and map slot
	switch v := v.(type) {
	case rawObject:
		return overhead + int64(len(v.body))
	case *Tree:
		n := int64(overhead)
		for _, e := range v.Entries {
			n += int64(unsafe.Sizeof(e)) + int64(len(e.Name))
		}
		return n
	case *Commit:
		return overhead + 512 + int64(len(v.Message))
	}
	return overhead
}

// LimitCache lowers the memory bounds of the object cache and of the
// delta-base cache to maxBytes each (it never raises them) until the
// returned function restores them. A pass that reads each object about
// once, as a full reindex does, gains nothing from large caches and would
// otherwise fill them with objects it never reads again.
func (r *Repo) LimitCache(maxBytes int64) (restore func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	caches := []*lru{r.cache, r.objs.bases}
	old := make([]int64, len(caches))
	for i, c := range caches {
		old[i] = c.maxBytes
		if maxBytes < c.maxBytes {
			c.maxBytes = maxBytes
			c.trim()
		}
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, c := range caches {
			c.maxBytes = old[i]
		}
	}
}

// ReleaseMapped tells the kernel this process is done with the pages of
// the packs and indexes it has mapped. They stay in the page cache (a
// later read faults them back in cheaply), but stop counting in this
// process's resident memory: a pass over the whole history touches every
// page of every pack once, and would otherwise hold them all.
func (r *Repo) ReleaseMapped() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objs.releaseMapped()
}
