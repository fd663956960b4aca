package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/repo"
)

// Reading objects in this process.
//
// A push is checked on a busy server once per agent sync: each git
// process the check starts (cat-file, rev-list, merge-base, symbolic-ref)
// costs about as much CPU to start as the check itself costs. So the
// checker reads objects and refs with package repo, from the directories
// git's environment names (inside pre-receive, the push's quarantine and
// the repository's own objects as its alternate), and walks the commits
// a push brings itself (walk.go); the merge bases of a merge the push
// brings stay git's (git merge-base walks the server's recent history
// faster, with its commit-graph). It reads in process only what it reads
// exactly as git does:
// object ids and full ref names, peeled to a commit or followed down a
// tree path. Anything else (a revision such as main~2, a repository git
// would read differently: a ref namespace, a shallow or sha256
// repository, quoted alternates) goes to git as before.

// inProcessInfoMax is the largest object info reads whole to learn its
// type; over it, git cat-file --batch-check says, so that a pushed blob
// over every limit is measured before anything reads it.
const inProcessInfoMax = 4 << 20

// rewritesHistory reports grafts or replace refs in gitDir: git then
// reads some commits' parents (or whole objects) as they say, where repo
// reads each object as it is, so git answers every question.
func rewritesHistory(gitDir string) bool {
	if _, err := os.Lstat(filepath.Join(gitDir, "info", "grafts")); err == nil {
		return true
	}
	if entries, err := os.ReadDir(filepath.Join(gitDir, "refs", "replace")); err == nil && len(entries) > 0 {
		return true
	}
	packed, _ := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	return bytes.Contains(packed, []byte(" refs/replace/"))
}

// openObjects opens gitDir for reading in this process, with the object
// directories git's environment names; nil when git must read it.
// quarantined: the environment is pre-receive's, which names the push's
// quarantine, the repository's objects being its alternate.
func openObjects(ctx context.Context, gitDir string) (r *repo.Repo, quarantined bool) {
	for _, v := range []string{"GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE"} {
		if os.Getenv(v) != "" {
			return nil, false
		}
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "shallow")); err == nil {
		return nil, false
	}
	if rewritesHistory(gitDir) {
		return nil, false
	}
	objDir := os.Getenv("GIT_OBJECT_DIRECTORY")
	if objDir == "" {
		objDir = filepath.Join(gitDir, "objects")
	}
	var alts []string
	if env := os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"); env != "" {
		for _, a := range filepath.SplitList(env) {
			if strings.HasPrefix(a, `"`) {
				return nil, false // git's C quoting, which repo does not read
			}
			if a != "" {
				alts = append(alts, a)
			}
		}
	}
	r, err := repo.OpenWithObjects(ctx, gitDir, objDir, alts, repo.Options{})
	if err != nil {
		return nil, false
	}
	quarantined = os.Getenv("GIT_QUARANTINE_PATH") != "" && os.Getenv("GIT_OBJECT_DIRECTORY") != "" && len(alts) > 0
	return r, quarantined
}

// plainRefName: name is a full ref name git reads as the file of that
// name (git check-ref-format's rules, and no '@'): anything else is git's
// to resolve.
func plainRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.ContainsAny(name, " ~^:?*[\\@{}") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".") || strings.HasSuffix(part, ".lock") || strings.Contains(part, "..") {
			return false
		}
	}
	return true
}

// objectID reads a full, lowercase object id (git reads forty hex digits
// as an id before any ref of that name).
func objectID(s string) (plumbing.Hash, bool) {
	if len(s) != 40 || strings.Trim(s, "0123456789abcdef") != "" {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(s), true
}

// resolveHere resolves what read and info are asked for, as cat-file
// would: ID, REF (a full name, refs/… or HEAD), either followed by
// ^{commit}, or by :PATH. ok is false when git must answer.
func (c *catFile) resolveHere(name string) (h plumbing.Hash, ok bool, err error) {
	// git reads the name as a C string, up to a NUL; control characters
	// are left to git too.
	if strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return h, false, nil
	}
	base, path, hasPath := strings.Cut(name, ":")
	peel := false
	if b, found := strings.CutSuffix(base, "^{commit}"); found && !hasPath {
		base, peel = b, true
	}
	if h, ok = objectID(base); !ok {
		if base != "HEAD" && !plainRefName(base) {
			return h, false, nil
		}
		// A ref that is not there may be one git finds by another
		// spelling (refs/heads/refs/heads/x): git says.
		if h, err = c.r.Ref(base); err != nil {
			return h, false, nil
		}
	}
	switch {
	case peel:
		h, err = c.peel(h, plumbing.CommitObject)
		return h, true, err
	case hasPath:
		return c.follow(h, path)
	}
	return h, true, nil
}

