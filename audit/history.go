package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/verbiage"
)

// ErrNotAncestor: bisect's good revision is not a first-parent ancestor of
// its bad one.
var ErrNotAncestor = errors.New("not an ancestor")

// LogOptions choose which history Log walks.
type LogOptions struct {
	// File is the document; Key narrows to one key path in it (empty: the
	// file's blob, as git log -- FILE sees it).
	File string
	Key  verbiage.Path
	// AllParents walks merges into every parent, simplified as git log does
	// by default (a merge that took the key unchanged from one parent is
	// followed into that parent only and not listed); otherwise first
	// parents only, as git log --first-parent.
	AllParents bool
	// Follow continues across renames recorded by aiwg-state (the
	// Renamed-To trailer): history before the move is the old file's.
	Follow bool
}

// Hit is one commit of a log: it changed the key of File (the file's name
// at that commit, which Follow may change).
type Hit struct {
	Commit plumbing.Hash
	File   string
	// From, when following, is the file the commit moved to File: by
	// aiwg-state mv, or an exact rename made with plain git (git mv).
	From string
}

// Log calls fn for each commit reachable from start that changed the key,
// newest first (all-parents: by committer time, as git orders), until fn
// returns false. Its cost follows the number of the key's changes.
func (ix *Index) Log(ctx context.Context, start plumbing.Hash, o LogOptions, fn func(Hit) (bool, error)) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	v, err := ix.view(ctx, start)
	if err != nil {
		return err
	}
	s, ok := v.find(start)
	if !ok {
		return fmt.Errorf("commit %s: %w", start, repo.ErrNotFound)
	}
	q := &query{ix: ix, v: v, key: o.Key, docs: map[docAt]docVal{}}
	if !o.AllParents {
		return q.firstParentLog(ctx, s, o.File, o.Follow, fn)
	}
	hits, err := q.allParentsLog(ctx, s, o.File, o.Follow)
	if err != nil {
		return err
	}
	for _, h := range hits {
		if more, err := fn(h); err != nil || !more {
			return err
		}
	}
	return nil
}

type query struct {
	ix   *Index
	v    *view
	key  verbiage.Path
	docs map[docAt]docVal
}

type docAt struct {
	commit plumbing.Hash
	file   string
}

type docVal struct {
	blob plumbing.Hash
	doc  any
	ok   bool
	err  error
}

// candidates lists, ascending, the commits that may have changed key in
// file against their first parent: those recorded at the key or below it
// (they did), and those recorded deep at a key above it (a subtree
// replaced, the file created: they did if the key exists on either side,
// which the maybe set leaves to sameAt).
func (q *query) candidates(file string) ([]int32, map[int32]bool) {
	if len(q.key) == 0 {
		return q.v.postings(fileKey(file), listSub), nil
	}
	sure := q.v.postings(keyOf(file, q.key), listSub)
	lists := [][]int32{sure}
	for i := 0; i < len(q.key); i++ {
		lists = append(lists, q.v.postings(keyOf(file, q.key[:i]), listDeep))
	}
	all := mergeLists(lists)
	if len(all) == len(sure) {
		return all, nil
	}
	isSure := make(map[int32]bool, len(sure))
	for _, n := range sure {
		isSure[n] = true
	}
	maybe := map[int32]bool{}
	for _, n := range all {
		if !isSure[n] {
			maybe[n] = true
		}
	}
	return all, maybe
}

// changed settles a candidate: whether commit x changed the key of file
// against its first parent.
func (q *query) changed(x int32, file string, maybe map[int32]bool) (bool, error) {
	if !maybe[x] {
		return true, nil
	}
	p := q.v.firstParent(x)
	if p < 0 {
		d, err := q.doc(q.v.hash(x), file)
		if err != nil {
			return false, err
		}
		_, ok := lookup(d, q.key)
		return ok, nil
	}
	same, err := q.sameAt(x, p, file)
	return !same, err
}

func mergeLists(lists [][]int32) []int32 {
	var out []int32
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	uniq := out[:0]
	for i, n := range out {
		if i == 0 || n != out[i-1] {
			uniq = append(uniq, n)
		}
	}
	return uniq
}

// newestOnChain returns the index in cands of the newest candidate that is
// at or below s on s's first-parent chain, at most below index hi.
func (q *query) newestOnChain(cands []int32, s int32, hi int) int {
	i := sort.Search(min(hi, len(cands)), func(i int) bool { return cands[i] > s }) - 1
	for ; i >= 0; i-- {
		if q.v.onChain(cands[i], s) {
			return i
		}
	}
	return -1
}

