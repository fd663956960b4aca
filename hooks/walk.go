package hooks

import (
	"container/heap"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// newCommits is `git rev-list --reverse --topo-order TIP --not HIDE...`:
// the commits TIP reaches that no commit of hide reaches, parents before
// children.
//
// It is git's walk (revision.c, limit_list): newest commit first by
// committer date, painting what a hidden commit reaches hidden, until only
// hidden commits are left to visit and a few more (git's slop) confirm
// it. A commit is hidden only by true reachability, so dates that lie (a
// commit claiming to be older than its parents) can only make the walk
// stop late or list a commit a hidden one reaches too, as git's does:
// never leave out a commit new to the server, which is what the hook
// checks.
func newCommits(r *repo.Repo, tip plumbing.Hash, hide []plumbing.Hash) ([]plumbing.Hash, error) {
	w := &walker{r: r, nodes: map[plumbing.Hash]*walkNode{}}
	if err := w.add(tip, false, false); err != nil {
		return nil, err
	}
	for _, h := range hide {
		if err := w.add(h, true, true); err != nil {
			return nil, err
		}
	}
	var list []*walkNode
	var date int64
	slop := walkSlop
	for w.q.Len() > 0 {
		n := heap.Pop(&w.q).(*walkNode)
		hidden := n.hidden
		for _, p := range n.parents {
			if err := w.add(p, hidden, hidden); err != nil {
				return nil, err
			}
		}
		if hidden {
			w.hideParents(n)
			if slop = w.stillInteresting(date, slop); slop == 0 {
				break
			}
			continue
		}
		date = n.when
		list = append(list, n)
	}
	var keep []*walkNode
	for _, n := range list {
		if !n.hidden {
			keep = append(keep, n)
		}
	}
	return topoOldestFirst(keep, w.nodes), nil
}

// walkSlop is how many hidden commits past the last new one the walk
// visits once only hidden ones are left, as git does (SLOP), so that a
// commit dated out of order does not stop it too early.
const walkSlop = 5

type walkNode struct {
	hash    plumbing.Hash
	parents []plumbing.Hash
	when    int64
	hidden  bool
	seq     int // insertion order: ties of date pop first in, as in git's queue
	index   int // in the queue, -1 once popped
}

type walker struct {
	r     *repo.Repo
	nodes map[plumbing.Hash]*walkNode
	q     walkQueue
	seq   int
}

// add reads a commit and queues it when first seen; a commit seen before
// and now reached from a hidden one is hidden (with what it reaches).
// missingOK: git skips a commit it cannot read on the hidden side.
func (w *walker) add(h plumbing.Hash, hidden, missingOK bool) error {
	if n, ok := w.nodes[h]; ok {
		if hidden && !n.hidden {
			n.hidden = true
			w.hideParents(n)
		}
		return nil
	}
	cm, err := w.r.ReadCommit(h)
	if err != nil {
		if missingOK && errors.Is(err, repo.ErrObjectMissing) {
			return nil
		}
		return err
	}
	n := &walkNode{hash: h, parents: cm.Parents, when: cm.Committer.When.Unix(), hidden: hidden, seq: w.seq}
	w.seq++
	w.nodes[h] = n
	heap.Push(&w.q, n)
	return nil
}

// hideParents marks hidden what n reaches among the commits already
// read (git's mark_parents_uninteresting); the others are hidden when
// read, from the hidden commit that queues them.
func (w *walker) hideParents(n *walkNode) {
	stack := []*walkNode{n}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range c.parents {
			if pn, ok := w.nodes[p]; ok && !pn.hidden {
				pn.hidden = true
				stack = append(stack, pn)
			}
		}
	}
}

// stillInteresting is git's still_interesting: the slop left, 0 to stop.
func (w *walker) stillInteresting(date int64, slop int) int {
	if w.q.Len() == 0 {
		return 0
	}
	if date <= w.q[0].when {
		return walkSlop
	}
	for _, n := range w.q {
		if !n.hidden {
			return walkSlop
		}
	}
	return slop - 1
}

// topoOldestFirst orders list (newest first, as the walk popped it) as
// git rev-list --topo-order does, then reverses it: no parent before its
// children, a merge's second-parent line before its first, reversed.
func topoOldestFirst(list []*walkNode, nodes map[plumbing.Hash]*walkNode) []plumbing.Hash {
	in := make(map[plumbing.Hash]int, len(list))
	for _, n := range list {
		in[n.hash] = 1
	}
	for _, n := range list {
		for _, p := range n.parents {
			if in[p] > 0 {
				in[p]++
			}
		}
	}
	// git's graph order pops the last queued first, with the tips in
	// the order the walk listed them.
	var stack []*walkNode
	for i := len(list) - 1; i >= 0; i-- {
		if in[list[i].hash] == 1 {
			stack = append(stack, list[i])
		}
	}
	out := make([]plumbing.Hash, 0, len(list))
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range n.parents {
			if in[p] == 0 {
				continue
			}
			if in[p]--; in[p] == 1 {
				stack = append(stack, nodes[p])
			}
		}
		in[n.hash] = 0
		out = append(out, n.hash)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// walkQueue pops the newest commit first, ties in the order queued.
type walkQueue []*walkNode

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	if q[i].when != q[j].when {
		return q[i].when > q[j].when
	}
	return q[i].seq < q[j].seq
}
func (q walkQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *walkQueue) Push(x any) {
	n := x.(*walkNode)
	n.index = len(*q)
	*q = append(*q, n)
}
func (q *walkQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	old[len(old)-1] = nil
	n.index = -1
	*q = old[:len(old)-1]
	return n
}
