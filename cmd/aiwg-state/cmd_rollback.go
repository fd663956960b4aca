package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "restore a state to a checkpoint as one new commit (history stays)",
		ArgsUsage: "NAME",
		Description: `The state's files become byte-identical to the checkpoint's, in one commit
with the trailers Operation: rollback and Checkpoint: ckpt-…; other states are
untouched. Restored: states/<id>/, temp/<id>/, and the state's session and
tree unless another state shares them; --shared restores those too. A
rollback whose only changes since the checkpoint are in a shared session
or tree is refused (exit 2) rather than reported as no change.
--hard moves the branch back to the checkpoint's commit instead, dropping
every later commit of every state from the branch; it needs --yes.

Examples:
   aiwg-state rollback before_decomposition
   aiwg-state rollback initial_state --hard --yes`,
		Flags: append(rlmWriteFlags(),
			&cli.BoolFlag{Name: "shared", Usage: "also restore the session and tree when other states share them"},
			&cli.BoolFlag{Name: "hard", Usage: "move the branch to the checkpoint (drops later commits)"},
			&cli.BoolFlag{Name: "yes", Usage: "confirm --hard"}),
		Action: command(func(s *session) error {
			return runRollback(s.c.Context, s, rollbackOptions{
				Hard:   s.c.Bool("hard"),
				State:  s.c.String("state"),
				Branch: s.c.String("branch"),
				Shared: s.c.Bool("shared"),
			})
		}),
	}
}

// rollbackOptions are the flags runRollback reads.
type rollbackOptions struct {
	Hard   bool   // --hard
	State  string // --state
	Branch string // --branch
	Shared bool   // --shared
}

func runRollback(ctx context.Context, s *session, opts rollbackOptions) error {
	a, err := args(s.c, 1, 1)
	if err != nil {
		return err
	}
	if opts.Hard {
		if err := s.confirm("rollback --hard drops every commit after the checkpoint from the branch, for all states"); err != nil {
			return err
		}
		hr, err := s.store.States().RollbackHard(ctx, opts.State, a[0], store.WriteOptions{Branch: opts.Branch})
		if err != nil {
			return err
		}
		ck := hr.Checkpoint
		return s.done(map[string]any{"from": hr.From, "to": hr.To, "checkpoint_id": ck.ID}, "branch moved %s -> %s (%s %s)", shortHash(hr.From), shortHash(hr.To), ck.ID, ck.Name)
	}
	m, _, err := s.store.States().Rollback(ctx, opts.State, a[0], rlm.RollbackOptions{Shared: opts.Shared}, s.writeOptions())
	return s.report(m, err)
}