func (q *query) firstParentLog(ctx context.Context, s int32, file string, follow bool, fn func(Hit) (bool, error)) error {
	cands, maybe := q.candidates(file)
	hi := len(cands)
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i := q.newestOnChain(cands, s, hi)
		if i < 0 {
			return nil
		}
		x := cands[i]
		hi = i
		s = x
		if ok, err := q.changed(x, file, maybe); err != nil {
			return err
		} else if !ok {
			continue
		}
		hit := Hit{Commit: q.v.hash(x), File: file}
		if follow {
			hit.From = q.renamedFrom(x, file)
		}
		if more, err := fn(hit); err != nil || !more {
			return err
		}
		if follow {
			if from := hit.From; from != "" {
				file = from
				cands, maybe = q.candidates(from)
				if s = q.v.firstParent(x); s < 0 {
					return nil
				}
				hi = len(cands)
			}
		}
	}
}

// renamedFrom is the file that commit n moved to file ("" when n did
// not): from its trailers for a move aiwg-state made; for a commit made
// with plain git (git mv, no Mutation-Id, one parent), an exact rename as
// git detects one, a file n removed whose blob is the one n created at
// file.
func (q *query) renamedFrom(n int32, file string) string {
	c, err := q.ix.repo.ReadCommit(q.v.hash(n))
	if err != nil {
		return ""
	}
	var op, path string
	for _, t := range c.Trailers() {
		switch strings.ToLower(t.Key) {
		case "operation":
			op, path = t.Value, ""
		case "path":
			path = t.Value
		case "renamed-to":
			if op == "rename" && t.Value == file && path != "" {
				return path
			}
		}
	}
	if c.Trailers().Get("Mutation-Id") != "" || len(c.Parents) != 1 {
		return "" // ours say so; a merge taking a file from a side is no move
	}
	return q.exactRename(n, c.Tree, file)
}

func (q *query) exactRename(n int32, tree plumbing.Hash, file string) string {
	p := q.v.firstParent(n)
	if p < 0 {
		return ""
	}
	pc, err := q.ix.repo.ReadCommit(q.v.hash(p))
	if err != nil {
		return ""
	}
	created, err := q.ix.repo.Lookup(tree, file)
	if err != nil {
		return ""
	}
	if _, err := q.ix.repo.Lookup(pc.Tree, file); err == nil {
		return "" // file was there before: changed, not created
	}
	files, _, _ := q.v.forward(n)
	for _, f := range files {
		if f == file {
			continue
		}
		if old, err := q.ix.repo.Lookup(pc.Tree, f); err != nil || old.Hash != created.Hash {
			continue
		}
		if _, err := q.ix.repo.Lookup(tree, f); err != nil {
			return f
		}
	}
	return ""
}

type cursor struct {
	at   int32
	file string
}

func (q *query) allParentsLog(ctx context.Context, s int32, file string, follow bool) ([]Hit, error) {
	type candList struct {
		all   []int32
		maybe map[int32]bool
	}
	candsOf := map[string]candList{}
	cands := func(f string) candList {
		c, ok := candsOf[f]
		if !ok {
			c.all, c.maybe = q.candidates(f)
			candsOf[f] = c
		}
		return c
	}
	var hits []int32
	hitFile := map[int32]string{}
	hitFrom := map[int32]string{}
	done := map[cursor]bool{}
	stack := []cursor{{s, file}}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cs := cands(c.file)
		i := q.newestOnChain(cs.all, c.at, len(cs.all))
		if i < 0 {
			continue
		}
		x := cs.all[i]
		if done[cursor{x, c.file}] {
			continue
		}
		done[cursor{x, c.file}] = true
		if ok, err := q.changed(x, c.file, cs.maybe); err != nil {
			return nil, err
		} else if !ok {
			// Not a change of this key: walk on along first parents.
			if p := q.v.firstParent(x); p >= 0 {
				stack = append(stack, cursor{p, c.file})
			}
			continue
		}
		ps := q.v.parents(x)
		followed := false
		for k := 1; k < len(ps); k++ {
			if ps[k] < 0 {
				continue
			}
			same, err := q.sameAt(x, ps[k], c.file)
			if err != nil {
				return nil, err
			}
			if same {
				stack = append(stack, cursor{ps[k], c.file})
				followed = true
				break
			}
		}
		if followed {
			continue
		}
		hits = append(hits, x)
		hitFile[x] = c.file
		next := c.file
		if follow {
			if from := q.renamedFrom(x, c.file); from != "" {
				next = from
				hitFrom[x] = from
			}
		}
		for _, p := range ps {
			if p >= 0 {
				stack = append(stack, cursor{p, next})
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		ti, tj := q.v.time(hits[i]), q.v.time(hits[j])
		if ti != tj {
			return ti > tj
		}
		return hits[i] > hits[j]
	})
	out := make([]Hit, 0, len(hits))
	for i, h := range hits {
		if i > 0 && h == hits[i-1] {
			continue
		}
		out = append(out, Hit{Commit: q.v.hash(h), File: hitFile[h], From: hitFrom[h]})
	}
	return out, nil
}

