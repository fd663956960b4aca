package hooks

import (
	"fmt"
	"sort"
	"strings"

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
// nothing for a root commit, and for a merge the paths whose entry differs
// from every parent's (what the merge decided, not what it brought in).
func (c *checker) changes(cm *repo.Commit) ([]change, error) {
	agent := cm.Author.Name
	tree := cm.Tree.String()
	first := ""
	if len(cm.Parents) > 0 {
		p, err := c.readCommit(cm.Parents[0].String())
		if err != nil {
			return nil, err
		}
		first = p.Tree.String()
	}
	var out []change
	if err := c.diff(first, tree, "", agent, &out); err != nil {
		return nil, err
	}
	for _, ph := range cm.Parents[min(1, len(cm.Parents)):] {
		p, err := c.readCommit(ph.String())
		if err != nil {
			return nil, err
		}
		kept := out[:0]
		for _, ch := range out {
			e, err := c.lookup(p.Tree.String(), ch.path)
			if err != nil {
				return nil, err
			}
			if e != ch.entry {
				kept = append(kept, ch)
			}
		}
		out = kept
	}
	return out, nil
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
