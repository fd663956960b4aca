package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"
)

func newCatCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print a document as stored",
		ArgsUsage: "FILE",
		Description: `Unlike get, a state document's "ref file://" mounts are printed as
stored, not with the shards inlined. A file that is not a .json document
(a trajectory's report.md) is printed as it is (with --json, as "text").

Examples:
   aiwg-state cat plan.json
   aiwg-state cat plan.json --at HEAD~2
   aiwg-state cat state/state.json      # mounts stay "ref file://..."
   aiwg-state cat trajectories/traj-1a2b3c4d/report.md`,
		Flags:  readFlags(),
		Action: command(func(s *session) error { return runCat(s.c.Context, s) }),
	}
}

func runCat(ctx context.Context, s *session) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(a[0], ".json") {
		// Not a document (a trajectory's report.md): its
		// bytes, as git show prints them.
		data, err := s.store.ReadRaw(ctx, a[0], s.readOptions())
		if err != nil {
			return err
		}
		if s.json {
			return printJSON(s.out, map[string]any{"file": a[0], "text": string(data)})
		}
		_, err = s.out.Write(data)
		return err
	}
	if err := s.mayRead(ctx, a[0]); err != nil {
		return err
	}
	v, err := s.store.Cat(ctx, a[0], s.readOptions())
	if err != nil {
		return err
	}
	return s.printValue(a[0], "", v)
}
