package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func newConfigCommand() *cli.Command {
	return &cli.Command{
		Name:      "config",
		Usage:     "read or change the store's settings (the manifest .aiwg/store.json; one commit)",
		ArgsUsage: "[KEY [VALUE]]",
		Description: `Settings live in the store, versioned like everything else.

Examples:
   aiwg-state config                                   # the whole manifest
   aiwg-state config limits.max_document_bytes 1048576
   aiwg-state config sync false                        # skip fsync for every user of a scratch store
   aiwg-state config trajectories.retention_days 30    # gc prunes trajectories older than 30 days (0: never)`,
		Flags:  writeFlags(),
		Action: command(func(s *session) error { return runConfig(s.c.Context, s) }),
	}
}

func runConfig(ctx context.Context, s *session) error {
	a, err := args(s.c, 0, 2)
	if err != nil {
		return err
	}
	if len(a) == 2 {
		return s.report(s.store.SetConfig(ctx, a[0], []byte(a[1]), s.writeOptions()))
	}
	key := argAt(a, 0)
	v, err := s.store.Config(ctx, key, s.readOptions())
	if err != nil {
		return err
	}
	return s.printValue(store.ManifestPath, key, v)
}
