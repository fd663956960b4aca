package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/queue"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// Trajectories.

type TrajStartIn struct {
	TaskType string         `json:"task_type" jsonschema:"the kind of task, e.g. bug_fixing, code_review, research"`
	Prompt   string         `json:"prompt" jsonschema:"the task as given"`
	Task     string         `json:"task,omitempty" jsonschema:"the task node id (default: a new one)"`
	Tree     string         `json:"tree,omitempty" jsonschema:"the task tree id"`
	State    string         `json:"state,omitempty" jsonschema:"the RLM state the run works in"`
	Parent   string         `json:"parent,omitempty" jsonschema:"the parent trajectory"`
	Model    string         `json:"model,omitempty" jsonschema:"the model running the task"`
	Extra    map[string]any `json:"extra,omitempty" jsonschema:"further header fields, e.g. {task_context: {depth: 1}, metadata: {temperature: 0.2}}"`
	WriteArgs
}

type TrajIterIn struct {
	ID            string         `json:"id" jsonschema:"the trajectory"`
	Iteration     map[string]any `json:"iteration,omitempty" jsonschema:"a whole iteration object (thought, action, observation); the fields below override its members"`
	ThoughtType   string         `json:"thought_type,omitempty" jsonschema:"goal, research, progress, extraction, reasoning, exception or synthesis"`
	Thought       string         `json:"thought,omitempty" jsonschema:"what the agent thought"`
	Confidence    string         `json:"confidence,omitempty" jsonschema:"low, medium or high"`
	Tool          string         `json:"tool,omitempty" jsonschema:"the tool the action called (required unless iteration gives it)"`
	Description   string         `json:"description,omitempty" jsonschema:"what the action did"`
	Rationale     string         `json:"rationale,omitempty" jsonschema:"why"`
	Params        map[string]any `json:"params,omitempty" jsonschema:"the tool's parameters"`
	Status        string         `json:"status,omitempty" jsonschema:"success, failure, partial, ..."`
	Result        string         `json:"result,omitempty" jsonschema:"what came back"`
	ResultType    string         `json:"result_type,omitempty" jsonschema:"the result's kind"`
	Extraction    string         `json:"extraction,omitempty" jsonschema:"what was taken from the result"`
	Learned       string         `json:"learned,omitempty" jsonschema:"what the agent learned"`
	ErrorType     string         `json:"error_type,omitempty" jsonschema:"the error's kind, when the action failed"`
	ErrorMessage  string         `json:"error_message,omitempty" jsonschema:"the error's message"`
	TokensIn      *int64         `json:"tokens_in,omitempty" jsonschema:"input tokens used"`
	TokensOut     *int64         `json:"tokens_out,omitempty" jsonschema:"output tokens used"`
	DurationMs    *int64         `json:"duration_ms,omitempty" jsonschema:"how long the iteration took"`
	Cost          string         `json:"cost,omitempty" jsonschema:"its cost in USD, a decimal such as 0.0123"`
	StateSnapshot string         `json:"state_snapshot,omitempty" jsonschema:"a revision of the store whose state the iteration saw"`
	WriteArgs
}

type TrajCompleteIn struct {
	ID     string         `json:"id" jsonschema:"the trajectory"`
	Status string         `json:"status" jsonschema:"success, failure, partial or abandoned"`
	Final  string         `json:"final,omitempty" jsonschema:"the final answer or outcome"`
	Reason string         `json:"reason,omitempty" jsonschema:"why it ended so"`
	Extra  map[string]any `json:"extra,omitempty" jsonschema:"outcome, metadata and quality_metrics fields"`
	WriteArgs
}

type TrajShowIn struct {
	ID string `json:"id" jsonschema:"the trajectory"`
	ReadArgs
}

