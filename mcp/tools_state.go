package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aiwg/aiwg-state/checkpoint"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// Branches and merges.

type BranchListIn struct{}

type BranchCreateIn struct {
	Name string `json:"name" jsonschema:"the new branch, e.g. agents/planner/experiment"`
	From string `json:"from,omitempty" jsonschema:"the revision it starts at (default: HEAD)"`
}

type MergeIn struct {
	From        string `json:"from" jsonschema:"the branch (or revision) to merge"`
	Into        string `json:"into,omitempty" jsonschema:"the branch merged into (default: the store's HEAD branch)"`
	Strategy    string `json:"strategy,omitempty" jsonschema:"settle every path with this strategy instead of .gitattributes (e.g. ours, theirs, union, lww, sum, max, min)"`
	DryRun      bool   `json:"dry_run,omitempty" jsonschema:"compute and report the merge, write nothing"`
	NoFF        bool   `json:"no_ff,omitempty" jsonschema:"make a merge commit even when a fast-forward would do"`
	FirstParent bool   `json:"first_parent,omitempty" jsonschema:"keep into's first-parent history"`
	Message     string `json:"message,omitempty" jsonschema:"the merge commit's subject"`
}

type IntoIn struct {
	Into string `json:"into,omitempty" jsonschema:"the branch with the merge in progress (default: the store's HEAD branch)"`
}

type ResolveIn struct {
	File  string `json:"file" jsonschema:"the conflicted document"`
	Key   string `json:"key,omitempty" jsonschema:"the conflicted key path (leave out for the whole document)"`
	Take  string `json:"take,omitempty" jsonschema:"take one side: ours, theirs or base; or give value"`
	Value any    `json:"value,omitempty" jsonschema:"the JSON value to settle the conflict with, instead of take"`
	Into  string `json:"into,omitempty" jsonschema:"the branch with the merge in progress (default: the store's HEAD branch)"`
}

func (s *Server) addBranchTools() {
	add(s, "branch_list", "List the store's branches with their head commits; head marks the store's HEAD branch, merging one with a merge in progress. Returns {branches: [...]}.", readOnly,
		func(ctx context.Context, c *call, in BranchListIn) (any, string, error) {
			bs, err := s.st.Branches(ctx)
			if err != nil {
				return nil, "", err
			}
			return list("branches", bs), fmt.Sprintf("%d branches", len(bs)), nil
		})
	add(s, "branch_create", "Create a branch at a revision: a place to try changes without touching the main line, merged back with merge. Returns {name, commit}.", writes,
		func(ctx context.Context, c *call, in BranchCreateIn) (any, string, error) {
			from := in.From
			if from == "" {
				from = "HEAD"
			}
			b, err := s.st.CreateBranch(ctx, in.Name, from)
			if err != nil {
				return nil, "", err
			}
			return b, fmt.Sprintf("created branch %s at %s", b.Name, short(b.Commit)), nil
		})
	add(s, "merge", "Merge a branch into another, JSON key by key with the strategies in .gitattributes. Returns {status: up-to-date, fast-forward, merged or conflicts, commit, files, conflicts}. "+
		"Conflicts are a tool error of kind conflict (code 4) whose result lists them; the merge stays in progress: settle each with resolve, then merge_continue, or merge_abort. "+
		"Use dry_run to see whether a merge would settle. Reports progress; a cancelled merge writes nothing.", writes,
		func(ctx context.Context, c *call, in MergeIn) (any, string, error) {
			p := c.progress(ctx, "merging "+in.From)
			defer p.stop()
			res, err := s.st.Merges().Merge(ctx, in.From, merge.MergeOptions{Into: in.Into, Strategy: jsonmerge.Strategy(in.Strategy),
				DryRun: in.DryRun, NoFF: in.NoFF, FirstParent: in.FirstParent, Write: store.WriteOptions{Agent: c.agent, Message: in.Message}})
			return mergeOutcome(res, err)
		})
	add(s, "conflicts", "The conflicts of the merge in progress on a branch: file, key path, base, ours, theirs. An empty list when no merge is in progress. Returns {conflicts: [...]}.", readOnly,
		func(ctx context.Context, c *call, in IntoIn) (any, string, error) {
			cs, err := s.st.Merges().Conflicts(ctx, store.ReadOptions{Branch: in.Into})
			if errors.Is(err, store.ErrNotFound) {
				return list("conflicts", []merge.ConflictEntry{}), "no merge in progress", nil
			}
			if err != nil {
				return nil, "", err
			}
			return list("conflicts", cs), fmt.Sprintf("%d conflicts", len(cs)), nil
		})
	add(s, "resolve", "Settle one conflict of the merge in progress: take ours, theirs or base, or give value. Returns {file, key, remaining_files}; when none remain, call merge_continue.", writes,
		func(ctx context.Context, c *call, in ResolveIn) (any, string, error) {
			how := merge.Resolution{Take: in.Take}
			if c.has("value") {
				b, err := json.Marshal(in.Value)
				if err != nil {
					return nil, "", usagef("value: %v", err)
				}
				how.Value = b
			}
			if (how.Take == "") == (how.Value == nil) {
				return nil, "", usagef("resolve takes exactly one of take (ours, theirs, base) or value")
			}
			left, err := s.st.Merges().Resolve(ctx, in.File, in.Key, how, store.WriteOptions{Agent: c.agent, Branch: in.Into})
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"file": in.File, "key": in.Key, "remaining_files": left}, fmt.Sprintf("resolved; %d file(s) still have conflicts", left), nil
		})
	add(s, "merge_continue", "Commit the merge in progress once every conflict is resolved. Returns the merge result with its commit.", writes,
		func(ctx context.Context, c *call, in IntoIn) (any, string, error) {
			res, err := s.st.Merges().Continue(ctx, store.WriteOptions{Agent: c.agent, Branch: in.Into})
			return mergeOutcome(res, err)
		})
	add(s, "merge_abort", "Abandon the merge in progress; the branch stays as it was. Returns {aborted: true}.", replaces,
		func(ctx context.Context, c *call, in IntoIn) (any, string, error) {
			if err := s.st.Merges().Abort(ctx, store.WriteOptions{Agent: c.agent, Branch: in.Into}); err != nil {
				return nil, "", err
			}
			return map[string]any{"aborted": true}, "merge aborted; the branch is as it was", nil
		})
}

