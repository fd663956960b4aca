package repo

import (
	"context"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// OpenWithObjects opens the bare repository at dir as Open does, but
// reads its objects from objectDir and then from the directories
// alternates names (and those objectDir's own info/alternates lists), as
// git does when the environment names them (GIT_OBJECT_DIRECTORY,
// GIT_ALTERNATE_OBJECT_DIRECTORIES). Inside a pre-receive hook that is
// where the pushed objects are: in a quarantine directory that git moves
// into the repository only once the hook accepts the push, the
// repository's own objects being its alternate. The Repo is for reading
// objects and refs; it must not write (its objects would land in the
// quarantine, which git discards when the push is refused).
func OpenWithObjects(ctx context.Context, dir, objectDir string, alternates []string, opts Options) (*Repo, error) {
	r, err := Open(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	o := newObjDirReader(filepath.Clean(objectDir), 0)
	info := o.alternates() // objectDir's own info/alternates, after the environment's, as git orders them
	var alts []*objReader
	for _, a := range alternates {
		if a = filepath.Clean(a); a != o.dir {
			alts = append(alts, newObjDirReader(a, 1))
		}
	}
	o.alts = append(alts, info...)
	r.objs.close()
	r.objs = o
	return r, nil
}

// OnlyInObjectDir reports whether h is in the object directory the Repo
// reads first (OpenWithObjects' objectDir) and in none of its alternates:
// inside pre-receive, an object the push brought that the repository did
// not have. It reads no object. The alternates' packs are listed once: a
// pack a concurrent repack put in place since may be missed, and h then
// reported as new, which the caller must take as "maybe new".
func (r *Repo) OnlyInObjectDir(h plumbing.Hash) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.objs
	defer o.releaseRetired()
	return o.has(h) && !o.inAlternates(h)
}

// has: h is in this directory (its packs or loose), not its alternates.
func (o *objReader) has(h plumbing.Hash) bool {
	return o.lookup(h, func(*packIndex, int64) bool { return true }, func() bool { return o.hasLoose(h) })
}

func (o *objReader) hasLoose(h plumbing.Hash) bool {
	s := h.String()
	_, err := os.Lstat(filepath.Join(o.dir, s[:2], s[2:]))
	return err == nil
}

// inAlternates: h is in one of this directory's alternates, at any depth,
// as their packs were listed (a miss lists nothing again).
func (o *objReader) inAlternates(h plumbing.Hash) bool {
	for _, a := range o.alternates() {
		if !a.loaded {
			a.scan()
		}
		for _, p := range a.packs {
			if p.load(a.dir) {
				if _, ok := p.find(h); ok {
					return true
				}
			}
		}
		if a.hasLoose(h) || a.inAlternates(h) {
			return true
		}
	}
	return false
}
