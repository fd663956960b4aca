package store

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"math"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
)

// The access policy judges a merge as the server's pre-receive hook does
// (package hooks): a path the merge takes cleanly from its parents — a
// change another parent made since the merge base — was written by that
// parent's authors, whose commits are judged on their own; anything else
// the merge holds is the merger's write (policy.TakenByMerge). And a merge
// (a fast-forward too) that brings commits the branch does not have yet
// checks each of them against the policy in force on the branch (see
// CheckBrought), as the server checks each pushed commit: a forged merge
// or a write the policy refuses, made with plain git on another branch or
// on a remote without the hook, does not come in by merge, pull, sync or
// integrate.

// entryAt is the blob id at path in tree, "" when absent (or a directory).
func (s *Store) entryAt(tree plumbing.Hash, path string) (string, error) {
	if tree.IsZero() {
		return "", nil
	}
	e, err := s.repo.Lookup(tree, path)
	if errors.Is(err, repo.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if e.IsDir() {
		return "", nil
	}
	return e.Hash.String(), nil
}

// baseTrees is the trees of the merge bases of every pair of parents;
// the empty tree (zero) for parents with no common history.
func (s *Store) baseTrees(parents []plumbing.Hash) ([]plumbing.Hash, error) {
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	add := func(t plumbing.Hash) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for i := range parents {
		for j := i + 1; j < len(parents); j++ {
			bases, err := s.repo.MergeBases(parents[i], parents[j])
			if err != nil {
				return nil, err
			}
			if len(bases) == 0 {
				add(plumbing.ZeroHash)
			}
			for _, b := range bases {
				add(s.TreeOf(b))
			}
		}
	}
	return out, nil
}

// mergeWrites keeps, of the candidate paths of a merge of parents, those
// the merge did not take cleanly from them: the merger's writes. result
// gives the merge's blob id at a path ("" when absent).
func (s *Store) mergeWrites(parents []plumbing.Hash, candidates []string, result func(path string) (string, error)) ([]string, error) {
	trees := make([]plumbing.Hash, len(parents))
	for i, p := range parents {
		c, err := s.repo.ReadCommit(p)
		if err != nil {
			return nil, err
		}
		trees[i] = c.Tree
	}
	bases, err := s.baseTrees(parents)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, path := range candidates {
		r, err := result(path)
		if err != nil {
			return nil, err
		}
		ps := make([]string, len(trees))
		for i, t := range trees {
			if ps[i], err = s.entryAt(t, path); err != nil {
				return nil, err
			}
		}
		bs := make([]string, len(bases))
		for i, t := range bases {
			if bs[i], err = s.entryAt(t, path); err != nil {
				return nil, err
			}
		}
		if !policy.TakenByMerge(r, ps, bs) {
			out = append(out, path)
		}
	}
	return out, nil
}

// commitWrites lists the paths commit c wrote, as the hook counts them:
// against its parent, against nothing for a root commit, and for a merge
// the paths it did not take cleanly from its parents.
func (s *Store) commitWrites(c *repo.Commit) ([]string, error) {
	var paths []string
	seen := map[string]bool{}
	diff := func(from plumbing.Hash) error {
		files, err := s.repo.DiffTrees(from, c.Tree)
		if err != nil {
			return err
		}
		for _, f := range files {
			if !seen[f.Path] {
				seen[f.Path] = true
				paths = append(paths, f.Path)
			}
		}
		return nil
	}
	if len(c.Parents) == 0 {
		return paths, diff(plumbing.ZeroHash)
	}
	for _, p := range c.Parents {
		if err := diff(s.TreeOf(p)); err != nil {
			return nil, err
		}
		if len(c.Parents) == 1 {
			return paths, nil
		}
	}
	return s.mergeWrites(c.Parents, paths, func(path string) (string, error) { return s.entryAt(c.Tree, path) })
}

// broughtWrites is commitWrites for a commit checked against p: a merge
// whose every changed path p lets its author write, none of them the
// policy itself, is judged on those paths as they are, without the merge
// bases that tell which of them the merge took from its parents (they
// would only remove paths from a list p allows already). A swarm's sync
// brings hundreds of merges; finding each one's bases walks history.
func (s *Store) broughtWrites(c *repo.Commit, p *policy.Policy) ([]string, error) {
	if len(c.Parents) < 2 || p == nil {
		return s.commitWrites(c)
	}
	var paths []string
	seen := map[string]bool{}
	for _, parent := range c.Parents {
		files, err := s.repo.DiffTrees(s.TreeOf(parent), c.Tree)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if seen[f.Path] {
				continue
			}
			if f.Path == policy.Path || p.Check(c.Author.Name, f.Path) != nil {
				return s.commitWrites(c)
			}
			seen[f.Path] = true
			paths = append(paths, f.Path)
		}
	}
	return paths, nil
}

