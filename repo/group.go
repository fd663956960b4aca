package repo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// Group commit. Writers of one branch in one process do not each take the
// branch's lock, write a pack and flush it in turn: while one commit is
// being made durable the next writers queue, and when it is done the
// first of them takes everything queued as one batch. The batch becomes a
// chain of commits, each the transaction of one writer with its own
// author and message, built on the one before it, written in one pack
// with one update of the ref and one round of flushes; every writer is
// answered once the ref names its commit (or a descendant) durably.
//
// A transaction that fails (its own error, or a compare-and-swap whose
// expected head is not the commit it would sit on) drops out alone: the
// next one builds on the commit before it. No timer decides a batch: it
// is whatever queued while the previous one was written, so a lone writer
// leads a batch of one at once and pays nothing for the queue.
//
// Batches are per git directory, branch and flush setting, across every
// Repo of the process (a server opens the store several times), and the
// objects of a batch's earlier commits are readable by every Repo of the
// directory while it is built (see pendingObject).

// maxBatch bounds a batch, so a writer's wait stays bounded under any
// load: with W writers queued, a writer waits for at most W/maxBatch+1
// batches before its own.
const maxBatch = 256

// commitReq is one writer's transaction waiting in a group.
type commitReq struct {
	ctx  context.Context
	fn   func(*Tx) (*CommitInfo, error)
	opts CommitOptions
	// wake is closed when the request is done, or when it is to lead
	// batch (then set).
	wake  chan struct{}
	batch []*commitReq
	out   *Commit
	err   error
	// panicked holds what fn panicked with, run by another writer's
	// goroutine: the writer's own goroutine panics with it again.
	panicked any
	// batchSize is how many commits the batch that wrote this one held.
	batchSize int
	// arrived is the group's batch count when the request queued, batch
	// the number of the batch that took it (see testHookWaited).
	arrived, batchNo int64
}

// testHookWaited hears, for each commit, how many batches began between
// its arrival and its own (1: the next one).
var testHookWaited = func(batches int64) {}

func (q *commitReq) result() (*Commit, error) {
	if q.panicked != nil {
		panic(q.panicked)
	}
	return q.out, q.err
}

// commitGroup is the queue of one branch's writers.
type commitGroup struct {
	key   groupKey
	mu    sync.Mutex
	busy  bool // a batch is being written
	queue []*commitReq
	// batches counts the batches begun.
	batches int64
}

var groups sync.Map // groupKey -> *commitGroup

type groupKey struct {
	dir, branch string
	sync        bool
}

func (r *Repo) group(branch string) *commitGroup {
	k := groupKey{r.dir, branch, r.syncing()}
	if g, ok := groups.Load(k); ok {
		return g.(*commitGroup)
	}
	g, _ := groups.LoadOrStore(k, &commitGroup{key: k})
	return g.(*commitGroup)
}

// commitQueued runs q as part of a batch: at once when no batch is being
// written, else once the batch in progress is done.
func (r *Repo) commitQueued(branch string, q *commitReq) (*Commit, error) {
	g := r.group(branch)
	g.mu.Lock()
	q.arrived = g.batches
	if !g.busy {
		g.busy = true
		g.batches++
		q.batchNo = g.batches
		g.mu.Unlock()
		r.lead(g, branch, []*commitReq{q})
		testHookWaited(q.batchNo - q.arrived)
		return q.result()
	}
	q.wake = make(chan struct{})
	g.queue = append(g.queue, q)
	g.mu.Unlock()
	defer func() { testHookWaited(q.batchNo - q.arrived) }()
	select {
	case <-q.wake:
	case <-q.ctx.Done():
		g.mu.Lock()
		if i := slices.Index(g.queue, q); i >= 0 {
			g.queue = slices.Delete(g.queue, i, i+1)
			g.mu.Unlock()
			return nil, q.ctx.Err() // not taken into a batch: nothing written
		}
		g.mu.Unlock()
		<-q.wake // in a batch being written: its outcome is the answer
	}
	if q.batch != nil {
		r.lead(g, branch, q.batch)
	}
	return q.result()
}

