package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/aiwg/aiwg-state/store"
)

var (
	readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	writes   = &sdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
	replaces = &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}
)

func (s *Server) addTools() {
	s.addDocumentTools()
	s.addHistoryTools()
	s.addBranchTools()
	s.addRLMTools()
	s.addTrajectoryTools()
	s.addCoordinationTools()
	s.addEventTools()
	s.addTierTools()
}

// Documents.

type GetIn struct {
	File string `json:"file" jsonschema:"the document, a path in the store such as plan.json"`
	Key  string `json:"key,omitempty" jsonschema:"a key path (dot form risk.level or items.0.id, slash form risk/level; * is a wildcard); leave out for the whole document"`
	ReadArgs
}

type SetIn struct {
	File  string `json:"file" jsonschema:"the document; created when missing"`
	Key   string `json:"key" jsonschema:"the key path to set (dot form risk.level; items.- appends to an array); missing keys are created"`
	Value any    `json:"value" jsonschema:"the JSON value to store at the key (a string, number, object, array, true, false or null)"`
	WriteArgs
}

type PutIn struct {
	File  string `json:"file" jsonschema:"the document to create or replace"`
	Value any    `json:"value" jsonschema:"the whole document, any JSON value"`
	WriteArgs
}

type DelIn struct {
	File string `json:"file" jsonschema:"the document"`
	Key  string `json:"key,omitempty" jsonschema:"the key path to delete; leave out to delete the whole document"`
	WriteArgs
}

type MvIn struct {
	File string `json:"file" jsonschema:"the document to move"`
	To   string `json:"to" jsonschema:"its new path"`
	WriteArgs
}

type ApplyOp struct {
	Op    string `json:"op" jsonschema:"set, put, del or mv"`
	File  string `json:"file" jsonschema:"the document"`
	Path  string `json:"path,omitempty" jsonschema:"set, del: the key path (empty: the whole document)"`
	Value any    `json:"value,omitempty" jsonschema:"set, put: the JSON value"`
	To    string `json:"to,omitempty" jsonschema:"mv: the new path"`
}

type ApplyIn struct {
	Ops []ApplyOp `json:"ops" jsonschema:"the operations, applied in order as one commit: all or none"`
	WriteArgs
}

type LsIn struct {
	Dir string `json:"dir,omitempty" jsonschema:"a directory of the store (default: the root)"`
	ReadArgs
}

