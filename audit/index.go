package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/sysfile"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
)

// IndexDir is where the index lives, relative to the git dir.
const IndexDir = "aiwg/index"

// DefaultFoldAt is how many log records a reader tolerates before it folds
// the log into a new snapshot: reading the log costs each query in
// proportion to its length, a fold costs once in proportion to history.
const DefaultFoldAt = 1024

// Index is the changed-paths index of one repository. It is safe for
// concurrent use by several processes; an Index value itself is meant for
// one goroutine at a time.
type Index struct {
	repo *repo.Repo
	dir  string
	// Progress, when set, hears how many commits an indexing pass has done
	// out of how many (reindex, or a first query on an unindexed history).
	Progress func(done, total int)
	// FoldAt overrides DefaultFoldAt.
	FoldAt int

	mu sync.Mutex // guards v, and serializes this process's queries
	v  *view      // the last loaded view
}

// Open returns the index of r; nothing is read until the first query.
func Open(r *repo.Repo) *Index {
	return &Index{repo: r, dir: filepath.Join(r.Dir(), filepath.FromSlash(IndexDir))}
}

// Dir is the index's directory.
func (ix *Index) Dir() string { return ix.dir }

func (ix *Index) snapshotPath() string { return filepath.Join(ix.dir, "snapshot") }
func (ix *Index) logPath(gen uint64) string {
	return filepath.Join(ix.dir, "log."+strconv.FormatUint(gen, 10))
}