// object reads one object, a missing one being errMissing. The empty
// tree is one git knows without the object, as every command does.
func (c *catFile) object(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if h == repo.EmptyTree() {
		return plumbing.TreeObject, []byte{}, nil
	}
	t, body, err := c.r.ReadObject(h)
	if errors.Is(err, repo.ErrObjectMissing) {
		return t, nil, fmt.Errorf("%s: %w", h, errMissing)
	}
	return t, body, err
}

// peel follows tags down to an object of type want (a commit, a tree):
// errMissing when there is none, as cat-file answers for X^{commit}.
func (c *catFile) peel(h plumbing.Hash, want plumbing.ObjectType) (plumbing.Hash, error) {
	for depth := 0; depth < 64; depth++ {
		t, body, err := c.object(h)
		if err != nil {
			return h, err
		}
		switch {
		case t == want:
			return h, nil
		case t == plumbing.TagObject:
			tag, err := repo.ParseTag(h, body)
			if err != nil {
				return h, fmt.Errorf("%s: %w", h, errMissing)
			}
			h = tag.Target
		case t == plumbing.CommitObject && want == plumbing.TreeObject:
			cm, err := repo.ParseCommit(h, body)
			if err != nil {
				return h, fmt.Errorf("%s: %w", h, errMissing)
			}
			h = cm.Tree
		default:
			return h, fmt.Errorf("%s is a %s: %w", h, t, errMissing)
		}
	}
	return h, fmt.Errorf("%s: tags nest too deep: %w", h, errMissing)
}

// follow finds path in the tree of h (a commit, a tag of one, a tree);
// ok is false when git must answer (a tree this checker reads otherwise
// than git: parseTree refuses it, and git is asked what it sees).
func (c *catFile) follow(h plumbing.Hash, path string) (plumbing.Hash, bool, error) {
	h, err := c.peel(h, plumbing.TreeObject)
	if err != nil || path == "" {
		return h, true, err
	}
	parts := strings.Split(path, "/")
	for i, part := range parts {
		if part == "" || part == "." || part == ".." {
			return h, false, nil
		}
		t, body, err := c.object(h)
		if err != nil {
			return h, true, err
		}
		if t != plumbing.TreeObject {
			return h, true, fmt.Errorf("%s: %w", path, errMissing)
		}
		es, err := parseTree(body)
		if err != nil {
			return h, false, nil
		}
		found := false
		for _, e := range es {
			if e.name == part {
				if i < len(parts)-1 && !e.isDir() {
					return h, true, fmt.Errorf("%s: %w", path, errMissing)
				}
				h, found = plumbing.NewHash(e.hash), true
				break
			}
		}
		if !found {
			return h, true, fmt.Errorf("%s: %w", path, errMissing)
		}
	}
	return h, true, nil
}

// readHere is read in this process; ok is false when git must answer.
func (c *catFile) readHere(name string) (string, []byte, bool, error) {
	h, ok, err := c.resolveHere(name)
	if !ok || err != nil {
		return "", nil, ok, err
	}
	t, body, err := c.object(h)
	if err != nil {
		return "", nil, true, err
	}
	return t.String(), body, true, nil
}