// mergeOutcome reports a merge: conflicts are an error that still
// carries the result.
func mergeOutcome(res *merge.MergeResult, err error) (any, string, error) {
	if err != nil {
		if res != nil && (errors.Is(err, store.ErrConflict) || res.Commit != nil) {
			return nil, "", &outcomeError{err: err, outcome: res}
		}
		return nil, "", err
	}
	sum := fmt.Sprintf("%s: %s into %s", res.Status, res.From, res.Into)
	if res.Commit != nil {
		sum += ", " + mutationSummary(res.Commit)
	}
	if res.DryRun {
		sum += " (dry run: nothing written)"
	}
	return res, sum, nil
}

// RLM state.

type StateInitIn struct {
	Prompt          string         `json:"prompt" jsonschema:"the task the state is for"`
	Session         string         `json:"session,omitempty" jsonschema:"the session it belongs to (default: the parent's, else a new one)"`
	Tree            string         `json:"tree,omitempty" jsonschema:"the task tree (default: the parent's)"`
	Parent          string         `json:"parent,omitempty" jsonschema:"the parent state's id in a task tree"`
	ExecutionConfig map[string]any `json:"execution_config,omitempty" jsonschema:"execution settings: model, temperature, seed, execution_mode, context_window"`
	WriteArgs
}

type StateIn struct {
	ID string `json:"id,omitempty" jsonschema:"the state's id (default: the newest state)"`
	ReadArgs
}

type VarGetIn struct {
	Name  string `json:"name" jsonschema:"the variable"`
	State string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
	Scope string `json:"scope,omitempty" jsonschema:"read one scope only: state, temporary, tree, session or global (default: resolve through them)"`
	Meta  bool   `json:"meta,omitempty" jsonschema:"return the whole variable: type, scope, description, times"`
	ReadArgs
}

type VarSetIn struct {
	Name        string `json:"name" jsonschema:"the variable (snake_case)"`
	Value       any    `json:"value" jsonschema:"its JSON value"`
	State       string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
	Type        string `json:"type,omitempty" jsonschema:"the declared type (default: inferred from the value)"`
	Scope       string `json:"scope,omitempty" jsonschema:"session (default), tree, global or temporary"`
	TTLSeconds  int64  `json:"ttl_seconds,omitempty" jsonschema:"a temporary variable's time to live, in seconds"`
	ReadOnly    bool   `json:"read_only,omitempty" jsonschema:"refuse later writes to it"`
	Description string `json:"description,omitempty" jsonschema:"what the variable holds"`
	WriteArgs
}

