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
	"github.com/aiwg/aiwg-state/verbiage"
)

// maxCachedTrees bounds the decoded trees kept between commits; a commit
// re-reads mostly its parent's trees, which the previous commit read.
const maxCachedTrees = 8192

// shapeError is a commit whose trees cannot be read as a store's: a tree
// git and the checks would read differently (parseTree), or a directory
// beyond the store's path limits. checkCommit reports it as a store-path
// violation at path and checks the commit no further: its paths are not
// the ones git would show.
type shapeError struct {
	path   string // the directory ("" for the root)
	detail string
}

func (e *shapeError) Error() string { return e.path + ": " + e.detail }

// treeAt is readTree for the tree at dir of a commit: a malformed tree is a
// *shapeError naming dir.
func (c *checker) treeAt(h, dir string) ([]treeEntry, error) {
	es, err := c.readTree(h)
	if errors.Is(err, errTreeMalformed) {
		why := strings.TrimPrefix(errors.Unwrap(err).Error(), errTreeMalformed.Error()+": ")
		return nil, &shapeError{path: dir, detail: fmt.Sprintf("tree %s is one git reads differently (%s): write trees with git or aiwg-state, which sort entries and never repeat a name", short(h), why)}
	}
	return es, err
}

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
// The bases of a pair are computed once per check: a push of merges of the
// same branches asks for the same pairs again.
func (c *checker) mergeBaseTrees(parents []plumbing.Hash) ([]string, error) {
	seen := map[string]bool{}
	var trees []string
	for i := range parents {
		for j := i + 1; j < len(parents); j++ {
			bases, err := c.mergeBases(parents[i].String(), parents[j].String())
			if err != nil {
				return nil, err
			}
			for _, b := range bases {
				t := ""
				if b != "" {
					bc, err := c.readCommit(b)
					if err != nil {
						return nil, err
					}
					t = bc.Tree.String()
				}
				if !seen[t] {
					seen[t] = true
					trees = append(trees, t)
				}
			}
		}
	}
	return trees, nil
}

// mergeBases is git merge-base --all of two commits, [""] when they share
// no history, remembered per pair.
func (c *checker) mergeBases(a, b string) ([]string, error) {
	if a > b {
		a, b = b, a
	}
	key := [2]string{a, b}
	if bases, ok := c.bases[key]; ok {
		return bases, nil
	}
	cmd := exec.CommandContext(c.ctx, "git", "--git-dir", c.gitDir, "merge-base", "--all", a, b)
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	var bases []string
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 1 && len(bytes.TrimSpace(out)) == 0 && stderr.Len() == 0:
		bases = []string{""} // unrelated histories
	case err != nil:
		return nil, fmt.Errorf("git merge-base: %s: %w", strings.TrimSpace(stderr.String()), err)
	default:
		bases = strings.Fields(string(out))
	}
	if c.bases == nil {
		c.bases = map[[2]string][]string{}
	}
	c.bases[key] = bases
	return bases, nil
}

// diff appends the files that differ between trees a and b ("" = empty),
// skipping equal subtrees whole. It walks no deeper than a store path may
// go (verbiage.MaxStoreDepth segments, MaxStorePathLen bytes): a deeper
// directory is a *shapeError, found before anything is read below it.
func (c *checker) diff(a, b, prefix, agent string, out *[]change) error {
	if a == b {
		return nil
	}
	dir := strings.TrimSuffix(prefix, "/")
	if dir != "" {
		if n := strings.Count(dir, "/") + 1; n >= verbiage.MaxStoreDepth {
			return &shapeError{path: dir, detail: fmt.Sprintf("a directory %d levels deep: a store path has at most %d segments", n, verbiage.MaxStoreDepth)}
		}
		if len(prefix) >= verbiage.MaxStorePathLen {
			return &shapeError{path: dir, detail: fmt.Sprintf("a directory path of %d bytes: a store path has at most %d", len(dir), verbiage.MaxStorePathLen)}
		}
	}
	var ea, eb []treeEntry
	var err error
	if a != "" {
		if ea, err = c.treeAt(a, dir); err != nil {
			return err
		}
	}
	if b != "" {
		if eb, err = c.treeAt(b, dir); err != nil {
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

// checkSettingsTrees makes sure the settings in force are the files git
// shows: the trees holding them (the root's and .aiwg's, whole) are ones
// git and parseTree read alike, so that reading rev:path through git finds
// what every reader of the store finds. A server whose accepted history
// holds such a tree (pushed before they were refused) refuses every push
// until an administrator repairs it, rather than guess which policy holds.
func (c *checker) checkSettingsTrees(rev string) error {
	cm, err := c.readCommit(rev + "^{commit}")
	if err != nil {
		return err
	}
	var walk func(tree, dir string) error
	walk = func(tree, dir string) error {
		es, err := c.treeAt(tree, dir)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.isDir() && (dir != "" || e.name == ".aiwg") {
				if err := walk(e.hash, joinPath(dir, e.name)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var shape *shapeError
	if err := walk(cm.Tree.String(), ""); errors.As(err, &shape) {
		where := shape.path
		if where == "" {
			where = "the root"
		}
		return fmt.Errorf("the settings in force (%s) cannot be read as git reads them: %s: %s; repair the branch on the server (git fsck --strict names the object)", rev, where, shape.detail)
	} else if err != nil {
		return err
	}
	return nil
}

// lookup finds the file entry at path in a tree; a zero entry when absent
// or a directory.
func (c *checker) lookup(tree, path string) (treeEntry, error) {
	e, err := c.entryAt(tree, path)
	if err != nil || e.isDir() {
		return treeEntry{}, err
	}
	return e, nil
}

// entryAt finds the entry at path in a tree, file or directory, walking
// the trees readTree caches; a zero entry when absent.
func (c *checker) entryAt(tree, path string) (treeEntry, error) {
	dir := ""
	for part := range strings.SplitSeq(path, "/") {
		es, err := c.treeAt(tree, dir)
		if err != nil {
			return treeEntry{}, err
		}
		found := find(es, part)
		if found == nil {
			return treeEntry{}, nil
		}
		dir = joinPath(dir, part)
		if dir == path {
			return *found, nil
		}
		if !found.isDir() {
			return treeEntry{}, nil
		}
		tree = found.hash
	}
	return treeEntry{}, nil
}

// find is the entry of a tree named name, nil when none.
func find(es []treeEntry, name string) *treeEntry {
	for j := range es {
		if es[j].name == name {
			return &es[j]
		}
	}
	return nil
}
