package store

import (
	"context"
)

// autoMaintainPacks is the pack count past which a write rolls small packs
// up, like git's gc.autoPackLimit.
const autoMaintainPacks = 50

// maybeMaintain rolls small packs up in the background when a write left
// too many (repo.MaybeMaintain). Failures are ignored: maintenance is an
// optimization, and a later write tries again.
func (s *Store) maybeMaintain() { s.repo.MaybeMaintain(autoMaintainPacks) }

// GC packs the store's objects: full packs everything into one pack as
// `git gc` does; otherwise small packs are rolled up geometrically. It
// writes no commit; the CLI's gc also calls RemoveExpired first.
func (s *Store) GC(ctx context.Context, full bool) error {
	if err := s.repo.Writable(); err != nil {
		return err
	}
	return s.repo.Maintain(ctx, full)
}

// ObjectBytes is the disk space of the store's objects (packs, their
// indexes, loose objects), what GC shrinks; git's read accelerators
// (bitmaps, the commit-graph) and the history index are not counted.
func (s *Store) ObjectBytes() (int64, error) { return s.repo.ObjectBytes() }