// sameAt reports whether the key has the same value in commits a and b.
func (q *query) sameAt(a, b int32, file string) (bool, error) {
	da, err := q.doc(q.v.hash(a), file)
	if err != nil {
		return false, err
	}
	db, err := q.doc(q.v.hash(b), file)
	if err != nil {
		return false, err
	}
	if da.blob == db.blob {
		return true, nil
	}
	if len(q.key) == 0 || da.err != nil || db.err != nil {
		return false, nil
	}
	va, okA := lookup(da, q.key)
	vb, okB := lookup(db, q.key)
	return okA == okB && (!okA || objects.Equal(va, vb)), nil
}

func lookup(d docVal, p verbiage.Path) (any, bool) {
	if !d.ok {
		return nil, false
	}
	v, err := objects.Get(d.doc, p)
	return v, err == nil
}

// doc reads and decodes a file at a commit; a missing file is !ok, a file
// that is not JSON has err set (and its blob, for comparisons).
func (q *query) doc(c plumbing.Hash, file string) (docVal, error) {
	k := docAt{c, file}
	if d, ok := q.docs[k]; ok {
		return d, nil
	}
	var d docVal
	blob, err := q.blobAt(c, file)
	if err != nil {
		return d, err
	}
	if !blob.IsZero() {
		d.blob = blob
		data, err := q.ix.repo.ReadBlob(blob)
		if err != nil {
			return d, err
		}
		d.doc, d.err = objects.Decode(data)
		d.ok = d.err == nil
	}
	q.docs[k] = d
	return d, nil
}

// blobAt is the blob of file at commit c (zero when there is none, or
// it is a directory): from the index when it knows c and the blobs of the
// commits that changed the file, else from c's trees. The index spares a
// read of every tree on the path, which for a file in a directory of
// thousands is most of what reading one version costs.
func (q *query) blobAt(c plumbing.Hash, file string) (plumbing.Hash, error) {
	if q.v != nil {
		if n, ok := q.v.find(c); ok {
			if h, ok := q.v.blobAt(n, file); ok {
				return h, nil
			}
		}
	}
	cm, err := q.ix.repo.ReadCommit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e, err := q.ix.repo.Lookup(cm.Tree, file)
	switch {
	case errors.Is(err, repo.ErrNotFound) || (err == nil && e.IsDir()):
		return plumbing.ZeroHash, nil
	case err != nil:
		return plumbing.ZeroHash, err
	}
	return e.Hash, nil
}

// ValueAt returns the value of a key of a file at a commit (ok false when
// the file or the key does not exist there, or the file is not JSON).
// Called from a Log callback (or after a query), it reads the document's
// version through the index that query loaded.
func (ix *Index) ValueAt(c plumbing.Hash, file string, key verbiage.Path) (any, bool, error) {
	q := &query{ix: ix, v: ix.v, docs: map[docAt]docVal{}}
	d, err := q.doc(c, file)
	if err != nil {
		return nil, false, err
	}
	v, ok := lookup(d, key)
	return v, ok, nil
}

// Blamed is one leaf of a document and the commit that last set it.
type Blamed struct {
	Path   verbiage.Path
	Value  any
	Commit plumbing.Hash // zero when history ends before its origin (shallow)
}