// broughtCommits lists the commits theirs reaches and ours does not, as
// git rev-list theirs --not ours does: both sides are walked together,
// newest commit first, a commit reached from ours marking its ancestors as
// ours, until no commit only theirs reach is left to visit and ours' side
// is older than every commit listed. One that ours reaches after it was
// listed (commits of the same second, visited in id order) is taken back
// and its ancestors marked. Committer times only order the walk: a clock
// that lies can make a commit of ours look brought (it is then checked
// too, never skipped); a brought commit is never taken for ours, which only
// a parent link from ours can do.
func (s *Store) broughtCommits(ours, theirs plumbing.Hash) ([]*repo.Commit, error) {
	const fromTheirs, fromOurs = 1, 2
	if ours.IsZero() || ours == theirs {
		return nil, nil
	}
	flags := map[plumbing.Hash]uint8{}
	popped := map[plumbing.Hash]bool{}
	listed := map[plumbing.Hash]bool{}
	commits := map[plumbing.Hash]*repo.Commit{}
	q := &commitHeap{}
	pending := 0 // queued commits that only theirs reach so far
	push := func(h plumbing.Hash) {
		popped[h] = false
		heap.Push(q, walkItem{h, commits[h].Committer.When.UnixNano()})
	}
	add := func(h plumbing.Hash, f uint8) error {
		old, seen := flags[h]
		flags[h] = old | f
		switch {
		case !seen:
			c, err := s.repo.ReadCommit(h)
			if err != nil {
				return err
			}
			commits[h] = c
			push(h)
			if f == fromTheirs {
				pending++
			}
		case f == fromOurs && old == fromTheirs && !popped[h]:
			pending--
		case f == fromOurs && old == fromTheirs:
			// Listed before ours reached it: take it back, and walk on
			// from it as ours.
			delete(listed, h)
			push(h)
		}
		return nil
	}
	if err := add(ours, fromOurs); err != nil {
		return nil, err
	}
	if err := add(theirs, fromTheirs); err != nil {
		return nil, err
	}
	var order []plumbing.Hash
	oldest := int64(math.MaxInt64) // the oldest commit listed
	for q.Len() > 0 && (pending > 0 || (*q)[0].when >= oldest) {
		it := heap.Pop(q).(walkItem)
		if popped[it.hash] {
			continue // pushed again, and visited since
		}
		popped[it.hash] = true
		f := flags[it.hash]
		if f == fromTheirs {
			pending--
			listed[it.hash] = true
			order = append(order, it.hash)
			oldest = min(oldest, it.when)
		} else {
			f = fromOurs
		}
		for _, p := range commits[it.hash].Parents {
			if err := add(p, f); err != nil {
				return nil, err
			}
		}
	}
	var out []*repo.Commit
	for _, h := range order {
		if listed[h] {
			out = append(out, commits[h])
			delete(listed, h)
		}
	}
	return out, nil
}

type walkItem struct {
	hash plumbing.Hash
	when int64
}

// commitHeap pops the newest commit first, ties by id.
type commitHeap []walkItem

func (q commitHeap) Len() int { return len(q) }
func (q commitHeap) Less(i, j int) bool {
	if q[i].when != q[j].when {
		return q[i].when > q[j].when
	}
	return bytes.Compare(q[i].hash[:], q[j].hash[:]) < 0
}
func (q commitHeap) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitHeap) Push(x any)   { *q = append(*q, x.(walkItem)) }
func (q *commitHeap) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// CheckBrought applies the access policy to every commit a merge of theirs
// into ours brings, parents first. The policy a brought commit is judged by
// is the one in force at ours, or the one in its parent's tree when a
// brought commit allowed to write it put it there (so a worker merging main
// takes the coordinator's new policy and the commits it allows); never an
// older policy a commit's tree still holds from before ours changed it.
func (s *Store) CheckBrought(ours, theirs plumbing.Hash) error {
	p0, err := s.PolicyAt(ours)
	if err != nil || p0 == nil {
		return err
	}
	commits, err := s.broughtCommits(ours, theirs)
	if err != nil {
		return err
	}
	key0, err := s.entryAt(s.TreeOf(ours), policy.Path)
	if err != nil {
		return err
	}
	validated := map[string]*policy.Policy{key0: p0}
	brought := make(map[plumbing.Hash]*repo.Commit, len(commits))
	for _, c := range commits {
		brought[c.Hash] = c
	}
	var order []*repo.Commit
	done := map[plumbing.Hash]bool{}
	var visit func(c *repo.Commit)
	visit = func(c *repo.Commit) {
		if done[c.Hash] {
			return
		}
		done[c.Hash] = true
		for _, ph := range c.Parents {
			if pc, ok := brought[ph]; ok {
				visit(pc)
			}
		}
		order = append(order, c)
	}
	for _, c := range commits {
		visit(c)
	}
	for _, c := range order {
		p := p0
		if len(c.Parents) > 0 && brought[c.Parents[0]] != nil {
			key, err := s.entryAt(s.TreeOf(c.Parents[0]), policy.Path)
			if err != nil {
				return err
			}
			if vp, ok := validated[key]; ok {
				p = vp
			}
		}
		paths, err := s.broughtWrites(c, p)
		if err != nil {
			return err
		}
		wrotePolicy := false
		for _, path := range paths {
			wrotePolicy = wrotePolicy || path == policy.Path
			if err := p.Check(c.Author.Name, path); err != nil {
				var d *policy.Denial
				if errors.As(err, &d) {
					d.Commit = c.Hash.String()[:12]
				}
				return fmt.Errorf("the merge would bring a write the policy refuses: %w", err)
			}
		}
		if wrotePolicy {
			key, err := s.entryAt(c.Tree, policy.Path)
			if err != nil {
				return err
			}
			if key == "" {
				validated[key] = nil // removed by an agent allowed to
			} else if data, err := s.repo.ReadBlob(plumbing.NewHash(key)); err == nil {
				if np, err := policy.Parse(data); err == nil {
					validated[key] = np
				}
			}
		}
	}
	return nil
}
