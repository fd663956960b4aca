package hooks

import (
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// The commits a push brings, found from its quarantine.
//
// git rev-list NEW --not --branches --tags walks back from NEW and from
// every branch and tag by date until only hidden commits are left: on a
// swarm's server, where every agent commits all the time, that is every
// commit of the last seconds, each read and inflated. Inside pre-receive
// there is a shorter way to the same answer. A commit only in the
// quarantine is one the repository did not have, so no branch or tag
// reaches it (what they reach is in the repository); the walk goes
// through those and stops at the first commits the repository has. Each
// such boundary commit must be shown reached by a branch or tag, and is
// found cheaply in practice: it is a tip (the branch the push moves), or
// on the first-parent chain of the default branch (the main an agent
// merged, which main's history keeps as its first-parent line). One that
// is not found so within a budget leaves the answer to git.

// walkBudget bounds the commits read looking for the boundary commits on
// the tips' first-parent chains.
const walkBudget = 1024

type walkNode struct {
	hash    plumbing.Hash
	parents []plumbing.Hash
	when    int64
	seq     int
}

// newCommitsQuarantined is `git rev-list --reverse --topo-order TIP --not
// HIDE…` inside pre-receive, hide being the commits the negative tips
// name, first the one whose chain most boundary commits sit on (the
// default branch); ok is false when git must answer.
func newCommitsQuarantined(r *repo.Repo, tip plumbing.Hash, hide []plumbing.Hash) ([]plumbing.Hash, bool, error) {
	hidden := map[plumbing.Hash]bool{}
	for _, h := range hide {
		hidden[h] = true
	}
	nodes := map[plumbing.Hash]*walkNode{}
	var list []*walkNode
	var boundary []plumbing.Hash
	seenBoundary := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if hidden[h] || nodes[h] != nil || seenBoundary[h] {
			continue
		}
		if !r.OnlyInObjectDir(h) {
			seenBoundary[h] = true
			boundary = append(boundary, h)
			continue
		}
		cm, err := r.ReadCommit(h)
		if err != nil {
			return nil, false, nil // git says what is wrong with it
		}
		n := &walkNode{hash: h, parents: cm.Parents, when: cm.Committer.When.Unix(), seq: len(list)}
		nodes[h] = n
		list = append(list, n)
		for i := len(cm.Parents) - 1; i >= 0; i-- {
			stack = append(stack, cm.Parents[i])
		}
	}
	if !reachedByTips(r, boundary, hide) {
		return nil, false, nil
	}
	// In the order git's walk lists them: newest first, ties as found.
	slices.SortStableFunc(list, func(a, b *walkNode) int {
		switch {
		case a.when > b.when:
			return -1
		case a.when < b.when:
			return 1
		}
		return a.seq - b.seq
	})
	return topoOldestFirst(list, nodes), true, nil
}

// reachedByTips reports whether every commit of want is one of tips or on
// a tip's first-parent chain, walking each chain, tips in order, down to
// the oldest commit wanted and within walkBudget commits in all. false
// says nothing: git must answer.
func reachedByTips(r *repo.Repo, want, tips []plumbing.Hash) bool {
	left := map[plumbing.Hash]bool{}
	for _, h := range want {
		left[h] = true
	}
	for _, t := range tips {
		delete(left, t)
	}
	if len(left) == 0 {
		return true
	}
	oldest := int64(1<<63 - 1)
	for h := range left {
		cm, err := r.ReadCommit(h)
		if err != nil {
			return false
		}
		oldest = min(oldest, cm.Committer.When.Unix())
	}
	budget := walkBudget
	walked := map[plumbing.Hash]bool{}
	for _, t := range tips {
		for h := t; budget > 0 && !walked[h]; budget-- {
			walked[h] = true
			cm, err := r.ReadCommit(h)
			if err != nil || len(cm.Parents) == 0 || cm.Committer.When.Unix() < oldest {
				break
			}
			h = cm.Parents[0]
			if delete(left, h); len(left) == 0 {
				return true
			}
		}
	}
	return false
}

// reachesInQuarantine reports whether old is new or an ancestor of new by
// way of commits only in the quarantine (the commits a push brings onto
// a branch whose head was old); false says nothing: git must answer.
func reachesInQuarantine(r *repo.Repo, old, new plumbing.Hash) bool {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{new}
	for len(stack) > 0 && len(seen) < walkBudget {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == old {
			return true
		}
		if seen[h] || !r.OnlyInObjectDir(h) {
			continue
		}
		seen[h] = true
		cm, err := r.ReadCommit(h)
		if err != nil {
			return false
		}
		stack = append(stack, cm.Parents...)
	}
	return false
}

// topoOldestFirst orders list (newest first, as git's walk lists them) as
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
	slices.Reverse(out)
	return out
}