// lead writes batch (whose first request is the caller's own), then hands
// what queued meanwhile to its first writer, and answers the others.
func (r *Repo) lead(g *commitGroup, branch string, batch []*commitReq) {
	r.commitBatch(branch, batch)
	g.mu.Lock()
	next := g.queue
	if len(next) > maxBatch {
		next, g.queue = next[:maxBatch:maxBatch], slices.Clone(next[maxBatch:])
	} else {
		g.queue = nil
	}
	if len(next) > 0 {
		g.batches++
		for _, q := range next {
			q.batchNo = g.batches
		}
	} else {
		g.busy = false
		// An idle group goes, so a process writing to many branches
		// over its life keeps none of theirs. A writer that found it
		// just before still uses it: it then writes alone, without a
		// batch, under the ref's lock as any other writer.
		groups.CompareAndDelete(g.key, g)
	}
	g.mu.Unlock()
	if len(next) > 0 {
		next[0].batch = next
		close(next[0].wake)
	}
	for _, q := range batch[1:] {
		q.batch = nil
		close(q.wake)
	}
}

// errNoneLanded: every transaction of a batch failed; the ref stays.
var errNoneLanded = errors.New("no commit in the batch")

// commitBatch writes the transactions of batch as a chain of commits on
// branch, under its lock, and sets each request's outcome.
func (r *Repo) commitBatch(branch string, batch []*commitReq) {
	var landed []*commitReq
	published := func(bool) {}
	// The leader works for every writer of the batch: its own caller
	// giving up must not abandon theirs.
	ctx := context.WithoutCancel(batch[0].ctx)
	err := r.withRefLock(ctx, branch, func(_ string, head plumbing.Hash, lock *fileLock) (bool, error) {
		tip, root := head, emptyTree
		if !head.IsZero() {
			c, err := r.ReadCommit(head)
			if err != nil {
				return false, err
			}
			root = c.Tree
		}
		var objs []rawObject
		trees := map[plumbing.Hash]*Tree{}
		var pend *pendingSet
		defer func() {
			if pend != nil {
				pend.drop()
			}
		}()
		for i, q := range batch {
			c, b, err := r.prepare(q, branch, tip, root)
			if err != nil {
				q.err = r.permissionError(err)
				continue
			}
			if i < len(batch)-1 {
				// The next transactions read this one's trees and
				// commit before any pack holds them.
				if pend == nil {
					pend = addPending(r.dir)
				}
				pend.add(b.objs)
			}
			objs = append(objs, b.objs...)
			for h, t := range b.trees {
				trees[h] = t
			}
			r.mu.Lock()
			r.cache.put(commitKey(c.Hash), c)
			for h, t := range b.trees {
				r.cache.put(treeKey(h), t)
			}
			r.mu.Unlock()
			tip, root = c.Hash, c.Tree
			q.out = c
			landed = append(landed, q)
		}
		if len(landed) == 0 {
			return false, errNoneLanded
		}
		newPack, oldTail, durable, err := r.writePack(objs)
		if err != nil {
			return false, err
		}
		lock.ready = durable
		published = r.publishedFunc(newPack, oldTail)
		testHookBeforeRef()
		r.remember(objs, trees)
		if _, err := lock.WriteString(tip.String() + "\n"); err != nil {
			return false, err
		}
		return false, nil
	})
	published(err == nil)
	if errors.Is(err, errNoneLanded) {
		err = nil
	}
	for _, q := range batch {
		if err != nil && q.err == nil && q.panicked == nil {
			q.out, q.err = nil, err
		}
		q.batchSize = len(landed)
	}
}

