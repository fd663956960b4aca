package aiwgstate

import (
	"context"
)

// autoMaintainPacks is the pack count past which a write rolls small packs
// up, like git's gc.autoPackLimit.
const autoMaintainPacks = 50

// maybeMaintain reads the pack count after a write that added a pack (see
// repo.PacksAdded; a listing of a pack directory that has seen thousands
// of commits costs up to a millisecond) and, when there are too many,
// starts the roll-up of small packs in the background, as git's gc --auto
// runs after the commands that add packs. Failures are ignored:
// maintenance is an optimization, and a later write tries again.
func (s *Store) maybeMaintain() {
	if !s.repo.PacksAdded() {
		return
	}
	if n, err := s.repo.PackCount(); err == nil && n > autoMaintainPacks {
		_ = s.repo.MaintainInBackground()
	}
}

// GC packs the store's objects: full packs everything into one pack as
// `git gc` does; otherwise small packs are rolled up geometrically.
func (s *Store) GC(ctx context.Context, full bool) error {
	return s.repo.Maintain(ctx, full)
}
