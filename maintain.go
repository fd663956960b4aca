package aiwgstate

import (
	"context"
	"math/rand/v2"
)

// autoMaintainPacks is the pack count past which a write rolls small packs
// up, like git's gc.autoPackLimit.
const autoMaintainPacks = 50

// maybeMaintain checks the pack count after one write in eight (a directory
// read is cheap but not free) and, when there are too many, starts the
// roll-up of small packs in the background. Failures are ignored:
// maintenance is an optimization, and a later write tries again.
func (s *Store) maybeMaintain() {
	if rand.IntN(8) != 0 {
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
