package repo

import (
	"context"
	"path/filepath"
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
