package repo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/errkind"
)

// Resolve turns a revision into a commit hash. It takes a full or
// abbreviated commit id, a branch, a tag (annotated tags are peeled),
// HEAD, a full ref name, any of those followed by ~N or ^N, and an
// RFC 3339 time, which means the first-parent ancestor of head that was
// committed at or before that time (the state as it was then).
func (r *Repo) Resolve(rev string, head string) (plumbing.Hash, error) {
	if rev == "" {
		return plumbing.ZeroHash, fmt.Errorf("empty revision: %w", ErrNotFound)
	}
	if t, err := time.Parse(time.RFC3339, rev); err == nil {
		return r.AtTime(head, t)
	}
	base, suffix := splitSuffix(rev)
	h, err := r.resolveName(base, head)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for suffix != "" {
		op := suffix[0]
		if op != '~' && op != '^' {
			// Never a guess: main~3...main and HEAD~1x are not main~3
			// and HEAD~1 with something ignored.
			return plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "%q is not a revision this command takes (a name or id, then ~N or ^N)", rev)
		}
		suffix = suffix[1:]
		n := 1
		j := 0
		for j < len(suffix) && suffix[j] >= '0' && suffix[j] <= '9' {
			j++
		}
		if j > 0 {
			n, _ = strconv.Atoi(suffix[:j])
			suffix = suffix[j:]
		}
		c, err := r.ReadCommit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch op {
		case '~':
			for i := 0; i < n; i++ {
				if len(c.Parents) == 0 {
					if c.Shallow {
						return plumbing.ZeroHash, &ShallowError{Rev: rev}
					}
					return plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "%s: history is shorter than that", rev)
				}
				if c, err = r.ReadCommit(c.Parents[0]); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			h = c.Hash
		case '^':
			if n == 0 {
				continue
			}
			if n > len(c.Parents) {
				if c.Shallow {
					return plumbing.ZeroHash, &ShallowError{Rev: rev}
				}
				return plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "%s: no parent %d", rev, n)
			}
			h = c.Parents[n-1]
		}
	}
	return h, nil
}

func splitSuffix(rev string) (string, string) {
	i := strings.IndexAny(rev, "~^")
	if i < 0 {
		return rev, ""
	}
	return rev[:i], rev[i:]
}

func (r *Repo) resolveName(name, head string) (plumbing.Hash, error) {
	if name == "HEAD" || name == "@" {
		name = head
	}
	// A full object id names that object, whatever refs are named like
	// it, as git reads it (a branch named so would otherwise change what
	// an id means).
	if len(name) == 40 && plumbing.IsHash(name) {
		return r.expandHash(strings.ToLower(name))
	}
	// name is still HEAD when head is: a detached HEAD (a git clone's
	// checkout), read as the commit it names.
	candidates := []string{name}
	if name != "HEAD" && !strings.HasPrefix(name, "refs/") {
		// git's order (git help revisions).
		candidates = []string{"refs/" + name, "refs/tags/" + name, "refs/heads/" + name, "refs/remotes/" + name, "refs/remotes/" + name + "/HEAD"}
		if isPseudoref(name) {
			// ORIG_HEAD, FETCH_HEAD...: git reads the file in the git
			// directory first.
			candidates = append([]string{name}, candidates...)
		}
	}
	for i, ref := range candidates {
		h, err := r.Ref(ref)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if strings.HasPrefix(ref, "refs/tags/") && len(candidates) > 1 {
			// git takes the tag, with a warning that scrolls past;
			// the answer is refused rather than maybe the wrong one.
			if _, err := r.Ref(candidates[i+1]); err == nil {
				return plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "%q is ambiguous: it is both the tag refs/tags/%s and the branch refs/heads/%s; name the one you mean (tags/%s or heads/%s)", name, name, name, name, name)
			}
		}
		return r.Peel(h)
	}
	if isHex(name) && len(name) >= 4 && len(name) <= 40 {
		return r.expandHash(name)
	}
	return plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "unknown revision %q", name)
}

// Peel follows annotated tags to the commit they name.
func (r *Repo) Peel(h plumbing.Hash) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		t, body, err := r.ReadObject(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if t != plumbing.TagObject {
			return h, nil
		}
		line, _, _ := strings.Cut(string(body), "\n")
		target, ok := strings.CutPrefix(line, "object ")
		if !ok || !plumbing.IsHash(target) {
			return plumbing.ZeroHash, fmt.Errorf("tag %s: corrupt", h)
		}
		h = plumbing.NewHash(target)
	}
	return plumbing.ZeroHash, fmt.Errorf("tag %s: chain too long", h)
}

// isPseudoref reports whether name has the form of a ref git keeps at the
// top of the git directory (ORIG_HEAD, FETCH_HEAD, MERGE_HEAD): capitals
// and underscores ending in _HEAD.
func isPseudoref(name string) bool {
	for _, c := range []byte(name) {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return strings.HasSuffix(name, "_HEAD")
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (r *Repo) expandHash(prefix string) (plumbing.Hash, error) {
	if len(prefix) == 40 {
		h := plumbing.NewHash(prefix)
		if _, _, err := r.ReadObject(h); errors.Is(err, ErrObjectMissing) {
			return plumbing.ZeroHash, r.unknownRevision(prefix, err)
		} else if err != nil {
			return plumbing.ZeroHash, err
		}
		return r.Peel(h)
	}
	r.mu.Lock()
	match := r.objs.withPrefix(prefix)
	r.mu.Unlock()
	switch len(match) {
	case 0:
		if r.IsShallow() {
			return plumbing.ZeroHash, &ShallowError{Rev: prefix}
		}
		return plumbing.ZeroHash, errkind.Errorf(ErrNotFound, "unknown revision %q", prefix)
	case 1:
		return r.Peel(match[0])
	}
	return plumbing.ZeroHash, fmt.Errorf("ambiguous revision %q matches %d objects: %w", prefix, len(match), ErrNotFound)
}

// AtTime returns the newest first-parent ancestor of ref committed at or
// before t.
func (r *Repo) AtTime(ref string, t time.Time) (plumbing.Hash, error) {
	h, err := r.Ref(ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for !h.IsZero() {
		c, err := r.ReadCommit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if !c.Committer.When.After(t) {
			return h, nil
		}
		if len(c.Parents) == 0 {
			if c.Shallow {
				return plumbing.ZeroHash, &ShallowError{Rev: t.Format(time.RFC3339)}
			}
			break
		}
		h = c.Parents[0]
	}
	return plumbing.ZeroHash, fmt.Errorf("no commit on %s at or before %s: %w", ref, t.Format(time.RFC3339), ErrNotFound)
}

// FirstParents calls fn for each commit from h back along first parents,
// newest first, until fn returns false or history ends.
func (r *Repo) FirstParents(h plumbing.Hash, fn func(*Commit) (bool, error)) error {
	for !h.IsZero() {
		c, err := r.ReadCommit(h)
		if err != nil {
			return err
		}
		more, err := fn(c)
		if err != nil || !more {
			return err
		}
		if len(c.Parents) == 0 {
			return nil
		}
		h = c.Parents[0]
	}
	return nil
}
