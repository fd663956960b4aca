package audit

import (
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// view is the index as one process sees it: the snapshot, plus the commits
// of the log (the tail), numbered after the snapshot's in topological order.
type view struct {
	snap *snapshot // nil when there is none (or it was corrupt)
	gen  uint64
	n0   int32 // commits in the snapshot

	tail      []*commit
	byHash    map[plumbing.Hash]int32
	tailSub   map[string][]int32
	tailExact map[string][]int32
	tailDeep  map[string][]int32
	tailMut   map[string][]int32

	// pending are records whose parents are not indexed yet; absent are
	// parents git does not have (a shallow clone), taken as roots.
	pending map[plumbing.Hash]*record
	absent  map[plumbing.Hash]bool

	// changesOf caches, by file, the commits that changed its blob (see
	// blobAt); number empties it.
	changesOf map[string][]int32
}

func newView(snap *snapshot) *view {
	v := &view{
		snap:      snap,
		byHash:    map[plumbing.Hash]int32{},
		tailSub:   map[string][]int32{},
		tailExact: map[string][]int32{},
		tailDeep:  map[string][]int32{},
		tailMut:   map[string][]int32{},
		pending:   map[plumbing.Hash]*record{},
		absent:    map[plumbing.Hash]bool{},
	}
	if snap != nil {
		v.gen = snap.gen
		v.n0 = int32(snap.n)
	}
	return v
}

func (v *view) size() int32 { return v.n0 + int32(len(v.tail)) }

func (v *view) find(h plumbing.Hash) (int32, bool) {
	if n, ok := v.byHash[h]; ok {
		return n, true
	}
	if v.snap != nil {
		return v.snap.find(h)
	}
	return 0, false
}

func (v *view) knows(h plumbing.Hash) bool {
	_, ok := v.find(h)
	return ok
}

func (v *view) t(n int32) *commit { return v.tail[n-v.n0] }

func (v *view) hash(n int32) plumbing.Hash {
	if n < v.n0 {
		return v.snap.hash(n)
	}
	return v.t(n).hash
}

func (v *view) firstParent(n int32) int32 {
	if n < v.n0 {
		return v.snap.firstParent(n)
	}
	return v.t(n).firstParent()
}

func (v *view) parents(n int32) []int32 {
	if n < v.n0 {
		return v.snap.parents(n)
	}
	return v.t(n).parents
}

func (v *view) depth(n int32) int32 {
	if n < v.n0 {
		return v.snap.depth(n)
	}
	return v.t(n).depth
}

func (v *view) jump(n int32) int32 {
	if n < v.n0 {
		return v.snap.jump(n)
	}
	return v.t(n).jump
}

func (v *view) time(n int32) int64 {
	if n < v.n0 {
		return v.snap.time(n)
	}
	return v.t(n).time
}

// forward is what commit n changed: the files, the exact keys, the deep ones.
func (v *view) forward(n int32) (files, exact, deep []string) {
	if n < v.n0 {
		return v.snap.forward(n)
	}
	c := v.t(n)
	return c.files, c.exact, c.deep
}

// blobs is what forward's files are in commit n: their new blobs, nil
// when the index does not know them.
func (v *view) blobs(n int32) []plumbing.Hash {
	if n < v.n0 {
		return v.snap.blobs(n)
	}
	return v.t(n).blobs
}

// blobAt is the blob of file in commit n, read from the index: the blob
// recorded by the newest commit on n's first-parent chain that changed
// the file (none: the file is not there, zero), as the file is the same
// in every commit between. ok is false when the index does not know
// that commit's blobs; the caller reads the trees.
func (v *view) blobAt(n int32, file string) (plumbing.Hash, bool) {
	cands, ok := v.changesOf[file]
	if !ok {
		if v.changesOf == nil {
			v.changesOf = map[string][]int32{}
		}
		cands = v.postings(fileKey(file), listSub)
		v.changesOf[file] = cands
	}
	i := sort.Search(len(cands), func(i int) bool { return cands[i] > n }) - 1
	for ; i >= 0; i-- {
		if v.onChain(cands[i], n) {
			break
		}
	}
	if i < 0 {
		return plumbing.ZeroHash, true
	}
	x := cands[i]
	blobs := v.blobs(x)
	if blobs == nil {
		return plumbing.ZeroHash, false
	}
	files, _, _ := v.forward(x)
	for j, f := range files {
		if f == file && j < len(blobs) {
			return blobs[j], true
		}
	}
	// Listed under a key of the file, not as a file: an index that
	// disagrees with itself. The trees answer.
	return plumbing.ZeroHash, false
}

// Kinds of posting list.
const (
	listSub   = iota // commits that changed k or a key below it
	listExact        // commits with a change recorded at k itself
	listDeep         // ... that also changed keys below k
)

// postings lists, ascending, the commits of one kind for key k.
func (v *view) postings(k string, kind int) []int32 {
	var out []int32
	if v.snap != nil {
		if id, ok := v.snap.findKey(k); ok {
			out = v.snap.postings(id, kind)
		}
	}
	return append(out, [...]map[string][]int32{v.tailSub, v.tailExact, v.tailDeep}[kind][k]...)
}

func (v *view) mutation(id string) []int32 {
	var out []int32
	if v.snap != nil {
		out = v.snap.findMutation(id)
	}
	return append(out, v.tailMut[id]...)
}

// ancestorAt is the first-parent ancestor of n at depth d, in O(log n)
// steps along jump pointers.
func (v *view) ancestorAt(n, d int32) int32 {
	for n >= 0 && v.depth(n) > d {
		if j := v.jump(n); v.depth(j) >= d {
			n = j
		} else {
			n = v.firstParent(n)
		}
	}
	return n
}

// onChain reports whether x is s or a first-parent ancestor of s.
func (v *view) onChain(x, s int32) bool {
	if x > s || x < 0 {
		return false // numbers are topological: an ancestor is smaller
	}
	dx := v.depth(x)
	return dx <= v.depth(s) && v.ancestorAt(s, dx) == x
}

// add numbers the records whose parents are all indexed (or absent), in
// topological order; the others wait in pending for their parents. Records
// mostly arrive parents first, so this is one pass plus a wake-up of the
// children a newly numbered record was holding back.
func (v *view) add(recs []*record) {
	waiting := map[plumbing.Hash][]*record{}
	var ready []*record
	for _, r := range recs {
		if !v.knows(r.hash) {
			v.pending[r.hash] = r
		}
	}
	for _, r := range v.pending {
		if p, ok := v.blocker(r); ok {
			waiting[p] = append(waiting[p], r)
		} else {
			ready = append(ready, r)
		}
	}
	// Number in the order records came (the log's order), then children
	// as their parents get numbers.
	order := make(map[plumbing.Hash]int, len(recs))
	for i, r := range recs {
		order[r.hash] = i
	}
	sort.Slice(ready, func(i, j int) bool { return order[ready[i].hash] < order[ready[j].hash] })
	for len(ready) > 0 {
		r := ready[0]
		ready = ready[1:]
		if v.knows(r.hash) {
			delete(v.pending, r.hash)
			continue
		}
		if p, ok := v.blocker(r); ok {
			waiting[p] = append(waiting[p], r)
			continue
		}
		delete(v.pending, r.hash)
		v.number(r)
		ready = append(ready, waiting[r.hash]...)
		delete(waiting, r.hash)
	}
}

// blocker is a parent of r that is neither indexed nor known to be absent.
func (v *view) blocker(r *record) (plumbing.Hash, bool) {
	for _, p := range r.parents {
		if !v.knows(p) && !v.absent[p] {
			return p, true
		}
	}
	return plumbing.ZeroHash, false
}

// missing lists parents that pending records wait for.
func (v *view) missing() []plumbing.Hash {
	var out []plumbing.Hash
	for _, r := range v.pending {
		for _, p := range r.parents {
			if !v.knows(p) && !v.absent[p] && v.pending[p] == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

func (v *view) number(r *record) {
	n := v.size()
	c := &commit{hash: r.hash, time: r.time, mutID: r.mutID, files: r.files, blobs: r.blobs, exact: r.keys, deep: r.deep}
	for _, p := range r.parents {
		pn, ok := v.find(p)
		if !ok {
			pn = -1
		}
		c.parents = append(c.parents, pn)
	}
	if fp := c.firstParent(); fp >= 0 {
		c.depth = v.depth(fp) + 1
		jp := v.jump(fp)
		if v.depth(fp)-v.depth(jp) == v.depth(jp)-v.depth(v.jump(jp)) {
			c.jump = v.jump(jp)
		} else {
			c.jump = fp
		}
	} else {
		c.jump = n
	}
	v.tail = append(v.tail, c)
	v.byHash[r.hash] = n
	clear(v.changesOf)
	add := func(m map[string][]int32, k string) {
		if l := m[k]; len(l) == 0 || l[len(l)-1] != n {
			m[k] = append(l, n)
		}
	}
	for _, f := range c.files {
		add(v.tailSub, fileKey(f))
	}
	for _, k := range c.exact {
		add(v.tailExact, k)
		for _, p := range keyPrefixBytes(k) {
			add(v.tailSub, k[:p])
		}
	}
	for _, k := range c.deep {
		add(v.tailDeep, k)
	}
	if _, ok := mutNumber(r.mutID); ok {
		v.tailMut[r.mutID] = append(v.tailMut[r.mutID], n)
	}
}
