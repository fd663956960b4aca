package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newGcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove expired temporary variables and values and old trajectories (a commit each) and pack the store's objects",
		Description: `Temporary variables past their --ttl are invisible to reads already;
gc removes their files in one commit (history keeps them), and documents and
keys past their time to live (set --ttl, put --ttl) in another, and RLM
trajectories older than the retention (trajectories.retention_days in the
manifest, 90 by default, 0 keeps them all; see aiwg-state config) in a third,
as traj prune does by hand. Then objects are
packed: writes extend a small tail pack and roll full ones up geometrically
once there are more than 50; gc --full packs everything into one pack with
git gc, for the smallest store. Both are safe while agents write. Packing
needs the git CLI. gc also removes what killed processes left (temporary
packs, stray lock files, indexes, bitmaps and .keep files whose pack or
writer is gone), indexes again with git index-pack a pack left without
its index, and drops a multi-pack-index naming a pack that is gone;
another gc running, ours or git's, is exit 5.

Examples:
   aiwg-state gc
   aiwg-state gc --full           # one pack, via git gc
   aiwg-state gc --json           # expired_removed, values_expired, trajectories_pruned, bytes_before, bytes_after

The sizes are of the objects (packs, their indexes, loose objects); what
git gc adds to speed reads up (bitmaps, the commit-graph) is not counted.`,
		Flags: append(writeFlags(), &cli.BoolFlag{Name: "full", Usage: "repack everything into one pack (git gc)"}),
		Action: command(func(s *session) error {
			return runGc(s.c.Context, s, gcOptions{
				Full: s.c.Bool("full"),
			})
		}),
	}
}

// gcOptions are the flags runGc reads.
type gcOptions struct {
	Full bool // --full
}

func runGc(ctx context.Context, s *session, opts gcOptions) error {
	_, removed, err := s.store.States().RemoveExpired(ctx, s.writeOptions())
	if err != nil && !errors.Is(err, store.ErrNoChange) && !(s.store.WorkTree() != "" && errors.Is(err, store.ErrReadOnly)) {
		// (A git clone's checked-out branch is not written:
		// expiry is the store's to do; packing is not.)
		return err
	}
	var values []string
	ex, _, err := s.store.RemoveExpired(ctx, s.writeOptions())
	switch {
	case err == nil:
		values = ex.Paths
	case errors.Is(err, store.ErrNoChange), s.store.WorkTree() != "" && errors.Is(err, store.ErrReadOnly):
	default:
		return err
	}
	pruned, _, err := s.store.Trajectories().PruneRetained(ctx, s.writeOptions())
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNoChange), s.store.WorkTree() != "" && errors.Is(err, store.ErrReadOnly):
	default:
		return err
	}
	before, _ := s.store.ObjectBytes()
	if err := s.store.GC(ctx, opts.Full); err != nil {
		return err
	}
	after, _ := s.store.ObjectBytes()
	if s.json {
		return printJSON(s.out, map[string]any{"expired_removed": nonNil(removed), "values_expired": nonNil(values), "trajectories_pruned": nonNil(pruned), "bytes_before": before, "bytes_after": after})
	}
	if len(values) > 0 {
		fmt.Fprintf(s.out, "removed %d expired values: %s\n", len(values), strings.Join(values, ", "))
	}
	if len(removed) > 0 {
		fmt.Fprintf(s.out, "removed %d expired temporary variables\n", len(removed))
	}
	if len(pruned) > 0 {
		fmt.Fprintf(s.out, "pruned %d trajector%s past the retention: %s\n", len(pruned), map[bool]string{true: "y", false: "ies"}[len(pruned) == 1], strings.Join(pruned, ", "))
	}
	fmt.Fprintf(s.out, "objects: %d bytes -> %d bytes\n", before, after)
	return nil
}