// Blame returns every leaf (scalar, empty object, empty array) of file at
// commit at, in document order, with the newest commit on at's
// first-parent chain whose change set includes it. It walks the file's
// changes newest first and stops when every leaf has its commit, reading
// only the index.
func (ix *Index) Blame(ctx context.Context, at plumbing.Hash, file string) ([]Blamed, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	v, err := ix.view(ctx, at)
	if err != nil {
		return nil, err
	}
	s, _ := v.find(at)
	q := &query{ix: ix, v: v, docs: map[docAt]docVal{}}
	d, err := q.doc(at, file)
	if err != nil {
		return nil, err
	}
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w", file, d.err)
	}
	if !d.ok {
		return nil, fmt.Errorf("%s at %s: %w", file, at, repo.ErrNotFound)
	}
	leaves := objects.Leaves(d.doc)
	out := make([]Blamed, len(leaves))
	// Leaves are matched by the key encoding without its file part, so the
	// walk can continue under an older name after a move.
	type pending struct {
		key string
		i   int
	}
	order := make([]pending, len(leaves))
	byKey := make(map[string]int, len(leaves))
	for i, l := range leaves {
		out[i] = Blamed{Path: l.Path, Value: l.Value}
		k := keyOf("", l.Path)[1:]
		order[i] = pending{k, i}
		byKey[k] = i
	}
	sort.Slice(order, func(a, b int) bool { return order[a].key < order[b].key })
	left := len(leaves)
	resolveKey := func(k string, x int32) {
		j := sort.Search(len(order), func(j int) bool { return order[j].key >= k })
		for ; j < len(order) && strings.HasPrefix(order[j].key, k); j++ {
			if i := order[j].i; out[i].Commit.IsZero() {
				out[i].Commit = v.hash(x)
				left--
			}
		}
		// A leaf above the changed key: an empty container that lost a member.
		for _, p := range keyPrefixBytes("\x00" + k) {
			if i, ok := byKey[k[:p-1]]; ok && out[i].Commit.IsZero() {
				out[i].Commit = v.hash(x)
				left--
			}
		}
	}
	prefix := fileKey(file)
	cands := v.postings(prefix, listSub)
	hi := len(cands)
	for n := 0; left > 0; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		i := q.newestOnChain(cands, s, hi)
		if i < 0 {
			break
		}
		x := cands[i]
		hi, s = i, x
		if from := q.renamedFrom(x, file); from != "" {
			// A move: what the commit changed is what differs between the
			// old name's document before and the new name's after.
			p := v.firstParent(x)
			if p < 0 {
				break
			}
			before, err := q.doc(v.hash(p), from)
			if err != nil {
				return nil, err
			}
			after, err := q.doc(v.hash(x), file)
			if err != nil {
				return nil, err
			}
			for _, kc := range ChangedKeys(before.doc, before.ok, after.doc, after.ok) {
				resolveKey(keyOf("", kc.Path)[1:], x)
			}
			file, prefix = from, fileKey(from)
			cands, s = v.postings(prefix, listSub), p
			hi = len(cands)
			continue
		}
		_, exact, _ := v.forward(x)
		for _, k := range exact {
			if rest, ok := strings.CutPrefix(k, prefix); ok {
				resolveKey(rest, x)
			}
		}
	}
	return out, nil
}

// BlameAllParents is Blame through merges, as git blame does: a leaf that
// first-parent blame gives to a merge commit, and that a merged-in parent
// holds with the same value, is blamed in that parent's history instead,
// so a key an agent set on its branch names that agent's commit, not the
// merge that brought it in. A value no parent held (a resolved conflict)
// stays the merge's.
func (ix *Index) BlameAllParents(ctx context.Context, at plumbing.Hash, file string) ([]Blamed, error) {
	memo := map[plumbing.Hash]map[string]Blamed{}
	var blame func(at plumbing.Hash) ([]Blamed, error)
	blame = func(at plumbing.Hash) ([]Blamed, error) {
		out, err := ix.Blame(ctx, at, file)
		if err != nil {
			return nil, err
		}
		for i, b := range out {
			if b.Commit.IsZero() {
				continue
			}
			c, err := ix.repo.ReadCommit(b.Commit)
			if err != nil {
				return nil, err
			}
			for _, p := range c.Parents[min(1, len(c.Parents)):] {
				theirs, ok := memo[p]
				if !ok {
					pb, err := blame(p)
					if errors.Is(err, repo.ErrNotFound) {
						pb, err = nil, nil // the file is not on that side
					}
					if err != nil {
						return nil, err
					}
					theirs = make(map[string]Blamed, len(pb))
					for _, x := range pb {
						theirs[x.Path.String()] = x
					}
					memo[p] = theirs
				}
				if t, ok := theirs[b.Path.String()]; ok && !t.Commit.IsZero() && objects.Equal(t.Value, b.Value) {
					out[i].Commit = t.Commit
					break
				}
			}
		}
		return out, nil
	}
	return blame(at)
}

// BlamedLine is one line of a document's stored text and the commit that
// last changed it, as git blame would say.
type BlamedLine struct {
	Line   int // from 1
	Text   string
	Commit plumbing.Hash
}