// lock takes the index's write lock (an flock the kernel drops when the
// process dies, so a SIGKILL never leaves it held).
func (ix *Index) lock() (func(), error) {
	if err := os.MkdirAll(ix.dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	f, err := sysfile.OpenFile(filepath.Join(ix.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("index lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// currentGen reads the generation from the snapshot's header only: writers
// need it to find the log and must not pay for reading the whole snapshot.
func (ix *Index) currentGen() uint64 {
	f, err := sysfile.OpenFile(ix.snapshotPath(), os.O_RDONLY, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	var h [24]byte
	if n, _ := f.ReadAt(h[:], 0); n < 24 || string(h[:8]) != snapMagic {
		return 0
	}
	return uint64(h[16]) | uint64(h[17])<<8 | uint64(h[18])<<16 | uint64(h[19])<<24 |
		uint64(h[20])<<32 | uint64(h[21])<<40 | uint64(h[22])<<48 | uint64(h[23])<<56
}

// appendRecords writes records to the current log under the lock, as one
// write.
func (ix *Index) appendRecords(recs []*record) error {
	if len(recs) == 0 {
		return nil
	}
	unlock, err := ix.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return ix.appendLocked(ix.currentGen(), recs)
}

func (ix *Index) appendLocked(gen uint64, recs []*record) error {
	var buf []byte
	for _, r := range recs {
		buf = r.appendFrame(buf)
	}
	f, err := sysfile.OpenFile(ix.logPath(gen), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// Add indexes one commit: the after-commit hook of every write. It costs a
// tree comparison along the changed paths (trees the write just read and
// wrote, so cached), the decoding of the changed documents, and one append.
func (ix *Index) Add(c *repo.Commit) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	r, err := ix.recordOf(c)
	if err != nil {
		return err
	}
	if err := ix.appendRecords([]*record{r}); err != nil {
		return err
	}
	if ix.v != nil {
		ix.v.add([]*record{r})
	}
	return nil
}

// recordOf computes what a commit changed against its first parent.
func (ix *Index) recordOf(c *repo.Commit) (*record, error) {
	return ix.recordAgainst(c, plumbing.ZeroHash, plumbing.ZeroHash)
}

// recordAgainst is recordOf for a caller that may know the first parent's
// tree already (prevTree is the tree of commit prev): a walk in
// topological order mostly meets a commit right after its parent, and
// reading the parent again would cost a commit read per commit.
func (ix *Index) recordAgainst(c *repo.Commit, prev, prevTree plumbing.Hash) (*record, error) {
	r := &record{hash: c.Hash, parents: c.Parents, time: c.Committer.When.Unix()}
	if id := c.Trailers().Get("Mutation-Id"); id != "" {
		r.mutID = id
	}
	var base plumbing.Hash
	if len(c.Parents) > 0 && !prev.IsZero() && c.Parents[0] == prev {
		base = prevTree
	} else if len(c.Parents) > 0 {
		p, err := ix.repo.ReadCommit(c.Parents[0])
		if err != nil && !errors.Is(err, repo.ErrNotFound) && (!errors.Is(err, repo.ErrObjectMissing) || ix.repo.IsPartial()) {
			return nil, err // a parent git lacks is a root, as in catchUp
		}
		if err == nil {
			base = p.Tree
		}
	}
	changes, err := ix.repo.DiffTrees(base, c.Tree)
	if err != nil {
		return nil, err
	}
	r.blobs = make([]plumbing.Hash, 0, len(changes))
	for _, ch := range changes {
		r.files = append(r.files, ch.Path)
		r.blobs = append(r.blobs, ch.New)
		if !strings.HasSuffix(ch.Path, ".json") {
			r.keys = append(r.keys, fileKey(ch.Path))
			r.deep = append(r.deep, fileKey(ch.Path))
			continue
		}
		old, oldOK, err1 := ix.decodeBlob(ch.Old)
		new, newOK, err2 := ix.decodeBlob(ch.New)
		for _, err := range []error{err1, err2} {
			if errors.Is(err, repo.ErrObjectMissing) {
				// Unread is not "not JSON": recording the file as
				// changed whole would stay in the index.
				return nil, err
			}
		}
		if err1 != nil || err2 != nil {
			// Not JSON: the file changed as a whole.
			r.keys = append(r.keys, fileKey(ch.Path))
			r.deep = append(r.deep, fileKey(ch.Path))
			continue
		}
		for _, kc := range ChangedKeys(old, oldOK, new, newOK) {
			k := keyOf(ch.Path, kc.Path)
			r.keys = append(r.keys, k)
			if kc.Deep {
				r.deep = append(r.deep, k)
			}
		}
	}
	return r, nil
}

func (ix *Index) decodeBlob(h plumbing.Hash) (any, bool, error) {
	if h.IsZero() {
		return nil, false, nil
	}
	data, err := ix.repo.ReadBlob(h)
	if err != nil {
		return nil, false, err
	}
	v, err := objects.Decode(data)
	return v, err == nil, err
}

// loadView reads the snapshot and the log.
func (ix *Index) loadView() (*view, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		v, err := ix.tryLoad()
		if err == nil {
			return v, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (ix *Index) tryLoad() (*view, error) {
	snap, err := openSnapshot(ix.snapshotPath())
	switch {
	case errors.Is(err, errCorrupt):
		// A corrupt snapshot is ignored: everything is re-derived from git
		// and the next fold replaces it.
		snap = nil
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("index: %w", err)
	}
	v := newView(snap)
	if snap == nil {
		v.gen = ix.currentGen() // writers append where the header says
	}
	logData, err := os.ReadFile(ix.logPath(v.gen))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("index: %w", err)
	}
	if err != nil && v.gen != 0 {
		// A fold creates the new log before it publishes the snapshot, so a
		// missing log means another fold replaced both since we read.
		if ix.currentGen() != v.gen {
			return nil, fmt.Errorf("index: folded while reading: %w", err)
		}
	}
	v.add(readFrames(logData))
	return v, nil
}

// view returns the index with every commit in tips (and all their
// ancestors) indexed, indexing what it lacks first.
func (ix *Index) view(ctx context.Context, tips ...plumbing.Hash) (*view, error) {
	if err := ix.checkShallow(); err != nil {
		return nil, err
	}
	v := ix.v
	var err error
	for _, h := range tips {
		if v != nil && !h.IsZero() && !v.knows(h) {
			v = nil // another process may have indexed it: read the index again
			break
		}
	}
	if v == nil {
		if v, err = ix.loadView(); err != nil {
			return nil, err
		}
	}
	var want []plumbing.Hash
	for _, h := range tips {
		if !h.IsZero() && !v.knows(h) {
			want = append(want, h)
		}
	}
	want = append(want, v.missing()...)
	if len(want) > 0 {
		if err = ix.catchUp(ctx, v, want); err != nil {
			return nil, err
		}
	}
	ix.v = v
	foldAt := ix.FoldAt
	if foldAt == 0 {
		foldAt = DefaultFoldAt
	}
	if len(v.tail) > foldAt {
		if f := foldElsewhere.Load(); f != nil {
			// Read the longer log meanwhile; the fold replaces it whole.
			(*f)(ix.dir)
			return ix.v, nil
		}
	}
	if len(v.tail) > foldAt || (v.snap == nil && len(v.tail) > 0 && ix.snapshotExists()) {
		if err = ix.fold(); err != nil {
			return nil, err
		}
		if ix.v, err = ix.loadView(); err != nil {
			return nil, err
		}
	}
	return ix.v, nil
}

// prefetch brings, in a partial clone, the documents the records of todo
// will compare, in one fetch rather than one per document.
func (ix *Index) prefetch(ctx context.Context, hashes []plumbing.Hash) {
	todo := make([]*repo.Commit, 0, len(hashes))
	for _, h := range hashes {
		if c, err := ix.repo.ReadCommit(h); err == nil {
			todo = append(todo, c)
		}
	}
	// The trees first, for a clone that left them out too (tree:0): a
	// fetch of a root tree brings its subtrees.
	trees := make([]plumbing.Hash, 0, len(todo))
	for _, c := range todo {
		trees = append(trees, c.Tree)
	}
	ix.repo.Prefetch(ctx, trees)
	var blobs []plumbing.Hash
	for _, c := range todo {
		var base plumbing.Hash
		if len(c.Parents) > 0 {
			if p, err := ix.repo.ReadCommit(c.Parents[0]); err == nil {
				base = p.Tree
			}
		}
		changes, err := ix.repo.DiffTrees(base, c.Tree)
		if err != nil {
			return // the records report it
		}
		for _, ch := range changes {
			if strings.HasSuffix(ch.Path, ".json") {
				blobs = append(blobs, ch.Old, ch.New)
			}
		}
	}
	ix.repo.Prefetch(ctx, blobs)
}

// checkShallow discards the index when the shallow boundary it was built
// with moved. In a shallow clone a boundary commit has no parents, so its
// record says it created every file it holds; once a fetch deepens the
// clone (or plain git does), that record is wrong, and so are the keys
// blamed on it. The boundary is kept beside the index (the file shallow,
// a copy of git's); a mismatch empties the index, which reindexes on this
// query. A store that was never shallow has neither file and pays two
// failed opens.
func (ix *Index) checkShallow() error {
	gitShallow, err := os.ReadFile(filepath.Join(ix.repo.Dir(), "shallow"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("index: %w", err)
	}
	mark := filepath.Join(ix.dir, "shallow")
	ours, err := os.ReadFile(mark)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("index: %w", err)
	}
	if string(ours) == string(gitShallow) {
		return nil
	}
	unlock, err := ix.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if again, _ := os.ReadFile(mark); string(again) == string(gitShallow) {
		return nil // another process did it
	}
	names, _ := os.ReadDir(ix.dir)
	for _, e := range names {
		if e.Name() == "snapshot" || strings.HasPrefix(e.Name(), "log.") {
			if err := os.Remove(filepath.Join(ix.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("index: %w", err)
			}
		}
	}
	ix.v = nil
	if len(gitShallow) == 0 {
		if err := os.Remove(mark); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("index: %w", err)
		}
		return nil
	}
	return ix.writeFile(mark, gitShallow)
}

// snapshotExists tells, when no snapshot was loaded, that the one on disk
// is corrupt and must be replaced.
func (ix *Index) snapshotExists() bool {
	_, err := os.Stat(ix.snapshotPath())
	return err == nil
}

// unindexed lists the commits reachable from want that the index lacks,
// parents before children, walking parents only until it meets indexed
// commits. It keeps hashes only (the commits are read again as they are
// indexed), so a walk over a long history costs tens of bytes a commit;
// and the order lets each record be numbered as it comes instead of
// waiting in pending for its parents.
func (ix *Index) unindexed(v *view, want []plumbing.Hash) ([]plumbing.Hash, error) {
	type frame struct {
		h    plumbing.Hash
		done bool // its parents are listed: list it
	}
	seen := map[plumbing.Hash]bool{}
	var order []plumbing.Hash
	stack := make([]frame, 0, len(want))
	for i := len(want) - 1; i >= 0; i-- {
		stack = append(stack, frame{h: want[i]})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.done {
			order = append(order, f.h)
			continue
		}
		h := f.h
		if seen[h] || v.knows(h) || v.absent[h] {
			continue
		}
		seen[h] = true
		if len(seen)%releaseEvery == 0 {
			ix.repo.ReleaseMapped() // as records does
		}
		if r := v.pending[h]; r != nil {
			for _, p := range r.parents {
				stack = append(stack, frame{h: p})
			}
			continue
		}
		c, err := ix.repo.ReadCommit(h)
		if errors.Is(err, repo.ErrNotFound) || (errors.Is(err, repo.ErrObjectMissing) && !ix.repo.IsPartial()) {
			// A parent git does not have: a commit pruned since the
			// index named it. (A shallow clone's boundary commits read
			// as parentless, and a partial clone fetches commits.)
			v.absent[h] = true
			continue
		}
		if err != nil {
			return nil, err
		}
		stack = append(stack, frame{h: h, done: true})
		// First parent on top, so the first-parent chain comes out in one
		// run and each commit mostly follows its first parent.
		for i := len(c.Parents) - 1; i >= 0; i-- {
			if p := c.Parents[i]; !seen[p] {
				stack = append(stack, frame{h: p})
			}
		}
	}
	return order, nil
}

// records computes the record of each commit of todo in turn (in
// unindexed's order), handing them to emit, with progress and
// cancellation.
func (ix *Index) records(ctx context.Context, todo []plumbing.Hash, emit func(*record) error) error {
	var prev, prevTree plumbing.Hash
	for i, h := range todo {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if ix.Progress != nil {
				ix.Progress(i, len(todo))
			}
		}
		if i > 0 && i%releaseEvery == 0 {
			// The walk and the records touch every page of the packs
			// once; holding them all would make a long history's
			// pass as large as its packs.
			ix.repo.ReleaseMapped()
		}
		c, err := ix.repo.ReadCommit(h)
		if err != nil {
			return err
		}
		r, err := ix.recordAgainst(c, prev, prevTree)
		if err != nil {
			return err
		}
		prev, prevTree = c.Hash, c.Tree
		if err := emit(r); err != nil {
			return err
		}
	}
	if ix.Progress != nil && len(todo) > 0 {
		ix.Progress(len(todo), len(todo))
	}
	return nil
}

// catchUp indexes the commits reachable from want that the index lacks,
// walking parents only until it meets indexed commits.
func (ix *Index) catchUp(ctx context.Context, v *view, want []plumbing.Hash) error {
	todo, err := ix.unindexed(v, want)
	if err != nil {
		return err
	}
	if len(todo) > 1 && ix.repo.IsPartial() {
		ix.prefetch(ctx, todo)
	}
	if len(todo) >= releaseEvery {
		// Many commits made elsewhere (a push by plain git): as Rebuild.
		defer ix.repo.LimitCache(rebuildCacheBytes)()
	}
	const batch = 2048
	var recs []*record
	flush := func() error {
		if err := ix.appendRecords(recs); err != nil {
			return err
		}
		v.add(recs)
		recs = recs[:0]
		return nil
	}
	err = ix.records(ctx, todo, func(r *record) error {
		recs = append(recs, r)
		if len(recs) == batch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	v.add(nil)
	return nil
}

// foldElsewhere: see FoldElsewhere.
var foldElsewhere atomic.Pointer[func(indexDir string)]

// FoldElsewhere makes queries of this process that find the log over
// its bound call f with the index's directory instead of folding it
// themselves (nil: fold in place again). A fold merges the log into a new
// snapshot, streamed from the old one: about 0.16 s and 41 MB of peak
// resident memory at a million commits, most of it the old snapshot's
// mapped pages (rebuilding it in memory from every commit took about 2 s
// and over 600 MB). A long-running server still hands it to a process of its own
// (f starts it; see Fold), so that its answers never wait on a fold and
// its memory stays flat; until the fold lands, queries read the longer
// log. f must return at once and start at most one fold at a time.
func FoldElsewhere(f func(indexDir string)) {
	if f == nil {
		foldElsewhere.Store(nil)
		return
	}
	foldElsewhere.Store(&f)
}

// Fold folds the index's log into its snapshot now, as a query does once
// the log passes its bound.
func (ix *Index) Fold() error {
	if err := ix.checkShallow(); err != nil {
		return err
	}
	return ix.fold()
}

// fold writes the snapshot and the log into a new snapshot, under the lock:
// read the log (no writer can append meanwhile), write log.<gen+1> with
// the records still waiting for parents, publish the snapshot by rename
// (streamed from the old one, see foldstream.go), then remove old logs.
func (ix *Index) fold() error {
	unlock, err := ix.lock()
	if err != nil {
		return err
	}
	defer unlock()
	v, err := ix.tryLoad()
	if err != nil {
		return err
	}
	gen := v.gen
	names, _ := os.ReadDir(ix.dir)
	for _, e := range names {
		if g, ok := strings.CutPrefix(e.Name(), "log."); ok {
			if n, err := strconv.ParseUint(g, 10, 64); err == nil && n > gen {
				gen = n
			}
		}
	}
	gen++
	var pending []*record
	for _, r := range v.pending {
		pending = append(pending, r)
	}
	if err := ix.writeFile(ix.logPath(gen), func() []byte {
		var b []byte
		for _, r := range pending {
			b = r.appendFrame(b)
		}
		return b
	}()); err != nil {
		return err
	}
	// Streamed from the old snapshot when it can be (see foldstream.go);
	// otherwise (none, or one of the format before blobs) built whole.
	err = errNotStreamable
	if v.snap != nil {
		err = writeStreamedFold(ix.snapshotPath(), v.snap, v.tail, gen)
	}
	if errors.Is(err, errNotStreamable) {
		err = ix.writeFile(ix.snapshotPath(), foldParts(v.snap, v.tail, gen)...)
	}
	if err != nil {
		return err
	}
	for _, e := range names {
		// Under the lock, a temporary snapshot is what a fold or a
		// reindex that died left (a streamed fold at a million commits
		// leaves up to 140 MB).
		if strings.HasPrefix(e.Name(), "log.") && e.Name() != "log."+strconv.FormatUint(gen, 10) ||
			strings.HasPrefix(e.Name(), "snapshot.tmp-") {
			os.Remove(filepath.Join(ix.dir, e.Name()))
		}
	}
	return nil
}

// writeFile publishes a file whole, made of parts: temporary file, fsync,
// rename.
func (ix *Index) writeFile(path string, parts ...[]byte) error {
	return publishFile(path, func(f *os.File) error {
		for _, p := range parts {
			if _, err := f.Write(p); err != nil {
				return err
			}
		}
		return nil
	})
}

// publishFile puts at path a file that fill writes: under a temporary
// name beside it, flushed, then renamed in, so that readers see the old
// file or the new one whole; on failure the temporary file goes and the
// old file stays. fill's errors come back as they are, wrapped once.
func publishFile(path string, fill func(*os.File) error) error {
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// Rebuild throws the index away and indexes every commit reachable from
// tips (usually every branch and tag), reporting progress. It streams:
// each commit's record goes straight into the new snapshot's compact form
// (no log, no view), so its memory is the snapshot's size plus a hash per
// commit, not every commit's strings. Commits that writers index while it
// runs land in a log the new snapshot supersedes; a query indexes them
// again.
func (ix *Index) Rebuild(ctx context.Context, tips []plumbing.Hash) (int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.v = nil
	if err := ix.checkShallow(); err != nil {
		return 0, err
	}
	// Each tree and document is read about once: a small cache holds the
	// parent's trees, which is all the walk reuses.
	defer ix.repo.LimitCache(rebuildCacheBytes)()
	v := newView(nil) // empty: only its absent set is used
	todo, err := ix.unindexed(v, tips)
	if err != nil {
		return 0, err
	}
	if len(todo) > 1 && ix.repo.IsPartial() {
		ix.prefetch(ctx, todo)
	}
	b := newSnapBuilder(len(todo))
	num := make(map[plumbing.Hash]int32, len(todo))
	depth := make([]int32, 0, len(todo))
	jump := make([]int32, 0, len(todo))
	c := &commit{}
	err = ix.records(ctx, todo, func(r *record) error {
		n := int32(len(depth))
		*c = commit{hash: r.hash, time: r.time, mutID: r.mutID, files: r.files, blobs: r.blobs, exact: r.keys, deep: r.deep, parents: c.parents[:0]}
		for _, p := range r.parents {
			pn, ok := num[p]
			if !ok {
				pn = -1 // absent: unindexed lists parents first
			}
			c.parents = append(c.parents, pn)
		}
		// As view.number: a jump pointer skips as far as its parent's
		// jump's jump when the two hops are the same length.
		if fp := c.firstParent(); fp >= 0 {
			c.depth = depth[fp] + 1
			jp := jump[fp]
			if depth[fp]-depth[jp] == depth[jp]-depth[jump[jp]] {
				c.jump = jump[jp]
			} else {
				c.jump = fp
			}
		} else {
			c.depth, c.jump = 0, n
		}
		depth = append(depth, c.depth)
		jump = append(jump, c.jump)
		num[r.hash] = n
		b.add(c)
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := len(depth)
	num, depth, jump, todo = nil, nil, nil, nil

	unlock, err := ix.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	gen := ix.currentGen()
	names, _ := os.ReadDir(ix.dir)
	for _, e := range names {
		if g, ok := strings.CutPrefix(e.Name(), "log."); ok {
			if n, err := strconv.ParseUint(g, 10, 64); err == nil && n > gen {
				gen = n
			}
		}
	}
	gen++
	if err := ix.writeFile(ix.snapshotPath(), b.finishParts(gen)...); err != nil {
		return 0, err
	}
	for _, e := range names {
		if strings.HasPrefix(e.Name(), "log.") {
			os.Remove(filepath.Join(ix.dir, e.Name()))
		}
	}
	return n, nil
}

// ReleaseMapped tells the kernel this process is done, for now, with the
// pages of the index snapshots it maps, as repo.Repo.ReleaseMapped does
// for packs: a long-running process calls it between commands, so that
// the pages its queries touched do not stay counted in its memory.
func ReleaseMapped() { releaseMapped() }

// ReleaseWhileReading turns on (or off), for this process, the release of
// the snapshot's mapped pages as queries read it, as
// repo.ReleaseWhileReading does for packs: for a long-running process,
// whose resident memory should not grow with the history its queries
// walk. A command's process leaves it off: it ends in moments, and the
// faults back would cost a long walk a few percent of its time.
func ReleaseWhileReading(on bool) { snapReleaseOn.Store(on) }

// releaseEvery is how many commits an indexing pass reads between
// releases of the packs' mapped pages.
const releaseEvery = 4096

// rebuildCacheBytes bounds the object cache during Rebuild.
const rebuildCacheBytes = 1 << 20

// Stats describe the index for `reindex --json` and troubleshooting.
type Stats struct {
	Commits  int    `json:"commits"`
	Snapshot int    `json:"snapshot_commits"`
	Log      int    `json:"log_commits"`
	Keys     int    `json:"keys"`
	Gen      uint64 `json:"generation"`
}

// Stats loads the index and describes it.
func (ix *Index) Stats() (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	v, err := ix.loadView()
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Commits: int(v.size()), Snapshot: int(v.n0), Log: len(v.tail), Gen: v.gen}
	if v.snap != nil {
		st.Keys = v.snap.nkeys
	}
	return st, nil
}
