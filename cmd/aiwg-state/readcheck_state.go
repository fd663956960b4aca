package main

import (
	"context"
	"errors"
	"io/fs"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/policy"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// RLM state is documents too (states/<id>/state.json, the variables under
// states/, sessions/, trees/): a sandboxed agent reads a state's header,
// variables and checkpoints only where its profile's documents.read lets
// it read the files behind them.

// mayReadState is nil when the read's agent may read the state's header.
func (s *session) mayReadState(ctx context.Context, id string) error {
	return s.mayRead(ctx, rlm.HeaderPath(id))
}

// mayReadVar is nil when the read's agent may read the variable's file
// (and the file its value is kept in, when large).
func (s *session) mayReadVar(ctx context.Context, v *rlm.Variable) error {
	if err := s.mayRead(ctx, v.File()); err != nil {
		return err
	}
	if v.IsStored() {
		return s.mayRead(ctx, v.DataPath())
	}
	return nil
}

// readableVars keeps the variables the read's agent may read.
func (s *session) readableVars(ctx context.Context, vs []rlm.Variable) ([]rlm.Variable, error) {
	if s.readAgent() == "" {
		return vs, nil
	}
	out := vs[:0:0]
	for i := range vs {
		if err := s.mayReadVar(ctx, &vs[i]); err == nil {
			out = append(out, vs[i])
		} else if !isProfileRefusal(err) {
			return nil, err
		}
	}
	return out, nil
}

// readableStates keeps the states whose header the read's agent may read.
func (s *session) readableStates(ctx context.Context, sts []rlm.StateInfo) ([]rlm.StateInfo, error) {
	if s.readAgent() == "" {
		return sts, nil
	}
	out := sts[:0:0]
	for _, st := range sts {
		if err := s.mayReadState(ctx, st.StateID); err == nil {
			out = append(out, st)
		} else if !isProfileRefusal(err) {
			return nil, err
		}
	}
	return out, nil
}

// readableCheckpoints keeps the checkpoints of states the read's agent may
// read.
func (s *session) readableCheckpoints(ctx context.Context, cks []checkpoint.Checkpoint) ([]checkpoint.Checkpoint, error) {
	if s.readAgent() == "" {
		return cks, nil
	}
	out := cks[:0:0]
	for _, c := range cks {
		if err := s.mayReadState(ctx, c.State); err == nil {
			out = append(out, c)
		} else if !isProfileRefusal(err) {
			return nil, err
		}
	}
	return out, nil
}

// isProfileRefusal reports whether err is a sandbox profile's refusal (a
// listing leaves the entry out), not a failure to judge (which fails it).
func isProfileRefusal(err error) bool {
	var pe *policy.ProfileError
	return errors.As(err, &pe)
}

// mayReadStateDoc is nil when the read's agent may read the state
// document and every shard it mounts (a read shows them inlined).
func (s *session) mayReadStateDoc(ctx context.Context, name string) error {
	if s.readAgent() == "" {
		return nil
	}
	d := s.store.StateDocument(name)
	if err := s.mayRead(ctx, d.Path()); err != nil {
		return err
	}
	doc, err := d.Load(ctx, s.readOptions())
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return nil // none yet: a read shows the default shape
	}
	if err != nil {
		return err // unreadable: refused, as a read of it cannot be judged
	}
	for _, f := range doc.Files() {
		if err := s.mayRead(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