type TrajAnalyzeIn struct {
	TaskType string `json:"task_type,omitempty" jsonschema:"one task type only"`
	Since    string `json:"since,omitempty" jsonschema:"an RFC 3339 time or an age (7d, 36h)"`
	Ngram    int    `json:"ngram,omitempty" jsonschema:"the length of the tool sequences counted (default 3)"`
	Top      int    `json:"top,omitempty" jsonschema:"how many failure patterns and sequences to list (default 10)"`
	ReadArgs
}

func object(name string, m map[string]any) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, usagef("%s: %v", name, err)
	}
	return b, nil
}

func (s *Server) addTrajectoryTools() {
	add(s, "traj_start", "Start recording a run as an RLM trajectory (one commit). Returns {trajectory_id, mutation}; record each step with traj_iter and end with traj_complete.", writes,
		func(ctx context.Context, c *call, in TrajStartIn) (any, string, error) {
			extra, err := object("extra", in.Extra)
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			id, m, err := s.st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: in.TaskType, Prompt: in.Prompt, Task: in.Task,
				Tree: in.Tree, State: in.State, Parent: in.Parent, Model: in.Model, Extra: extra}, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"trajectory_id": id, "mutation": m}, id + " " + mutationSummary(m), nil
		})
	add(s, "traj_iter", "Record one Thought-Action-Observation iteration of a trajectory (one commit). Returns {trajectory_id, iteration, mutation}.", writes,
		func(ctx context.Context, c *call, in TrajIterIn) (any, string, error) {
			base, err := object("iteration", in.Iteration)
			if err != nil {
				return nil, "", err
			}
			if base == nil && in.Tool == "" {
				return nil, "", usagef("traj_iter needs tool (the action the iteration records), or a whole iteration object")
			}
			f := trajectory.IterationFields{ThoughtType: in.ThoughtType, Thought: in.Thought, Confidence: in.Confidence,
				Tool: in.Tool, Description: in.Description, Rationale: in.Rationale, Params: in.Params,
				Status: in.Status, Result: in.Result, ResultType: in.ResultType, Extraction: in.Extraction, Learned: in.Learned,
				ErrorType: in.ErrorType, ErrorMsg: in.ErrorMessage, TokensIn: in.TokensIn, TokensOut: in.TokensOut, DurationMs: in.DurationMs, CostUSD: in.Cost}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			n, m, err := s.st.Trajectories().RecordIteration(ctx, in.ID, trajectory.IterationInput{JSON: base, Fields: f, StateSnapshot: in.StateSnapshot}, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"trajectory_id": in.ID, "iteration": n, "mutation": m}, fmt.Sprintf("%s %04d %s", in.ID, n, mutationSummary(m)), nil
		})
	add(s, "traj_complete", "End a trajectory with its outcome (one commit); the store computes its metrics. Returns the mutation.", writes,
		func(ctx context.Context, c *call, in TrajCompleteIn) (any, string, error) {
			extra, err := object("extra", in.Extra)
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			return write(s.st.Trajectories().Complete(ctx, in.ID, trajectory.CompletionInput{Status: in.Status, Final: in.Final, Reason: in.Reason, Extra: extra}, wo))
		})
	add(s, "traj_show", "A trajectory: its header, every iteration and its completion, as stored.", readOnly,
		func(ctx context.Context, c *call, in TrajShowIn) (any, string, error) {
			if err := s.mayRead(ctx, c, trajectory.Dir+"/"+in.ID+"/trajectory.json"); err != nil {
				return nil, "", err
			}
			doc, err := s.st.Trajectories().Get(ctx, in.ID, in.options())
			if err != nil {
				return nil, "", err
			}
			return doc, in.ID, nil
		})
	add(s, "traj_analyze", "Success rates, iterations to success, costs, failure patterns, common tool sequences, each tool's success and prompt improvements (patterns with high retry counts, templates from successful runs) over the stored trajectories.", readOnly,
		func(ctx context.Context, c *call, in TrajAnalyzeIn) (any, string, error) {
			var since time.Time
			if in.Since != "" {
				var err error
				if since, err = time.Parse(time.RFC3339, in.Since); err != nil {
					d, aerr := trajectory.ParseAge(in.Since)
					if aerr != nil {
						return nil, "", usagef("since: want an RFC 3339 time (2026-11-01T00:00:00Z) or an age (7d, 36h), got %q", in.Since)
					}
					since = time.Now().Add(-d)
				}
			}
			if in.Ngram < 0 || in.Top < 0 {
				return nil, "", usagef("ngram and top must be at least 1")
			}
			an, err := s.st.Trajectories().Analyze(ctx, trajectory.AnalyzeOptions{TaskType: in.TaskType, Since: since, NGram: in.Ngram, Top: in.Top}, in.options())
			if err != nil {
				return nil, "", err
			}
			return an, fmt.Sprintf("%d trajectories, success rate %.1f%%", an.Trajectories, an.SuccessRate*100), nil
		})
}

