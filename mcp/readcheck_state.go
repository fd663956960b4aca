package mcp

import (
	"context"
	"errors"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/rlm"
)

// RLM state is documents too: a sandboxed agent reads a state's header,
// variables and checkpoints only where its profile's documents.read lets
// it read the files behind them.

func (s *Server) mayReadVar(ctx context.Context, c *call, v *rlm.Variable) error {
	if err := s.mayRead(ctx, c, v.File()); err != nil {
		return err
	}
	if v.IsStored() {
		return s.mayRead(ctx, c, v.DataPath())
	}
	return nil
}

func isProfileRefusal(err error) bool {
	var pe *policy.ProfileError
	return errors.As(err, &pe)
}

// readableVars keeps the variables the agent may read.
func (s *Server) readableVars(ctx context.Context, c *call, vs []rlm.Variable) ([]rlm.Variable, error) {
	out := vs[:0:0]
	for i := range vs {
		if err := s.mayReadVar(ctx, c, &vs[i]); err == nil {
			out = append(out, vs[i])
		} else if !isProfileRefusal(err) {
			return nil, err
		}
	}
	return out, nil
}

// readableCheckpoints keeps the checkpoints of states the agent may read.
func (s *Server) readableCheckpoints(ctx context.Context, c *call, cks []checkpoint.Checkpoint) ([]checkpoint.Checkpoint, error) {
	out := cks[:0:0]
	for _, ck := range cks {
		if err := s.mayRead(ctx, c, rlm.HeaderPath(ck.State)); err == nil {
			out = append(out, ck)
		} else if !isProfileRefusal(err) {
			return nil, err
		}
	}
	return out, nil
}
