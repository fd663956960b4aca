package repo

import (
	"bytes"
	"container/heap"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// MergeBases returns the best common ancestors of a and b, as
// `git merge-base --all` does: the common ancestors that are not ancestors
// of another common ancestor. Ordinary histories have one; a criss-cross
// history (each side merged the other) has several, and the caller decides
// what to do with them (the store merges them into a virtual base, as git's
// ort strategy does). Unrelated histories have none. The result is sorted
// newest commit first, ties broken by id, so it does not depend on the
// order of the arguments.
//
// The walk is git's paint_down_to_common: from both heads newest commit
// first, painting each commit with the side(s) that reach it; a commit
// reached from both sides is a candidate and its ancestors are painted
// stale; the walk ends when only stale commits are left to visit. Its cost
// follows the history since the fork, not the whole history.
// go-git's MergeBase is not used: it walks both whole ancestries.
func (r *Repo) MergeBases(a, b plumbing.Hash) ([]plumbing.Hash, error) {
	if a == b {
		return []plumbing.Hash{a}, nil
	}
	cands, err := r.paintDown(a, []plumbing.Hash{b})
	if err != nil {
		return nil, err
	}
	if len(cands) > 1 {
		if cands, err = r.removeRedundant(cands); err != nil {
			return nil, err
		}
	}
	if err := r.sortNewestFirst(cands); err != nil {
		return nil, err
	}
	return cands, nil
}

// IsAncestor reports whether a is b or one of b's ancestors.
func (r *Repo) IsAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	bases, err := r.MergeBases(a, b)
	if err != nil {
		return false, err
	}
	return len(bases) == 1 && bases[0] == a, nil
}

const (
	paintOne uint8 = 1 << iota
	paintTwo
	paintStale
	paintResult
)

type queued struct {
	hash plumbing.Hash
	when int64
}

// commitQueue pops the newest commit first; ties by id keep runs
// deterministic.
type commitQueue []queued

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if q[i].when != q[j].when {
		return q[i].when > q[j].when
	}
	return bytes.Compare(q[i].hash[:], q[j].hash[:]) < 0
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *commitQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (r *Repo) paintDown(one plumbing.Hash, twos []plumbing.Hash) ([]plumbing.Hash, error) {
	flags := map[plumbing.Hash]uint8{}
	q := &commitQueue{}
	push := func(h plumbing.Hash) error {
		_, when, err := r.links(h)
		if err != nil {
			return err
		}
		heap.Push(q, queued{h, when})
		return nil
	}
	flags[one] |= paintOne
	if err := push(one); err != nil {
		return nil, err
	}
	for _, t := range twos {
		flags[t] |= paintTwo
		if err := push(t); err != nil {
			return nil, err
		}
	}
	// The queue stays small (the width of the history since the fork),
	// so scanning it each round, as git does, costs little.
	hasNonStale := func() bool {
		for _, e := range *q {
			if flags[e.hash]&paintStale == 0 {
				return true
			}
		}
		return false
	}
	var out []plumbing.Hash
	for hasNonStale() {
		it := heap.Pop(q).(queued)
		f := flags[it.hash] & (paintOne | paintTwo | paintStale)
		if f == paintOne|paintTwo {
			if flags[it.hash]&paintResult == 0 {
				flags[it.hash] |= paintResult
				out = append(out, it.hash)
			}
			f |= paintStale
		}
		parents, _, err := r.links(it.hash)
		if err != nil {
			return nil, err
		}
		for _, p := range parents {
			if flags[p]&f == f {
				continue
			}
			flags[p] |= f
			if err := push(p); err != nil {
				return nil, err
			}
		}
	}
	// A candidate painted stale afterwards was reached through another
	// candidate: it is an ancestor of that one, not a best base.
	kept := out[:0]
	for _, h := range out {
		if flags[h]&paintStale == 0 {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// removeRedundant drops candidates that are ancestors of other candidates.
func (r *Repo) removeRedundant(cands []plumbing.Hash) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	for i, c := range cands {
		redundant := false
		for j, o := range cands {
			if i == j {
				continue
			}
			anc, err := r.reaches(o, c)
			if err != nil {
				return nil, err
			}
			if anc {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, c)
		}
	}
	return out, nil
}

// reaches reports whether target is an ancestor of from (not from itself).
func (r *Repo) reaches(from, target plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{from: true}
	stack := []plumbing.Hash{from}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		parents, _, err := r.links(h)
		if err != nil {
			return false, err
		}
		for _, p := range parents {
			if p == target {
				return true, nil
			}
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false, nil
}

func (r *Repo) sortNewestFirst(hs []plumbing.Hash) error {
	when := make(map[plumbing.Hash]int64, len(hs))
	for _, h := range hs {
		c, err := r.ReadCommit(h)
		if err != nil {
			return err
		}
		when[h] = c.Committer.When.UnixNano()
	}
	sort.Slice(hs, func(i, j int) bool {
		if when[hs[i]] != when[hs[j]] {
			return when[hs[i]] > when[hs[j]]
		}
		return bytes.Compare(hs[i][:], hs[j][:]) < 0
	})
	return nil
}

// WriteTree writes the tree that is base with changes applied (a nil
// value deletes the path) and returns its id, without a commit: the
// virtual merge base of a criss-cross merge and the merged tree of a
// recomputed merge are trees no branch points at. Objects go into one pack,
// as a commit's do.
func (r *Repo) WriteTree(base plumbing.Hash, changes map[string]*[]byte) (plumbing.Hash, error) {
	if base.IsZero() {
		base = emptyTree
	}
	for p := range changes {
		for _, seg := range splitPath(p) {
			if err := checkEntryName(seg); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	b := &builder{r: r, trees: map[plumbing.Hash]*Tree{}}
	root, err := b.build(base, "", changes)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if r.anyNew(b.objs) {
		if err := r.writeObjects(b.objs); err != nil {
			return plumbing.ZeroHash, err
		}
		r.remember(b.objs, b.trees)
	}
	return root, nil
}

// anyNew reports whether objs hold an object the tail pack lacks. A tree
// written again (a virtual base equal to an earlier one) adds nothing, and
// rewriting the tail with nothing new would give a pack of the same name as
// the tail, which writeObjects then removes as the replaced tail.
func (r *Repo) anyNew(objs []rawObject) bool {
	r.packMu.Lock()
	defer r.packMu.Unlock()
	tail, _ := r.currentTail() // a damaged tail: the write that follows refuses
	for _, o := range objs {
		if tail == nil {
			return true
		}
		if _, ok := tail.find(o.hash); !ok {
			return true
		}
	}
	return false
}

// EmptyTree is the id of the tree with no entries.
func EmptyTree() plumbing.Hash { return emptyTree }

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}