// Coordination.

type LeaseAcquireIn struct {
	Resource string `json:"resource" jsonschema:"what the lease is on, e.g. tasks/t-17"`
	Shared   bool   `json:"shared,omitempty" jsonschema:"a shared lease (many readers) instead of exclusive"`
	TTL      string `json:"ttl,omitempty" jsonschema:"how long it lives unless renewed, a duration such as 30s or 5m (default 30s)"`
	ID       string `json:"id,omitempty" jsonschema:"a lease you hold: renew it, or change its type"`
	Wait     string `json:"wait,omitempty" jsonschema:"while it is held, wait up to this long (e.g. 10s), queued by priority; default: fail at once with kind held"`
	Priority string `json:"priority,omitempty" jsonschema:"the wait's priority: critical, high, normal or low"`
	WriteArgs
}

type LeaseRenewIn struct {
	Resource string `json:"resource" jsonschema:"the leased resource"`
	ID       string `json:"id" jsonschema:"the lease's id (lease_acquire's lease.id)"`
	TTL      string `json:"ttl,omitempty" jsonschema:"the fresh time to live from now (default 30s)"`
	WriteArgs
}

type LeaseReleaseIn struct {
	Resource string `json:"resource" jsonschema:"the leased resource"`
	ID       string `json:"id,omitempty" jsonschema:"the lease or waiting request to release (default: yours on the resource)"`
	Force    bool   `json:"force,omitempty" jsonschema:"release another agent's lease (a coordinator's act; recorded)"`
	Reason   string `json:"reason,omitempty" jsonschema:"why, recorded with a forced release"`
	WriteArgs
}

type LeaseLsIn struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"only resources under this prefix"`
	ReadArgs
}

type QueuePutIn struct {
	Name  string `json:"name" jsonschema:"the queue"`
	Value any    `json:"value" jsonschema:"the message, any JSON value"`
	WriteArgs
}

type QueueTakeIn struct {
	Name string `json:"name" jsonschema:"the queue"`
	Wait string `json:"wait,omitempty" jsonschema:"wait this long for a message when the queue is empty (e.g. 5s); default: fail at once with kind empty"`
	WriteArgs
}

type QueuePeekIn struct {
	Name string `json:"name" jsonschema:"the queue"`
	N    int    `json:"n,omitempty" jsonschema:"how many messages, oldest first (default 10)"`
	ReadArgs
}

type MemoryKeyArgs struct {
	Namespace string `json:"namespace" jsonschema:"session, long_term, daily_log, workflow or any identifier"`
	Kind      string `json:"kind" jsonschema:"the record's kind, e.g. fact, preference"`
	ID        string `json:"id" jsonschema:"the record's id"`
}

type MemoryPutIn struct {
	MemoryKeyArgs
	Value any    `json:"value" jsonschema:"the record's payload, any JSON value"`
	TTL   string `json:"ttl,omitempty" jsonschema:"the record expires this long from now (e.g. 24h); default: never"`
	WriteArgs
}

type MemoryGetIn struct {
	MemoryKeyArgs
	ReadArgs
}

type MemoryLsIn struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"one namespace only"`
	Kind      string `json:"kind,omitempty" jsonschema:"with namespace: one kind only"`
	Expired   bool   `json:"expired,omitempty" jsonschema:"include records that have run out"`
	ReadArgs
}

