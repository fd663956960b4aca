package repo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// VerifyPacks checks every pack of the object database against its
// checksums: the pack's trailing SHA-1 of its contents, its index's own,
// and the index's copy of the pack's. It reads every pack whole (what
// `git fsck` costs too), so it is for fsck, not for the write path, which
// checks a tail when it first reads it. Each damaged file is one
// *CorruptError.
func (r *Repo) VerifyPacks(ctx context.Context) ([]error, error) {
	dir := filepath.Join(r.dir, "objects", "pack")
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var found []error
	for _, e := range es {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return found, err
		}
		base := filepath.Join(dir, strings.TrimSuffix(n, ".idx"))
		idx, err := os.ReadFile(base + ".idx")
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return found, err
		}
		pack, err := os.ReadFile(base + ".pack")
		if errors.Is(err, fs.ErrNotExist) {
			continue // an index without its pack: git ignores it, maintenance removes it
		}
		if err != nil {
			return found, err
		}
		if len(pack) < 32 || string(pack[:4]) != "PACK" {
			found = append(found, &CorruptError{File: "objects/pack/" + filepath.Base(base) + ".pack", Reason: "not a pack"})
			continue
		}
		if err := checkPackSums(base, idx, pack); err != nil {
			found = append(found, err)
		}
	}
	return found, nil
}