// BlameLines blames the file's text line by line along first parents: each
// version is diffed with the one before (go-diff's line mode), lines it
// inserted are its, the rest are traced into the older version.
func (ix *Index) BlameLines(ctx context.Context, at plumbing.Hash, file string) ([]BlamedLine, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	v, err := ix.view(ctx, at)
	if err != nil {
		return nil, err
	}
	s, _ := v.find(at)
	q := &query{ix: ix, v: v, docs: map[docAt]docVal{}}
	text, ok, err := q.text(at, file)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s at %s: %w", file, at, repo.ErrNotFound)
	}
	lines := splitLines(text)
	out := make([]BlamedLine, len(lines))
	for i, l := range lines {
		out[i] = BlamedLine{Line: i + 1, Text: l}
	}
	// live maps a line of the version being examined to its line in out.
	live := make(map[int]int, len(lines))
	for i := range lines {
		live[i] = i
	}
	cands := v.postings(fileKey(file), listSub)
	hi := len(cands)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 5 * time.Second
	for len(live) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		i := q.newestOnChain(cands, s, hi)
		if i < 0 {
			break
		}
		x := cands[i]
		hi, s = i, x
		cur, _, err := q.text(v.hash(x), file)
		if err != nil {
			return nil, err
		}
		// A move compares with the old name's text, and the walk goes on
		// under that name.
		from := q.renamedFrom(x, file)
		var old string
		if p := v.firstParent(x); p >= 0 {
			if old, _, err = q.text(v.hash(p), cmp.Or(from, file)); err != nil {
				return nil, err
			}
		}
		if from != "" {
			file = from
			cands, hi = v.postings(fileKey(file), listSub), math.MaxInt
			if s = v.firstParent(x); s < 0 {
				break
			}
		}
		a, b, _ := dmp.DiffLinesToChars(old, cur)
		next := map[int]int{}
		oi, ni := 0, 0
		for _, d := range dmp.DiffMain(a, b, false) {
			n := len([]rune(d.Text))
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				for k := 0; k < n; k++ {
					if o, ok := live[ni+k]; ok {
						next[oi+k] = o
					}
				}
				oi += n
				ni += n
			case diffmatchpatch.DiffDelete:
				oi += n
			case diffmatchpatch.DiffInsert:
				for k := 0; k < n; k++ {
					if o, ok := live[ni+k]; ok {
						out[o].Commit = v.hash(x)
					}
				}
				ni += n
			}
		}
		live = next
	}
	return out, nil
}

// text is a file's content at a commit.
func (q *query) text(c plumbing.Hash, file string) (string, bool, error) {
	d, err := q.doc(c, file)
	if err != nil || d.blob.IsZero() {
		return "", false, err
	}
	data, err := q.ix.repo.ReadBlob(d.blob)
	return string(data), err == nil, err
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// FindMutation returns the commits reachable from the tips' indexes that
// carry a mutation id, newest first.
func (ix *Index) FindMutation(ctx context.Context, id string, tips ...plumbing.Hash) ([]plumbing.Hash, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	v, err := ix.view(ctx, tips...)
	if err != nil {
		return nil, err
	}
	ns := v.mutation(id)
	sort.Slice(ns, func(i, j int) bool { return ns[i] > ns[j] })
	out := make([]plumbing.Hash, len(ns))
	for i, n := range ns {
		out[i] = v.hash(n)
	}
	return out, nil
}

// Bisect finds the first commit on bad's first-parent chain, after good,
// at which holds becomes true, in O(log n) calls of holds (and O(log n)
// index steps each). good zero means "before the first commit". It
// returns the commit and how many states it read.
func (ix *Index) Bisect(ctx context.Context, good, bad plumbing.Hash, holds func(plumbing.Hash) (bool, error)) (plumbing.Hash, int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	v, err := ix.view(ctx, good, bad)
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	nb, _ := v.find(bad)
	lo := int32(-1)
	if !good.IsZero() {
		ng, _ := v.find(good)
		if !v.onChain(ng, nb) {
			return plumbing.ZeroHash, 0, fmt.Errorf("%w: good %s is not on the first-parent history of bad %s", ErrNotAncestor, good, bad)
		}
		lo = v.depth(ng)
	}
	hi := v.depth(nb)
	reads := 0
	for hi-lo > 1 {
		if err := ctx.Err(); err != nil {
			return plumbing.ZeroHash, reads, err
		}
		mid := lo + (hi-lo)/2
		reads++
		ok, err := holds(v.hash(v.ancestorAt(nb, mid)))
		if err != nil {
			return plumbing.ZeroHash, reads, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return v.hash(v.ancestorAt(nb, hi)), reads, nil
}