type VarLsIn struct {
	State string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
	Scope string `json:"scope,omitempty" jsonschema:"one scope only"`
	ReadArgs
}

type FinalIn struct {
	Value any    `json:"value" jsonschema:"the state's final answer, any JSON value; setting it completes the state"`
	State string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
	WriteArgs
}

type CheckpointCreateIn struct {
	Name        string `json:"name" jsonschema:"the checkpoint's name"`
	State       string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
	Description string `json:"description,omitempty" jsonschema:"what happened at this checkpoint"`
	Branch      string `json:"branch,omitempty" jsonschema:"the branch whose head it marks (default: the store's HEAD branch)"`
}

type CheckpointLsIn struct {
	State string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
}

type RollbackIn struct {
	Checkpoint string `json:"checkpoint" jsonschema:"the checkpoint's name or id"`
	State      string `json:"state,omitempty" jsonschema:"the state (default: the newest)"`
	Shared     bool   `json:"shared,omitempty" jsonschema:"also restore the session and tree variables other states share"`
	WriteArgs
}

// checkpointOut is a checkpoint with the commit it marks, which its own
// JSON leaves out.
type checkpointOut struct {
	*checkpoint.Checkpoint
	Commit string `json:"commit"`
}

func (s *Server) addRLMTools() {
	add(s, "state_init", "Start an RLM state: a task's prompt, its variables and its final answer. Returns {state, mutation}; state.state_id names it in later calls.", writes,
		func(ctx context.Context, c *call, in StateInitIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			info, m, err := s.st.States().Init(ctx, rlm.StateInit{Prompt: in.Prompt, Session: in.Session, Tree: in.Tree, Parent: in.Parent, ExecutionConfig: in.ExecutionConfig}, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"state": info, "mutation": m}, fmt.Sprintf("%s created %s (session %s)", mutationSummary(m), info.StateID, info.SessionID), nil
		})
	add(s, "state_show", "An RLM state's header: prompt, session, tree, parent, children, completion status, final answer.", readOnly,
		func(ctx context.Context, c *call, in StateIn) (any, string, error) {
			info, err := s.st.States().Get(ctx, in.ID, in.options())
			if err == nil {
				err = s.mayRead(ctx, c, rlm.HeaderPath(info.StateID))
			}
			if err != nil {
				return nil, "", err
			}
			return info, info.StateID + " " + info.CompletionStatus, nil
		})
	add(s, "state_status", "Whether an RLM state is complete, and its final answer. Returns {state_id, completion_status, final}.", readOnly,
		func(ctx context.Context, c *call, in StateIn) (any, string, error) {
			info, err := s.st.States().Get(ctx, in.ID, in.options())
			if err == nil {
				err = s.mayRead(ctx, c, rlm.HeaderPath(info.StateID))
			}
			if err != nil {
				return nil, "", err
			}
			out := map[string]any{"state_id": info.StateID, "completion_status": info.CompletionStatus, "final": info.Final}
			if info.EndedAt != "" {
				out["ended_at"], out["end_reason"] = info.EndedAt, info.EndReason
			}
			return out, info.StateID + " " + info.CompletionStatus, nil
		})
	add(s, "var_get", "Read an RLM state variable, resolved through the state's own, temporary, tree, session and global scopes. Returns {name, value, type} (with meta: the whole variable).", readOnly,
		func(ctx context.Context, c *call, in VarGetIn) (any, string, error) {
			v, err := s.st.States().Var(ctx, in.State, in.Name, rlm.GetOptions{ReadOptions: in.options(), Scope: rlm.Scope(in.Scope)})
			if err == nil {
				err = s.mayReadVar(ctx, c, v)
			}
			if err != nil {
				return nil, "", err
			}
			b, _ := json.Marshal(v.Value)
			if in.Meta {
				return v, string(b), nil
			}
			return map[string]any{"name": v.Name, "value": v.Value, "type": v.Type}, string(b), nil
		})
	add(s, "var_set", "Set an RLM state variable (one commit). Returns {mutation, variable, file, advice}.", writes,
		func(ctx context.Context, c *call, in VarSetIn) (any, string, error) {
			vo := rlm.VarOptions{Scope: rlm.Scope(in.Scope), ReadOnly: in.ReadOnly, Description: in.Description}
			if in.TTLSeconds != 0 {
				d := time.Duration(in.TTLSeconds) * time.Second
				vo.TTL = &d
			}
			return s.setVar(ctx, c, in.State, in.Name, in.Value, c.has("value"), in.Type, vo, in.WriteArgs)
		})
	add(s, "var_ls", "List an RLM state's variables. Returns {variables: [...]}.", readOnly,
		func(ctx context.Context, c *call, in VarLsIn) (any, string, error) {
			vs, err := s.st.States().Vars(ctx, in.State, rlm.Scope(in.Scope), in.options())
			if err == nil {
				vs, err = s.readableVars(ctx, c, vs)
			}
			if err != nil {
				return nil, "", err
			}
			return list("variables", vs), fmt.Sprintf("%d variables", len(vs)), nil
		})
	add(s, "final", "Set an RLM state's final answer, which completes it and runs its trusted completion handlers (one commit). Returns {mutation, variable, file}.", writes,
		func(ctx context.Context, c *call, in FinalIn) (any, string, error) {
			return s.setVar(ctx, c, in.State, "Final", in.Value, c.has("value"), "", rlm.VarOptions{}, in.WriteArgs)
		})
	add(s, "checkpoint_create", "Mark the current point of an RLM state as a named checkpoint (an annotated tag), to roll back to later. Returns the checkpoint with the commit it marks.", writes,
		func(ctx context.Context, c *call, in CheckpointCreateIn) (any, string, error) {
			ck, err := s.st.States().CreateCheckpoint(ctx, in.State, in.Name, in.Description, store.WriteOptions{Agent: c.agent, Branch: in.Branch})
			if err != nil {
				return nil, "", err
			}
			return checkpointOut{ck, ck.Commit.String()}, fmt.Sprintf("%s %s -> %s", ck.ID, ck.Name, short(ck.Commit.String())), nil
		})
	add(s, "checkpoint_ls", "List an RLM state's checkpoints. Returns {checkpoints: [...]}.", readOnly,
		func(ctx context.Context, c *call, in CheckpointLsIn) (any, string, error) {
			cks, err := s.st.States().Checkpoints(ctx, in.State, store.ReadOptions{})
			if err == nil {
				cks, err = s.readableCheckpoints(ctx, c, cks)
			}
			if err != nil {
				return nil, "", err
			}
			out := make([]checkpointOut, len(cks))
			for i := range cks {
				out[i] = checkpointOut{&cks[i], cks[i].Commit.String()}
			}
			return list("checkpoints", out), fmt.Sprintf("%d checkpoints", len(out)), nil
		})
	add(s, "rollback", "Restore an RLM state's variables to a checkpoint, as a new commit (history is kept). Returns the mutation.", replaces,
		func(ctx context.Context, c *call, in RollbackIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			m, _, err := s.st.States().Rollback(ctx, in.State, in.Checkpoint, rlm.RollbackOptions{Shared: in.Shared}, wo)
			return write(m, err)
		})
}

// setVar is var_set and final: the value as the CLI reads one, so that a
// number is typed as the CLI would type it.
func (s *Server) setVar(ctx context.Context, c *call, state, name string, value any, given bool, typ string, vo rlm.VarOptions, w WriteArgs) (any, string, error) {
	raw, err := jsonValue("value", value, given)
	if err != nil {
		return nil, "", err
	}
	if typ != "" {
		if vo.Type, err = rlm.ParseType(typ); err != nil {
			return nil, "", usagef("%v", err)
		}
	}
	text := string(raw)
	if str, ok := value.(string); ok && vo.Type == rlm.Type("text") {
		text = str
	}
	v, t, err := rlm.ParseValue(text, vo.Type)
	if err != nil {
		return nil, "", usagef("variable %s: %v", name, err)
	}
	vo.Type = t
	wo, err := w.options(c)
	if err != nil {
		return nil, "", err
	}
	res, err := s.st.States().SetVar(ctx, state, name, v, vo, wo)
	if err != nil {
		return write(nil, err)
	}
	return res, mutationSummary(res.Mutation), nil
}
