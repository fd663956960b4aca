package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/repo"
)

// maxCachedTrees bounds the decoded trees kept between commits; a commit
// re-reads mostly its parent's trees, which the previous commit read.
const maxCachedTrees = 8192

func (c *checker) readTree(h string) ([]treeEntry, error) {
	if es, ok := c.trees[h]; ok {
		return es, nil
	}
	typ, body, err := c.cat.read(h)
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("%s is a %s, not a tree", h, typ)
	}
	es, err := parseTree(body)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	if len(c.trees) >= maxCachedTrees {
		clear(c.trees)
	}
	c.trees[h] = es
	return es, nil
}

// changes lists the paths a commit wrote: against its parent, against
// nothing for a root commit, and for a merge every path whose entry the
// merge did not take cleanly from its parents (policy.TakenByMerge): a
// change another parent made since the merge base is that parent's
// authors', judged on their own commits (already on the server, or in
// this push); anything else the merge holds that differs from a parent —
// an old entry brought back, a parent's change thrown away, a hand edit or
// deletion — is the merger's write, judged as such.
func (c *checker) changes(cm *repo.Commit) ([]change, error) {
	agent := cm.Author.Name
	tree := cm.Tree.String()
	trees := make([]string, len(cm.Parents))
	for i, ph := range cm.Parents {
		p, err := c.readCommit(ph.String())
		if err != nil {
			return nil, err
		}
		trees[i] = p.Tree.String()
	}
	var out []change
	if len(trees) < 2 {
		first := ""
		if len(trees) == 1 {
			first = trees[0]
		}
		err := c.diff(first, tree, "", agent, &out)
		return out, err
	}
	// The paths where the merge differs from some parent: the only ones
	// it can have written or thrown away.
	for _, pt := range trees {
		if err := c.diff(pt, tree, "", agent, &out); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	bases, err := c.mergeBaseTrees(cm.Parents)
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for i, ch := range out {
		if i > 0 && out[i-1].path == ch.path {
			continue // listed by more than one parent
		}
		parents := make([]string, len(trees))
		for j, pt := range trees {
			e, err := c.lookup(pt, ch.path)
			if err != nil {
				return nil, err
			}
			parents[j] = entryKey(e)
		}
		based := make([]string, len(bases))
		for j, bt := range bases {
			if bt == "" {
				continue // no common history: the path was nowhere
			}
			e, err := c.lookup(bt, ch.path)
			if err != nil {
				return nil, err
			}
			based[j] = entryKey(e)
		}
		if !policy.TakenByMerge(entryKey(ch.entry), parents, based) {
			ch.merge = true
			kept = append(kept, ch)
		}
	}
	return kept, nil
}

// entryKey spells an entry for policy.TakenByMerge: mode and id, "" when
// absent.
func entryKey(e treeEntry) string {
	if e.hash == "" {
		return ""
	}
	return e.mode + " " + e.hash
}

// mergeBaseTrees is the trees of the merge bases of a merge's parents, as
// git computes them (git merge-base --all), for every pair of parents of
// an octopus merge; "" (the empty tree) when parents share no history.
func (c *checker) mergeBaseTrees(parents []plumbing.Hash) ([]string, error) {
	seen := map[string]bool{}
	var trees []string
	for i := range parents {
		for j := i + 1; j < len(parents); j++ {
			cmd := exec.Command("git", "--git-dir", c.gitDir, "merge-base", "--all", parents[i].String(), parents[j].String())
			cmd.Env = gitEnv()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit) && exit.ExitCode() == 1 && len(bytes.TrimSpace(out)) == 0 && stderr.Len() == 0:
				out = nil // unrelated histories
				if !seen[""] {
					seen[""] = true
					trees = append(trees, "")
				}
			case err != nil:
				return nil, fmt.Errorf("git merge-base: %s: %w", strings.TrimSpace(stderr.String()), err)
			}
			for _, b := range strings.Fields(string(out)) {
				bc, err := c.readCommit(b)
				if err != nil {
					return nil, err
				}
				if t := bc.Tree.String(); !seen[t] {
					seen[t] = true
					trees = append(trees, t)
				}
			}
		}
	}
	return trees, nil
}

// diff appends the files that differ between trees a and b ("" = empty),
// skipping equal subtrees whole.
func (c *checker) diff(a, b, prefix, agent string, out *[]change) error {
	if a == b {
		return nil
	}
	var ea, eb []treeEntry
	var err error
	if a != "" {
		if ea, err = c.readTree(a); err != nil {
			return err
		}
	}
	if b != "" {
		if eb, err = c.readTree(b); err != nil {
			return err
		}
	}
	byName := func(es []treeEntry) map[string]treeEntry {
		m := make(map[string]treeEntry, len(es))
		for _, e := range es {
			m[e.name] = e
		}
		return m
	}
	ma, mb := byName(ea), byName(eb)
	names := make([]string, 0, len(ma)+len(mb))
	for n := range ma {
		names = append(names, n)
	}
	for n := range mb {
		if _, ok := ma[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		x, inA := ma[n]
		y, inB := mb[n]
		if inA && inB && x == y {
			continue
		}
		path := prefix + n
		// A side that is a directory is walked; a file on the other side of
		// the same name counts as deleted or added.
		subA, subB := "", ""
		if inA && x.isDir() {
			subA = x.hash
		}
		if inB && y.isDir() {
			subB = y.hash
		}
		if subA != "" || subB != "" {
			if err := c.diff(subA, subB, path+"/", agent, out); err != nil {
				return err
			}
		}
		switch {
		case inB && !y.isDir():
			*out = append(*out, change{path: path, entry: y, agent: agent})
		case inA && !x.isDir():
			*out = append(*out, change{path: path, agent: agent}) // deleted
		}
	}
	return nil
}

// lookup finds the entry at path in a tree; a zero entry when absent.
func (c *checker) lookup(tree, path string) (treeEntry, error) {
	parts := strings.Split(path, "/")
	for i, part := range parts {
		es, err := c.readTree(tree)
		if err != nil {
			return treeEntry{}, err
		}
		var found *treeEntry
		for j := range es {
			if es[j].name == part {
				found = &es[j]
				break
			}
		}
		if found == nil {
			return treeEntry{}, nil
		}
		if i == len(parts)-1 {
			if found.isDir() {
				return treeEntry{}, nil
			}
			return *found, nil
		}
		if !found.isDir() {
			return treeEntry{}, nil
		}
		tree = found.hash
	}
	return treeEntry{}, nil
}
