package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/store"
)

func checkpointCommand() *cli.Command {
	cpFlags := func() []cli.Flag {
		return append(commonFlags(), stateFlag(), &cli.StringFlag{Name: "agent", Usage: "the tagger", EnvVars: []string{"AIWG_AGENT"}})
	}
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "checkpoints of a state, kept as annotated tags checkpoints/<state>/<name>",
		Description: `git tag -l 'checkpoints/*' and git show <tag> show them to a plain git user.
A state keeps at most 100 checkpoints.

Examples:
   aiwg-state checkpoint create before_refactor
   aiwg-state checkpoint ls
   aiwg-state rollback before_refactor          # restore it as a new commit`,
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "tag the branch head as a checkpoint (never overwrites one)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state checkpoint create before_decomposition -m "plan agreed, about to split"`,
				Flags: append(cpFlags(), &cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "what happened at this checkpoint"}),
				Action: command(func(s *session) error {
					return runCheckpointCreate(s.c.Context, s, checkpointCreateOptions{
						State:   s.c.String("state"),
						Message: s.c.String("message"),
					})
				}),
			},
			{
				Name:  "ls",
				Usage: "list a state's checkpoints, oldest first",
				Description: `Examples:
   aiwg-state checkpoint ls                # the newest state's
   aiwg-state checkpoint ls --state state-a1b2c3d4 --json`,
				Flags: cpFlags(),
				Action: command(func(s *session) error {
					return runCheckpointLs(s.c.Context, s, checkpointLsOptions{
						State: s.c.String("state"),
					})
				}),
			},
			{
				Name:      "show",
				Usage:     "show one checkpoint",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state checkpoint show before_decomposition
   aiwg-state checkpoint show initial_state --state state-a1b2c3d4 --json`,
				Flags: cpFlags(),
				Action: command(func(s *session) error {
					return runCheckpointShow(s.c.Context, s, checkpointShowOptions{
						State: s.c.String("state"),
					})
				}),
			},
			{
				Name:      "rm",
				Usage:     "remove a checkpoint's tag (the commits stay)",
				ArgsUsage: "NAME",
				Description: `Examples:
   aiwg-state checkpoint rm before_decomposition
   aiwg-state checkpoint rm initial_state --state state-a1b2c3d4`,
				Flags: cpFlags(),
				Action: command(func(s *session) error {
					return runCheckpointRm(s.c.Context, s, checkpointRmOptions{
						State: s.c.String("state"),
					})
				}),
			},
			{
				Name:  "prune",
				Usage: "remove the oldest checkpoints until --keep remain",
				Description: `Examples:
   aiwg-state checkpoint prune --keep 10
   aiwg-state checkpoint prune --keep 3 --state state-a1b2c3d4`,
				Flags: append(cpFlags(), &cli.IntFlag{Name: "keep", Usage: "how many to keep", Required: true}),
				Action: command(func(s *session) error {
					return runCheckpointPrune(s.c.Context, s, checkpointPruneOptions{
						State: s.c.String("state"),
						Keep:  s.c.Int("keep"),
					})
				}),
			},
		},
	}
}

// checkpointCreateOptions are the flags runCheckpointCreate reads.
type checkpointCreateOptions struct {
	State   string // --state
	Message string // --message
}

func runCheckpointCreate(ctx context.Context, s *session, opts checkpointCreateOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	ck, err := s.store.States().CreateCheckpoint(ctx, opts.State, a[0], opts.Message, s.agentWrite())
	if err != nil {
		return err
	}
	return s.done(ck, "%s %s %s -> %s", ck.ID, ck.Name, strings.TrimPrefix(ck.Ref, "refs/tags/"), shortHash(ck.Commit.String()))
}

// checkpointLsOptions are the flags runCheckpointLs reads.
type checkpointLsOptions struct {
	State string // --state
}

func runCheckpointLs(ctx context.Context, s *session, opts checkpointLsOptions) error {
	cks, err := s.store.States().Checkpoints(ctx, opts.State, store.ReadOptions{})
	if err == nil {
		cks, err = s.readableCheckpoints(ctx, cks)
	}
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, cks)
	}
	for _, c := range cks {
		fmt.Fprintf(s.out, "%s  %-24s %s  %s  %s\n", c.ID, c.Name, c.Time.UTC().Format(time.RFC3339), shortHash(c.Commit.String()), c.Description)
	}
	return nil
}

// checkpointShowOptions are the flags runCheckpointShow reads.
type checkpointShowOptions struct {
	State string // --state
}

func runCheckpointShow(ctx context.Context, s *session, opts checkpointShowOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	c, err := s.store.States().Checkpoint(ctx, opts.State, a[0], store.ReadOptions{})
	if err != nil {
		return err
	}
	if err := s.mayReadState(ctx, c.State); err != nil {
		return err
	}
	out := map[string]any{"checkpoint_id": c.ID, "name": c.Name, "state_id": c.State, "description": c.Description,
		"ref": c.Ref, "tag": c.Tag.String(), "commit": c.Commit.String(), "agent": c.Agent, "timestamp": c.Time.UTC().Format(time.RFC3339)}
	return s.printDocument(out)
}

// checkpointRmOptions are the flags runCheckpointRm reads.
type checkpointRmOptions struct {
	State string // --state
}

func runCheckpointRm(ctx context.Context, s *session, opts checkpointRmOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	c, err := s.store.States().DeleteCheckpoint(ctx, opts.State, a[0], store.ReadOptions{})
	if err != nil {
		return err
	}
	return s.done(map[string]any{"removed": c.ID, "name": c.Name}, "removed %s %s", c.ID, c.Name)
}

// checkpointPruneOptions are the flags runCheckpointPrune reads.
type checkpointPruneOptions struct {
	State string // --state
	Keep  int    // --keep
}

func runCheckpointPrune(ctx context.Context, s *session, opts checkpointPruneOptions) error {
	rm, err := s.store.States().PruneCheckpoints(ctx, opts.State, opts.Keep, store.ReadOptions{})
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, rm)
	}
	for _, c := range rm {
		fmt.Fprintf(s.out, "removed %s %s\n", c.ID, c.Name)
	}
	return nil
}
