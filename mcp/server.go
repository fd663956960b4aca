package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/frame"
	"github.com/aiwg/aiwg-state/internal/exitcode"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// Options configure a Server.
type Options struct {
	// Agent authors every write of a server without authentication
	// (stdio): the process's agent, as the CLI's --agent or AIWG_AGENT.
	// Over HTTP each request's agent is its bearer token's instead.
	Agent string
	// Version is the server's version, told to clients.
	Version string
	// Poll is how often a subscribed document's branch is read (default
	// 100ms, the store's Watch default).
	Poll time.Duration
}

// Server is the MCP server of one open store: its tools, resources and
// prompts on the SDK's server.
type Server struct {
	st    *aiwgstate.Store
	sdk   *sdk.Server
	agent string
	poll  time.Duration
	// tokens is set once HTTPHandler has been made: every request then
	// carries a token's agent, and a request without one writes nothing.
	tokens *Tokens

	mu         sync.Mutex
	watches    map[string]*watch             // by resource URI
	subscribed map[*sdk.ServerSession]int    // subscriptions held, by session
	runs       map[*sdk.ServerSession]string // each session's frame run (tools_tiers.go)
}

// New makes the MCP server of st. st stays the caller's to close, after
// the server has stopped.
func New(st *aiwgstate.Store, o Options) *Server {
	s := &Server{st: st, agent: o.Agent, poll: o.Poll, watches: map[string]*watch{}, subscribed: map[*sdk.ServerSession]int{}, runs: map[*sdk.ServerSession]string{}}
	// The frames of the runs it serves live in its memory, for its life.
	frame.Hold(st.Dir())
	version := o.Version
	if version == "" {
		version = "dev"
	}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "aiwg-state", Title: "aiwg-state: versioned state for agents", Version: version}, &sdk.ServerOptions{
		Instructions:       instructions,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		HasTools:           true,
		HasResources:       true,
		HasPrompts:         true,
	})
	s.addTools()
	s.addResources()
	s.addPrompts()
	return s
}

// SDK is the SDK's server, to connect to a transport of the caller's.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// ServeStdio serves one client on the process's standard input and
// output until it disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	defer s.stopWatches()
	return s.sdk.Run(ctx, Stdio())
}

const instructions = `aiwg-state keeps agents' working state as JSON documents in a git repository.
Every write is one commit authored by you, with a mutation id; the history is the audit log.
Documents: get, set (one key), put (whole document), del, mv, apply (many operations, one commit), ls.
History: log, diff, blame, show. Branches: branch_list, branch_create, merge, conflicts, resolve, merge_continue, merge_abort.
RLM state: state_init, state_show, state_status, var_get, var_set, var_ls, final, checkpoint_create, checkpoint_ls, rollback.
Trajectories: traj_start, traj_iter, traj_complete, traj_show, traj_analyze.
Coordination: lease_acquire, lease_renew, lease_release, lease_ls, queue_put, queue_take, queue_peek, memory_put, memory_get, memory_ls, memory_prune.
Events: event_emit (type, to, value), event_ls (by types, source, to, correlation, since, until).
Disposable tiers, never committed: frame_set, frame_get, frame_ls, frame_clear, frame_promote (this session's scratch values, discarded when it closes); cache_set, cache_get, cache_rm.
Key paths take the dot form (risk.level, items.0.id). Values are JSON.
A failed call is a tool error whose structured content is {"code", "kind", "error", ...}: code is the CLI's exit code
(2 bad input, 3 not found/refused, 4 conflict, 5 locked or lease held, 6 stale: re-read and retry).
Pass expect (a revision) on a write to make it a compare-and-swap.
Documents are also resources aiwg://BRANCH/PATH (BRANCH with "/" written %2F); subscribe to be told when one changes.`

// call is what a tool's handler gets besides its arguments: who is
// calling, and how to tell the caller of progress.
type call struct {
	agent string
	req   *sdk.CallToolRequest
}

// agentOf is the agent a request acts as: its bearer token's over HTTP,
// the process's otherwise. An HTTP request without a token's agent is
// refused (the handler lets none through; this holds if one did).
func (s *Server) agentOf(req *sdk.CallToolRequest) (string, error) {
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return req.Extra.TokenInfo.UserID, nil
	}
	if s.tokens != nil {
		return "", fmt.Errorf("no agent: this server takes writes only from a client with a bearer token: %w", store.ErrDenied)
	}
	return s.agent, nil
}

// result is a tool's successful outcome: v as structured content (an
// object: MCP's structured content is one, so a list comes as a
// one-member object naming it) and a line of text for a model to read.
func result(v any, summary string) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: summary}},
		StructuredContent: v,
	}
}

// toolError is a failed call as a tool error: structured content
// {"code", "kind", "error", ...details} with the CLI's exit code, and
// the same object as text for a client that shows only text.
func toolError(err error, extra map[string]any) *sdk.CallToolResult {
	code, kind := exitcode.Of(err)
	var ue usageError
	if errors.As(err, &ue) {
		code, kind = exitcode.Usage, exitcode.KindUsage
	}
	obj := exitcode.Details(err)
	for k, v := range extra {
		obj[k] = v
	}
	obj["code"], obj["kind"], obj["error"] = code, kind, oneLine(err.Error())
	b, _ := json.Marshal(obj)
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: obj,
	}
}

// usageError is a call's arguments at fault: code 2, kind "usage".
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// handler is a tool's work: the structured result and its summary, or an
// error (with, optionally, an outcome to report beside it: a merge's
// conflicts).
type handler[In any] func(ctx context.Context, c *call, in In) (out any, summary string, err error)

// outcomeError carries an outcome a failed call still reports.
type outcomeError struct {
	err     error
	outcome any
}

