package main

import (
	"context"

	"github.com/aiwg/aiwg-state/internal/sandbox"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/store"
)

// readAgent is the agent a read is attributed to: the one --agent (where
// the command takes it) or AIWG_AGENT names, as a sandboxed agent's
// runtime sets it; "" when none is named. A read no agent is named for is
// a person's or a program's with the store at hand, which no profile
// bounds: whoever can read the git directory can read every file of it.
func (s *session) readAgent() string {
	if a := s.c.String("agent"); a != "" {
		return a
	}
	return s.inv.getenv("AIWG_AGENT")
}

// mayRead is nil when the read's agent may read file (a store path) under
// its sandbox profile.
func (s *session) mayRead(ctx context.Context, file string) error {
	agent := s.readAgent()
	if agent == "" {
		return nil
	}
	return sandbox.CheckRead(ctx, s.store.Store, agent, file)
}

func (s *session) readProfile(ctx context.Context) (string, interface {
	CheckRead(agent, file string) error
	MayUseMemory(ns string) bool
}, error) {
	agent := s.readAgent()
	pr, err := sandbox.ProfileOf(ctx, s.store.Store, agent)
	if err != nil || pr == nil {
		return agent, nil, err
	}
	return agent, pr, nil
}

// readableEntries keeps the entries of a listing the read's agent may
// read (every directory: its name tells no content).
func (s *session) readableEntries(ctx context.Context, es []store.Entry) ([]store.Entry, error) {
	agent, pr, err := s.readProfile(ctx)
	if err != nil || pr == nil {
		return es, err
	}
	out := es[:0:0]
	for _, e := range es {
		if e.IsDir || pr.CheckRead(agent, e.Path) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// readableDiff keeps the files of a diff the read's agent may read (both
// sides of a rename).
func (s *session) readableDiff(ctx context.Context, files []store.FileDiff) ([]store.FileDiff, error) {
	agent, pr, err := s.readProfile(ctx)
	if err != nil || pr == nil {
		return files, err
	}
	out := files[:0:0]
	for _, f := range files {
		if pr.CheckRead(agent, f.File) == nil && (f.From == "" || pr.CheckRead(agent, f.From) == nil) {
			out = append(out, f)
		}
	}
	return out, nil
}

// readableRecords keeps the memory records of the namespaces the read's
// agent may use.
func (s *session) readableRecords(ctx context.Context, recs []memory.Record) ([]memory.Record, error) {
	_, pr, err := s.readProfile(ctx)
	if err != nil || pr == nil {
		return recs, err
	}
	out := recs[:0:0]
	for _, r := range recs {
		if pr.MayUseMemory(r.Namespace) {
			out = append(out, r)
		}
	}
	return out, nil
}