// prepare runs q's transaction on the commit tip (whose tree is root) and
// builds its commit, without writing anything.
func (r *Repo) prepare(q *commitReq, branch string, tip, root plumbing.Hash) (c *Commit, b *builder, err error) {
	if err := q.ctx.Err(); err != nil {
		return nil, nil, err // a cancelled caller writes nothing
	}
	if q.opts.Expect != nil && *q.opts.Expect != tip {
		return nil, nil, &StaleError{Ref: branch, Expected: *q.opts.Expect, Current: tip}
	}
	tx := &Tx{r: r, parent: tip, root: root, changes: map[string]*[]byte{}}
	info, err := q.call(tx)
	if err != nil {
		return nil, nil, err
	}
	b = &builder{r: r, trees: map[plumbing.Hash]*Tree{}}
	newRoot, err := b.build(tx.root, "", tx.changes)
	if err != nil {
		return nil, nil, err
	}
	if newRoot == tx.root && !info.AllowEmpty {
		return nil, nil, ErrNoChange
	}
	c = &Commit{Tree: newRoot, Author: wholeSeconds(info.Author), Committer: wholeSeconds(info.Committer), Message: info.Message}
	if !tip.IsZero() {
		c.Parents = append(c.Parents, tip)
	}
	c.Parents = append(c.Parents, info.MergeParents...)
	if info.UpstreamFirst && len(c.Parents) > 1 {
		c.Parents[0], c.Parents[1] = c.Parents[1], c.Parents[0]
	}
	body, err := encodeCommit(c)
	if err != nil {
		return nil, nil, err
	}
	if info.Sign != nil {
		sig, err := info.Sign(body)
		if err != nil {
			return nil, nil, err
		}
		body = AddSignature(body, sig)
		c.PGPSignature = string(sig)
	}
	c.Hash = hashObject(plumbing.CommitObject, body)
	b.objs = append(b.objs, rawObject{typ: plumbing.CommitObject, hash: c.Hash, body: body})
	return c, b, nil
}

// call runs the transaction's function, catching a panic for the
// writer's own goroutine to raise again: the batch goes on without it.
func (q *commitReq) call(tx *Tx) (info *CommitInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			q.panicked = p
			info, err = nil, fmt.Errorf("transaction panicked: %v", p)
		}
	}()
	return q.fn(tx)
}

// publishedFunc is what a commit does once its ref is (or failed to be)
// published: release the new pack's keep and supersede the tail it
// replaced.
func (r *Repo) publishedFunc(newPack, oldTail plumbing.Hash) func(bool) {
	return func(ok bool) {
		switch {
		case newPack == oldTail:
			return // nothing new was written, nor kept
		case !ok:
			// The new pack stays: the ref may have moved after all
			// (only the flush of its directory failed), or another
			// commit of this process, finding its objects there
			// already, may name it. The next commit extends it as
			// the tail, or a repack rolls it up.
			r.setTail(nil)
		case !oldTail.IsZero() && !r.repackMayRead(oldTail) && !r.isInFlight(oldTail):
			// A tail a running repack may be reading stays: the
			// repack removes it when it rolls it up. So does one
			// whose own commit (on another branch) is not yet
			// published: it is kept, and a repack would leave its
			// objects out of what it rolls this pack into. Others
			// are superseded, and removed once plain git readers
			// that listed them have had time to open them.
			r.supersede(oldTail)
		}
		// Last: until here the new pack's objects may be reachable
		// from nothing a repack sees.
		r.releaseInFlight(newPack)
	}
}

// Objects of a batch being built, readable before any pack holds them by
// every Repo of their directory in this process: a writer's own code
// (reading its parent's clock, checking what changed since a revision)
// may use another Repo of the store than the batch's leader.
var pending struct {
	n    atomic.Int32 // sets alive: the fast path of every read is one load
	mu   sync.RWMutex
	sets map[*pendingSet]bool
}

type pendingSet struct {
	dir  string
	mu   sync.RWMutex
	objs map[plumbing.Hash]rawObject
}

func addPending(dir string) *pendingSet {
	p := &pendingSet{dir: dir, objs: map[plumbing.Hash]rawObject{}}
	pending.mu.Lock()
	if pending.sets == nil {
		pending.sets = map[*pendingSet]bool{}
	}
	pending.sets[p] = true
	pending.mu.Unlock()
	pending.n.Add(1)
	return p
}

func (p *pendingSet) add(objs []rawObject) {
	p.mu.Lock()
	for _, o := range objs {
		p.objs[o.hash] = o
	}
	p.mu.Unlock()
}

func (p *pendingSet) drop() {
	pending.mu.Lock()
	delete(pending.sets, p)
	pending.mu.Unlock()
	pending.n.Add(-1)
}

// pendingObject finds h among the objects of batches being built in dir.
func pendingObject(dir string, h plumbing.Hash) (rawObject, bool) {
	if pending.n.Load() == 0 {
		return rawObject{}, false
	}
	pending.mu.RLock()
	defer pending.mu.RUnlock()
	for p := range pending.sets {
		if p.dir != dir {
			continue
		}
		p.mu.RLock()
		o, ok := p.objs[h]
		p.mu.RUnlock()
		if ok {
			return o, true
		}
	}
	return rawObject{}, false
}