func (e *outcomeError) Error() string { return e.err.Error() }
func (e *outcomeError) Unwrap() error { return e.err }

// schemaOptions infer input schemas: a raw JSON value is typed any in the
// Go structs, and comes out as a schema that takes any JSON value.
var schemaOptions = &jsonschema.ForOptions{}

// add registers a tool whose input is In. The SDK's typed AddTool would
// do, but reports bad arguments as text alone; here they are tool errors
// of code 2 like any other, and unknown arguments are refused rather than
// ignored (a misspelt "expect" must not drop the compare-and-swap).
func add[In any](s *Server, name, description string, annotations *sdk.ToolAnnotations, h handler[In]) {
	schema, err := jsonschema.For[In](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err)) // a programming error: the tests list every tool
	}
	schema.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	tool := &sdk.Tool{Name: name, Description: description, InputSchema: schema, Annotations: annotations}
	s.sdk.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in In
		if err := decodeArgs(req.Params.Arguments, resolved, &in); err != nil {
			return toolError(err, nil), nil
		}
		agent, err := s.agentOf(req)
		if err != nil {
			return toolError(err, nil), nil
		}
		out, summary, err := h(ctx, &call{agent: agent, req: req}, in)
		if err != nil {
			var oe *outcomeError
			if errors.As(err, &oe) && oe.outcome != nil {
				return toolError(err, map[string]any{"result": oe.outcome}), nil
			}
			return toolError(err, nil), nil
		}
		return result(out, summary), nil
	})
}

// decodeArgs validates a call's arguments against the tool's schema and
// decodes them into in.
func decodeArgs(raw json.RawMessage, resolved *jsonschema.Resolved, in any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return usagef("arguments: want a JSON object: %v", err)
	}
	if err := resolved.Validate(m); err != nil {
		return usagef("arguments: %s", oneLine(err.Error()))
	}
	if err := json.Unmarshal(raw, in); err != nil {
		return usagef("arguments: %v", err)
	}
	return nil
}

// ReadArgs are where a read looks.
type ReadArgs struct {
	Branch string `json:"branch,omitempty" jsonschema:"the branch to read (default: the store's HEAD branch)"`
	At     string `json:"at,omitempty" jsonschema:"read at a revision: a commit, branch, tag, HEAD~N or an RFC 3339 time (default: the branch's head)"`
}

func (r ReadArgs) options() store.ReadOptions { return store.ReadOptions{Branch: r.Branch, At: r.At} }

// WriteArgs are what every write takes beside its own arguments.
type WriteArgs struct {
	Branch         string  `json:"branch,omitempty" jsonschema:"the branch to write (default: the store's HEAD branch)"`
	Source         string  `json:"source,omitempty" jsonschema:"what caused the write, e.g. a task id (Source trailer; log filters on it)"`
	Correlation    string  `json:"correlation,omitempty" jsonschema:"a correlation id grouping one run's writes (Correlation-Id trailer; log filters on it)"`
	Expect         *string `json:"expect,omitempty" jsonschema:"compare-and-swap: fail with kind stale (code 6) unless the branch is at this revision; the error's current field is the head to re-read at"`
	UnchangedSince *string `json:"unchanged_since,omitempty" jsonschema:"compare-and-swap per file: fail with kind stale (code 6) if a file this write changes has changed since this revision"`
	Message        string  `json:"message,omitempty" jsonschema:"the commit subject (default: generated from the change)"`
	Traj           string  `json:"traj,omitempty" jsonschema:"link this write to a trajectory id (Trajectory trailer)"`
	Iter           int     `json:"iter,omitempty" jsonschema:"with traj: link this write to that iteration number (Iteration trailer)"`
}

// options are the store's write options for c's agent.
func (w WriteArgs) options(c *call) (store.WriteOptions, error) {
	wo := store.WriteOptions{Agent: c.agent, Branch: w.Branch, Source: w.Source, Correlation: w.Correlation,
		Expect: w.Expect, UnchangedSince: w.UnchangedSince, Message: w.Message}
	if w.Traj == "" && w.Iter != 0 {
		return wo, usagef("iter needs traj")
	}
	if w.Traj != "" {
		t, err := trajectory.Trailers(w.Traj, w.Iter)
		if err != nil {
			return wo, err
		}
		wo.Trailers = t
	}
	return wo, nil
}

// jsonValue is a raw JSON argument as bytes for the store: absent is an
// error naming the argument (a JSON null is a value).
func jsonValue(name string, v any, given bool) ([]byte, error) {
	if !given {
		return nil, usagef("%s is required: a JSON value", name)
	}
	return json.Marshal(v)
}

// has reports whether the call's arguments name key, which a raw JSON
// argument's Go value (nil for JSON null) cannot tell.
func (c *call) has(key string) bool {
	var m map[string]json.RawMessage
	if c.req == nil || json.Unmarshal(c.req.Params.Arguments, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// mutationSummary is a write's line: short commit, mutation id, subject.
func mutationSummary(m *store.Mutation) string {
	if m == nil {
		return "done"
	}
	return fmt.Sprintf("%s %s %s", short(m.Commit), m.MutationID, m.Subject)
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// write reports a write's mutation, or that nothing changed.
func write(m *store.Mutation, err error) (any, string, error) {
	if errors.Is(err, store.ErrNoChange) {
		return map[string]any{"no_change": true}, "no change: the store already holds that; no commit written", nil
	}
	if err != nil {
		return nil, "", err
	}
	return m, mutationSummary(m), nil
}

// list wraps a list as the one member of an object, never null.
func list[T any](name string, xs []T) map[string]any {
	if xs == nil {
		xs = []T{}
	}
	return map[string]any{name: xs}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