// infoHere is info in this process; ok is false when git must answer.
func (c *catFile) infoHere(name string) (string, int64, bool, error) {
	h, ok, err := c.resolveHere(name)
	if !ok || err != nil {
		return "", 0, ok, err
	}
	if h == repo.EmptyTree() {
		return plumbing.TreeObject.String(), 0, true, nil
	}
	size, err := c.r.ObjectSize(h)
	if errors.Is(err, repo.ErrObjectMissing) {
		return "", 0, true, fmt.Errorf("%s: %w", name, errMissing)
	} else if err != nil {
		return "", 0, true, err
	}
	if size > inProcessInfoMax {
		return "", 0, false, nil
	}
	t, _, err := c.object(h)
	if err != nil {
		return "", 0, true, err
	}
	return t.String(), size, true, nil
}

// commitsHere lists the commits rev-list would for args (one positive
// object id, then --not and object ids, full ref names, --branches or
// --tags), oldest first in git's --topo-order, inside pre-receive (see
// walk.go); ok is false when git must answer.
func (c *checker) commitsHere(args []string) ([]string, bool, error) {
	r := c.repo()
	if r == nil || !c.cat.quarantined || len(args) < 1 {
		return nil, false, nil
	}
	tip, ok := objectID(args[0])
	if !ok {
		return nil, false, nil
	}
	// A tip that is no commit (nor a tag of one) is git's to refuse.
	if t, _, err := c.cat.object(tip); err != nil || t != plumbing.CommitObject && t != plumbing.TagObject {
		return nil, false, nil
	}
	tip, err := c.cat.peel(tip, plumbing.CommitObject)
	if err != nil {
		return nil, false, nil
	}
	// The default branch first: the boundary commits of a push are
	// looked for on its first-parent chain first.
	var not, branches []plumbing.Hash
	if h, err := r.Ref(c.defaultRef(c.ctx)); err == nil && slices.Contains(args, "--branches") {
		branches = append(branches, h)
	}
	for i, a := range args[1:] {
		if i == 0 {
			if a != "--not" {
				return nil, false, nil
			}
			continue
		}
		switch {
		case a == "--branches" || a == "--tags":
			prefix := map[string]string{"--branches": "refs/heads/", "--tags": "refs/tags/"}[a]
			refs, names, err := r.Refs(prefix)
			if err != nil {
				return nil, false, nil
			}
			for _, n := range names {
				if a == "--branches" {
					branches = append(branches, refs[n])
				} else {
					not = append(not, refs[n])
				}
			}
		case plainRefName(a):
			h, err := r.Ref(a)
			if err != nil {
				return nil, false, nil
			}
			not = append(not, h)
		default:
			h, ok := objectID(a)
			if !ok {
				return nil, false, nil
			}
			not = append(not, h)
		}
	}
	// What a negative tip names that is no commit (a tag of a tree) hides
	// no commit, as in git; one that does not read hides nothing (git
	// skips a broken ref too): the walk then lists more, never less. A
	// branch names a commit, as a push leaves it: it is taken as it is,
	// unread (one that names a tag then hides nothing, and git answers).
	hide := branches
	for _, h := range not {
		if p, err := c.cat.peel(h, plumbing.CommitObject); err == nil {
			hide = append(hide, p)
		}
	}
	hs, ok, err := newCommitsQuarantined(r, tip, hide)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out, true, nil
}

// ancestorHere reports whether old is new or an ancestor of new, shown by
// way of the commits the push brings (see walk.go); false says nothing:
// git merge-base --is-ancestor must answer.
func (c *checker) ancestorHere(old, new plumbing.Hash) bool {
	r := c.repo()
	return r != nil && c.cat.quarantined && reachesInQuarantine(r, old, new)
}

// headHere is git symbolic-ref -q HEAD in this process: the branch HEAD
// names, when it names one that is no symbolic ref itself (git follows
// those: then git answers); ok is false when git must answer.
func (c *checker) headHere() (string, bool) {
	r := c.repo()
	if r == nil {
		return "", false
	}
	ref, err := r.Head()
	if err != nil {
		return "", false
	}
	if t, err := r.RefTarget(ref); err != nil || t != ref {
		return "", false
	}
	return ref, true
}

// repo is the in-process reader of the checker's objects, nil when git
// reads them.
func (c *checker) repo() *repo.Repo {
	if c.cat == nil {
		return nil
	}
	return c.cat.r
}