type MemoryPruneIn struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"one namespace only (default: all)"`
	WriteArgs
}

func duration(name, v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usagef("%s: want a duration such as 30s or 5m, got %q", name, v)
	}
	return d, nil
}

func (s *Server) addCoordinationTools() {
	add(s, "lease_acquire", "Take a lease on a resource so that no other agent works on it at once (one commit). "+
		"Held by another: a tool error of kind held (code 5) naming the holder and until when; back off, or pass wait. Returns {lease, change, mutation}.", writes,
		func(ctx context.Context, c *call, in LeaseAcquireIn) (any, string, error) {
			ttl, err := duration("ttl", in.TTL, 30*time.Second)
			if err != nil {
				return nil, "", err
			}
			if in.ID != "" && in.TTL == "" {
				ttl = 0 // a renewal keeps the lease's own time to live
			}
			wait, err := duration("wait", in.Wait, 0)
			if err != nil {
				return nil, "", err
			}
			typ := lease.Exclusive
			if in.Shared {
				typ = lease.Shared
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			res, err := s.st.Leases().Acquire(ctx, in.Resource, lease.Options{Type: typ, TTL: ttl, ID: in.ID, Wait: wait, Priority: in.Priority}, wo)
			if err != nil {
				return nil, "", err
			}
			return res, fmt.Sprintf("%s %s %s until %s, commit %s", res.Change, in.Resource, res.Lease.ID, res.Lease.ExpiresAt.UTC().Format(time.RFC3339), short(res.Mutation.Commit)), nil
		})
	add(s, "lease_renew", "Extend a lease you hold (one commit). Returns {lease, change, mutation}.", writes,
		func(ctx context.Context, c *call, in LeaseRenewIn) (any, string, error) {
			ttl, err := duration("ttl", in.TTL, 30*time.Second)
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			res, err := s.st.Leases().Renew(ctx, in.Resource, in.ID, ttl, wo)
			if err != nil {
				return nil, "", err
			}
			return res, fmt.Sprintf("renewed %s %s until %s, commit %s", in.Resource, res.Lease.ID, res.Lease.ExpiresAt.UTC().Format(time.RFC3339), short(res.Mutation.Commit)), nil
		})
	add(s, "lease_release", "Release your lease on a resource, or withdraw your wait for it (one commit). Returns {released, withdrawn, mutation}.", writes,
		func(ctx context.Context, c *call, in LeaseReleaseIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			rel, err := s.st.Leases().Release(ctx, in.Resource, lease.ReleaseOptions{ID: in.ID, Force: in.Force, Reason: in.Reason}, wo)
			if err != nil {
				return nil, "", err
			}
			var what []string
			for _, l := range rel.Leases {
				what = append(what, l.ID+" of "+l.Holder)
			}
			return rel, fmt.Sprintf("released %s %s, commit %s", in.Resource, strings.Join(what, ", "), short(rel.Mutation.Commit)), nil
		})
	add(s, "lease_ls", "The leases held and waited for, by resource: a polling read, no commit. Returns {leases: [...]}.", readOnly,
		func(ctx context.Context, c *call, in LeaseLsIn) (any, string, error) {
			if err := s.mayRead(ctx, c, lease.Dir+"/"); err != nil {
				return nil, "", err
			}
			infos, err := s.st.Leases().List(ctx, in.Prefix, in.options())
			if err != nil {
				return nil, "", err
			}
			return list("leases", infos), fmt.Sprintf("%d resources", len(infos)), nil
		})
	add(s, "queue_put", "Put a message on a queue (one commit). Returns {message, mutation}.", writes,
		func(ctx context.Context, c *call, in QueuePutIn) (any, string, error) {
			v, err := jsonValue("value", in.Value, c.has("value"))
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			msg, m, err := s.st.Queues().Put(ctx, in.Name, v, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"message": msg, "mutation": m}, fmt.Sprintf("%s %s #%d, commit %s", in.Name, msg.ID, msg.Seq, short(m.Commit)), nil
		})
	add(s, "queue_take", "Take the oldest message off a queue (one commit): each message goes to one taker. "+
		"Empty: a tool error of kind empty (code 3), or pass wait. Returns {message, mutation}.", writes,
		func(ctx context.Context, c *call, in QueueTakeIn) (any, string, error) {
			wait, err := duration("wait", in.Wait, 0)
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			msg, m, err := s.st.Queues().Take(ctx, in.Name, queue.TakeOptions{Wait: wait}, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"message": msg, "mutation": m}, string(msg.Payload), nil
		})
	add(s, "queue_peek", "The oldest messages of a queue without taking them: a polling read, no commit. Returns {messages: [...]}.", readOnly,
		func(ctx context.Context, c *call, in QueuePeekIn) (any, string, error) {
			n := in.N
			if n <= 0 {
				n = 10
			}
			if err := s.mayRead(ctx, c, queue.Dir+"/"+in.Name+"/"); err != nil {
				return nil, "", err
			}
			msgs, err := s.st.Queues().Peek(ctx, in.Name, n, in.options())
			if err != nil {
				return nil, "", err
			}
			return list("messages", msgs), fmt.Sprintf("%d messages", len(msgs)), nil
		})
	add(s, "memory_put", "Write a memory record of tiered state (namespace, kind, id), optionally expiring (one commit). Returns {record, mutation}.", writes,
		func(ctx context.Context, c *call, in MemoryPutIn) (any, string, error) {
			v, err := jsonValue("value", in.Value, c.has("value"))
			if err != nil {
				return nil, "", err
			}
			ttl, err := duration("ttl", in.TTL, 0)
			if err != nil {
				return nil, "", err
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			r, m, err := s.st.Memory().Put(ctx, in.key(), v, ttl, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"record": r, "mutation": m}, mutationSummary(m), nil
		})
	add(s, "memory_get", "Read a memory record. Returns the record: key, payload, times, expiry.", readOnly,
		func(ctx context.Context, c *call, in MemoryGetIn) (any, string, error) {
			if err := s.mayRead(ctx, c, in.key().File()); err != nil {
				return nil, "", err
			}
			r, err := s.st.Memory().Get(ctx, in.key(), in.options())
			if err != nil {
				return nil, "", err
			}
			return r, string(r.Payload), nil
		})
	add(s, "memory_ls", "List memory records, by namespace and kind. Returns {records: [...]}.", readOnly,
		func(ctx context.Context, c *call, in MemoryLsIn) (any, string, error) {
			if in.Kind != "" && in.Namespace == "" {
				return nil, "", usagef("kind needs namespace")
			}
			recs, err := s.st.Memory().List(ctx, memory.ListOptions{ReadOptions: in.options(), Namespace: in.Namespace, Kind: in.Kind, Expired: in.Expired})
			if err != nil {
				return nil, "", err
			}
			recs = s.readableRecords(ctx, c, recs)
			return list("records", recs), fmt.Sprintf("%d records", len(recs)), nil
		})
	add(s, "memory_prune", "Delete the memory records that have expired (one commit). Returns {pruned, mutation}.", replaces,
		func(ctx context.Context, c *call, in MemoryPruneIn) (any, string, error) {
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			keys, m, err := s.st.Memory().Prune(ctx, in.Namespace, wo)
			if err != nil {
				if isNoChange(err) {
					return map[string]any{"pruned": []memory.Key{}}, "nothing has expired", nil
				}
				return nil, "", err
			}
			return map[string]any{"pruned": keys, "mutation": m}, mutationSummary(m), nil
		})
}

func (k MemoryKeyArgs) key() memory.Key {
	return memory.Key{Namespace: k.Namespace, Kind: k.Kind, ID: k.ID}
}

func isNoChange(err error) bool { return err != nil && errors.Is(err, store.ErrNoChange) }