func (s *Server) addDocumentTools() {
	add(s, "get", "Read a JSON document of the store, or one key of it, at the branch's head or at a revision (at). "+
		"Returns {file, key, at, value}. A missing document or key is a tool error of kind not_found (code 3).", readOnly,
		func(ctx context.Context, c *call, in GetIn) (any, string, error) {
			if err := s.mayRead(ctx, c, in.File); err != nil {
				return nil, "", err
			}
			v, err := s.st.Get(ctx, in.File, in.Key, in.options())
			if err != nil {
				return nil, "", err
			}
			v = bytes.TrimSpace(v)
			return map[string]any{"file": in.File, "key": in.Key, "at": in.At, "value": json.RawMessage(v)}, string(v), nil
		})
	add(s, "set", "Set one key of a JSON document (one commit, authored by you). Creates the document or key when missing; "+
		"a key path through a scalar is refused. Returns the mutation (commit, mutation_id, changes), or {no_change: true} when the key already held the value. "+
		"Pass expect (a revision) to fail with kind stale instead of overwriting another agent's newer write.", writes,
		func(ctx context.Context, c *call, in SetIn) (any, string, error) {
			v, err := jsonValue("value", in.Value, c.has("value"))
			if err != nil {
				return nil, "", err
			}
			if in.Key == "" {
				return nil, "", usagef("key is empty: to replace the whole document use put")
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			return write(s.st.Set(ctx, in.File, in.Key, v, wo))
		})
	add(s, "put", "Create or replace a whole JSON document (one commit). Returns the mutation.", replaces,
		func(ctx context.Context, c *call, in PutIn) (any, string, error) {
			v, err := jsonValue("value", in.Value, c.has("value"))
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			return write(s.st.Put(ctx, in.File, v, wo))
		})
	add(s, "del", "Delete one key of a document, or the whole document when key is left out (one commit). Returns the mutation.", replaces,
		func(ctx context.Context, c *call, in DelIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			return write(s.st.Delete(ctx, in.File, in.Key, wo))
		})
	add(s, "mv", "Move (rename) a document (one commit); its history follows it. Returns the mutation.", writes,
		func(ctx context.Context, c *call, in MvIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			return write(s.st.Move(ctx, in.File, in.To, wo))
		})
	add(s, "apply", "Apply several operations (set, put, del, mv) as one commit: all land or none. Returns the mutation.", replaces,
		func(ctx context.Context, c *call, in ApplyIn) (any, string, error) {
			if len(in.Ops) == 0 {
				return nil, "", usagef("ops is empty: give at least one operation")
			}
			ops := make([]store.Op, len(in.Ops))
			for i, o := range in.Ops {
				ops[i] = store.Op{Op: o.Op, File: o.File, Path: o.Path, To: o.To}
				if o.Op == "set" || o.Op == "put" {
					b, err := json.Marshal(o.Value)
					if err != nil {
						return nil, "", usagef("ops[%d].value: %v", i, err)
					}
					ops[i].Value = b
				}
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			return write(s.st.Apply(ctx, ops, wo))
		})
	add(s, "ls", "List the documents and directories under a directory of the store. Returns {entries: [{path, is_dir, ...}]}.", readOnly,
		func(ctx context.Context, c *call, in LsIn) (any, string, error) {
			es, err := s.st.List(ctx, in.Dir, in.options())
			if err != nil {
				return nil, "", err
			}
			es = s.readable(ctx, c, es)
			return list("entries", es), fmt.Sprintf("%d entries", len(es)), nil
		})
}

// History.

type LogIn struct {
	File        string `json:"file,omitempty" jsonschema:"keep the commits that changed this document"`
	Key         string `json:"key,omitempty" jsonschema:"with file: keep the commits that changed this key path; each mutation then carries the key's old and new value"`
	Agent       string `json:"agent,omitempty" jsonschema:"keep one agent's commits"`
	Since       string `json:"since,omitempty" jsonschema:"keep commits at or after this RFC 3339 time"`
	Until       string `json:"until,omitempty" jsonschema:"keep commits at or before this RFC 3339 time"`
	Op          string `json:"op,omitempty" jsonschema:"keep commits with a change of this operation (set, put, del, mv, ...)"`
	Source      string `json:"source,omitempty" jsonschema:"keep the commits whose Source trailer is this"`
	Correlation string `json:"correlation,omitempty" jsonschema:"keep the commits whose Correlation-Id trailer is this: one run's writes"`
	Limit       int    `json:"limit,omitempty" jsonschema:"at most this many mutations, newest first (default 50; 0 for the default)"`
	Follow      bool   `json:"follow,omitempty" jsonschema:"with file: follow the document across moves"`
	AllParents  bool   `json:"all_parents,omitempty" jsonschema:"follow merges into all their parents, not first parents only"`
	ReadArgs
}

type DiffIn struct {
	From   string `json:"from,omitempty" jsonschema:"a revision or branch; alone: that commit against its parent; both empty: the last mutation"`
	To     string `json:"to,omitempty" jsonschema:"a revision or branch to compare from with"`
	File   string `json:"file,omitempty" jsonschema:"narrow the diff to this document"`
	Key    string `json:"key,omitempty" jsonschema:"with file: narrow the diff to this key path"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch HEAD and relative revisions are read on"`
	// HeadToHead compares two branches' heads rather than from their merge base.
	HeadToHead bool `json:"head_to_head,omitempty" jsonschema:"two branches: compare their heads, not what to changed since their merge base"`
}

type BlameIn struct {
	File       string `json:"file" jsonschema:"the document"`
	AllParents bool   `json:"all_parents,omitempty" jsonschema:"credit a value brought by a merge to the commit that wrote it on the merged branch"`
	ReadArgs
}

type ShowIn struct {
	Rev    string `json:"rev,omitempty" jsonschema:"a mutation id (mut-...), a commit or a revision (default HEAD)"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch HEAD is read on"`
}

type ReindexIn struct{}

// defaultLogLimit bounds a log no limit was given for: a model's context
// is the reader, and a store's whole history rarely fits it.
const defaultLogLimit = 50

func (s *Server) addHistoryTools() {
	add(s, "log", "The history of the store, newest first: mutations (commit, agent, time, mutation_id, subject, changes, trailers) filtered by "+
		"document, key path, agent, time, operation, source or correlation id. Returns {mutations: [...]}.", readOnly,
		func(ctx context.Context, c *call, in LogIn) (any, string, error) {
			if in.File != "" {
				if err := s.mayRead(ctx, c, in.File); err != nil {
					return nil, "", err
				}
			}
			lo := store.LogOptions{ReadOptions: in.options(), File: in.File, Key: in.Key, Agent: in.Agent, Op: in.Op,
				Source: in.Source, Correlation: in.Correlation, Limit: in.Limit, Follow: in.Follow, AllParents: in.AllParents}
			if lo.Limit <= 0 {
				lo.Limit = defaultLogLimit
			}
			var err error
			if lo.Since, err = parseTime("since", in.Since); err != nil {
				return nil, "", err
			}
			if lo.Until, err = parseTime("until", in.Until); err != nil {
				return nil, "", err
			}
			var all []*store.Mutation
			if err := s.st.Log(ctx, lo, func(m *store.Mutation) bool { all = append(all, m); return true }); err != nil {
				return nil, "", err
			}
			return list("mutations", all), fmt.Sprintf("%d mutations", len(all)), nil
		})
	add(s, "diff", "What changed between two revisions or branches, key by key (two branches: since their merge base). "+
		"Returns {from, to, files: [{file, status, changes: [{path, op, old, new}]}]}.", readOnly,
		func(ctx context.Context, c *call, in DiffIn) (any, string, error) {
			o := store.DiffOptions{From: in.From, To: in.To, Branch: in.Branch, File: in.File, Key: in.Key}
			// Two branches: what to did since it left from, as review reads them.
			o.MergeBase = !in.HeadToHead && s.st.IsBranch(in.From) && s.st.IsBranch(in.To)
			if in.File != "" {
				if err := s.mayRead(ctx, c, in.File); err != nil {
					return nil, "", err
				}
			}
			d, err := s.st.Diff(ctx, o)
			if err != nil {
				return nil, "", err
			}
			d.Files = s.readableDiff(ctx, c, d.Files)
			if d.Files == nil {
				d.Files = []store.FileDiff{}
			}
			return d, fmt.Sprintf("%d files changed between %s and %s", len(d.Files), short(d.From), short(d.To)), nil
		})
	add(s, "blame", "Who last wrote each key of a document: for every leaf, the value, the commit, the agent, the time and the mutation id. "+
		"Returns {entries: [...]}.", readOnly,
		func(ctx context.Context, c *call, in BlameIn) (any, string, error) {
			if err := s.mayRead(ctx, c, in.File); err != nil {
				return nil, "", err
			}
			es, err := s.st.Blame(ctx, in.File, in.options(), store.BlameOptions{AllParents: in.AllParents})
			if err != nil {
				return nil, "", err
			}
			return list("entries", es), fmt.Sprintf("%d keys", len(es)), nil
		})
	add(s, "show", "One mutation by its mutation id or commit: who, when, why (trailers) and its diff. Returns {mutation, diff}.", readOnly,
		func(ctx context.Context, c *call, in ShowIn) (any, string, error) {
			rev := in.Rev
			if rev == "" {
				rev = "HEAD"
			}
			m, err := s.st.Show(ctx, rev, store.ReadOptions{Branch: in.Branch})
			if err != nil {
				return nil, "", err
			}
			d, err := s.st.Diff(ctx, store.DiffOptions{From: m.Commit})
			if err != nil {
				return nil, "", err
			}
			files := s.readableDiff(ctx, c, d.Files)
			if files == nil {
				files = []store.FileDiff{}
			}
			return map[string]any{"mutation": m, "diff": files}, mutationSummary(m) + " by " + m.Agent, nil
		})
	add(s, "reindex", "Rebuild the history index log and blame read (after a history rewrite, or to speed them up). "+
		"Long on a large store: reports progress, and stops when cancelled. Returns the counts indexed.", &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
		func(ctx context.Context, c *call, in ReindexIn) (any, string, error) {
			p := c.progress(ctx, "indexing commits")
			defer p.stop()
			st, err := s.st.Reindex(ctx, p.report)
			if err != nil {
				return nil, "", err
			}
			return st, fmt.Sprintf("indexed %d commits, %d key paths", st.Commits, st.Keys), nil
		})
}

func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, usagef("%s: want an RFC 3339 time like 2026-11-22T10:00:00Z, got %q", name, v)
	}
	return t, nil
}
