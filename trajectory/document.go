package trajectory

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits and defaults of the RLM trajectories specification.
const (
	// Version is the schema version written into new trajectories.
	Version = "1.0.0"
	// MaxIterations is the most iterations one trajectory records.
	MaxIterations = 100
	// MaxBytes bounds a trajectory's stored size: its header, iterations
	// and report together.
	MaxBytes = 10 << 20
	// RetentionDays is the specification's retention: prune's default age.
	RetentionDays = 90
	// IDPrefix prefixes trajectory ids: traj-1a2b3c4d.
	IDPrefix = "traj"
)

// Statuses an observation counts as failed, and trajectory outcomes that
// count as success, for metrics and analysis.
var failedObservation = map[string]bool{"failure": true, "error": true, "timeout": true}

// IterationName is the file name of iteration n: 0001.json. Four digits
// sort in order and cover MaxIterations.
func IterationName(n int) string { return fmt.Sprintf("%04d.json", n) }

// ParseIterationName is IterationName's inverse; ok is false for any other
// name, so stray files never count as iterations.
func ParseIterationName(name string) (int, bool) {
	digits, ok := strings.CutSuffix(name, ".json")
	if !ok || len(digits) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || IterationName(n) != name {
		return 0, false
	}
	return n, true
}

// Timestamp formats a time as the documents store it: UTC, RFC 3339 with
// milliseconds when there are any.
func Timestamp(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.999Z07:00")
}

// Start describes a new trajectory.
type Start struct {
	ID, TaskID, TaskType, Prompt  string
	TreeID, StateID, ParentTaskID string
	Model                         string
	// Extra holds further header fields (task_context.depth, metadata.seed,
	// ...) as a partial document; the fields above win over it.
	Extra map[string]any
	Now   time.Time
}

// NewHeader builds the trajectory.json of a new trajectory: the specification's
// document without iterations, outcome or totals.
func NewHeader(st Start) map[string]any {
	h := cloneMap(st.Extra)
	delete(h, "iterations")
	h["version"] = Version
	h["trajectory_id"] = st.ID
	tc := mapAt(h, "task_context")
	setNonEmpty(tc, "task_id", st.TaskID)
	setNonEmpty(tc, "task_type", st.TaskType)
	setNonEmpty(tc, "task_prompt", st.Prompt)
	setNonEmpty(tc, "tree_id", st.TreeID)
	setNonEmpty(tc, "state_id", st.StateID)
	setNonEmpty(tc, "parent_task_id", st.ParentTaskID)
	md := mapAt(h, "metadata")
	setNonEmpty(md, "model", st.Model)
	if _, ok := md["started_at"]; !ok && !st.Now.IsZero() {
		md["started_at"] = Timestamp(st.Now)
	}
	return h
}

// IterationFields are the parts of an iteration given as flags; zero
// values are left out. Given fields override those of a JSON base.
type IterationFields struct {
	ThoughtType, Thought, Confidence         string
	Tool, Description, Rationale             string
	Params                                   map[string]any
	Status, Result, ResultType               string
	Extraction, Learned, ErrorType, ErrorMsg string
	TokensIn, TokensOut, DurationMs          *int64
	CostUSD                                  string // a decimal literal
}

// BuildIteration merges flags over base (a decoded JSON object, or nil) and
// fills what the store knows: the number and, when missing, the
// timestamp. An action without a description gets "call TOOL", since the
// schema requires one and the tool is the least a reader needs.
func BuildIteration(base map[string]any, f IterationFields, n int, now time.Time) (map[string]any, error) {
	it := cloneMap(base)
	thought := mapAt(it, "thought")
	setNonEmpty(thought, "type", f.ThoughtType)
	setNonEmpty(thought, "content", f.Thought)
	if f.Confidence != "" {
		n, err := number(f.Confidence, "confidence")
		if err != nil {
			return nil, err
		}
		thought["confidence"] = n
	}
	action := mapAt(it, "action")
	setNonEmpty(action, "tool", f.Tool)
	setNonEmpty(action, "description", f.Description)
	setNonEmpty(action, "rationale", f.Rationale)
	if f.Params != nil {
		action["parameters"] = f.Params
	}
	if _, ok := action["description"]; !ok {
		if tool, ok := action["tool"].(string); ok && tool != "" {
			action["description"] = "call " + tool
		}
	}
	obs := mapAt(it, "observation")
	setNonEmpty(obs, "status", f.Status)
	setNonEmpty(obs, "result", f.Result)
	setNonEmpty(obs, "result_type", f.ResultType)
	setNonEmpty(obs, "extraction", f.Extraction)
	setNonEmpty(obs, "learned", f.Learned)
	if f.ErrorType != "" || f.ErrorMsg != "" {
		ed := mapAt(obs, "error_details")
		setNonEmpty(ed, "error_type", f.ErrorType)
		setNonEmpty(ed, "message", f.ErrorMsg)
	}
	if f.TokensIn != nil || f.TokensOut != nil || f.CostUSD != "" {
		cost := mapAt(it, "cost")
		if f.TokensIn != nil {
			cost["input_tokens"] = json.Number(strconv.FormatInt(*f.TokensIn, 10))
		}
		if f.TokensOut != nil {
			cost["output_tokens"] = json.Number(strconv.FormatInt(*f.TokensOut, 10))
		}
		if f.TokensIn != nil && f.TokensOut != nil {
			cost["total_tokens"] = json.Number(strconv.FormatInt(*f.TokensIn+*f.TokensOut, 10))
		}
		if f.CostUSD != "" {
			n, err := number(f.CostUSD, "cost")
			if err != nil {
				return nil, err
			}
			cost["total_cost_usd"] = n
		}
	}
	if f.DurationMs != nil {
		it["duration_ms"] = json.Number(strconv.FormatInt(*f.DurationMs, 10))
	}
	dropEmpty(it, "thought", "action", "observation", "cost")
	if given, ok := it["iteration_number"]; ok {
		if g, ok := intOf(given); !ok || g != n {
			return nil, &NumberError{Given: fmt.Sprint(given), Next: n}
		}
	}
	it["iteration_number"] = json.Number(strconv.Itoa(n))
	if _, ok := it["timestamp"]; !ok && !now.IsZero() {
		it["timestamp"] = Timestamp(now)
	}
	return it, nil
}

// NumberError: an iteration came with an iteration_number other than the
// next one. The store numbers iterations; a given number is an
// expectation, so a retried write does not record the same step twice.
type NumberError struct {
	Given string
	Next  int
}

func (e *NumberError) Error() string {
	return fmt.Sprintf("iteration_number %s was given but the next iteration is %d (iterations are numbered by the store; leave iteration_number out, or give the next one)", e.Given, e.Next)
}

func number(s, what string) (json.Number, error) {
	if _, err := strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "xXpP_") || strings.TrimSpace(s) != s {
		return "", fmt.Errorf("%w: %s must be a number, got %q", ErrInvalid, what, s)
	}
	if !json.Valid([]byte(s)) {
		return "", fmt.Errorf("%w: %s must be a JSON number, got %q", ErrInvalid, what, s)
	}
	return json.Number(s), nil
}

// Assemble returns the specification's document: the header with its iterations.
func Assemble(header map[string]any, iterations []map[string]any) map[string]any {
	doc := cloneMap(header)
	its := make([]any, len(iterations))
	for i, it := range iterations {
		its[i] = it
	}
	doc["iterations"] = its
	return doc
}

// Split is Assemble's inverse, for importing documents in the specification's format.
func Split(doc map[string]any) (header map[string]any, iterations []map[string]any, err error) {
	header = cloneMap(doc)
	raw, _ := header["iterations"].([]any)
	delete(header, "iterations")
	for i, r := range raw {
		it, ok := r.(map[string]any)
		if !ok {
			return nil, nil, &ValidationError{Field: fmt.Sprintf("iterations.%d", i), Reason: "an iteration must be an object"}
		}
		if n, ok := intOf(it["iteration_number"]); !ok || n != i+1 {
			return nil, nil, &ValidationError{Field: fmt.Sprintf("iterations.%d.iteration_number", i),
				Reason: fmt.Sprintf("iterations must be numbered 1, 2, 3... in order; want %d", i+1)}
		}
		iterations = append(iterations, it)
	}
	return header, iterations, nil
}

// Completed reports whether a header has an outcome.
func Completed(header map[string]any) bool {
	_, ok := header["outcome"].(map[string]any)
	return ok
}

// Summary is one line of the trajectory index of the specification, derived from a
// header and its iteration count.
type Summary struct {
	ID         string    `json:"trajectory_id"`
	TaskID     string    `json:"task_id,omitempty"`
	TaskType   string    `json:"task_type"`
	Prompt     string    `json:"task_prompt,omitempty"`
	Status     string    `json:"status"` // the outcome, or "running"
	Iterations int       `json:"iterations"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	Model      string    `json:"model,omitempty"`
	CostUSD    string    `json:"total_cost_usd,omitempty"`
}

// Summarize derives the index entry of a trajectory.
func Summarize(header map[string]any, iterations int) Summary {
	s := Summary{
		ID:         Str(header, "trajectory_id"),
		TaskID:     Str(header, "task_context", "task_id"),
		TaskType:   Str(header, "task_context", "task_type"),
		Prompt:     Str(header, "task_context", "task_prompt"),
		Status:     Str(header, "outcome", "status"),
		Iterations: iterations,
		Model:      Str(header, "metadata", "model"),
	}
	if s.Status == "" {
		s.Status = "running"
	}
	s.StartedAt, _ = time.Parse(time.RFC3339, Str(header, "metadata", "started_at"))
	if n, ok := Get(header, "metadata", "total_cost_usd").(json.Number); ok {
		s.CostUSD = string(n)
	}
	return s
}

// LastActivity is when a trajectory was last known to be worked on, from
// its own times: completion, start and iteration timestamps. ok is false
// when it records no time at all.
func LastActivity(header map[string]any, iterations []map[string]any) (time.Time, bool) {
	var last time.Time
	consider := func(s string) {
		if t, err := time.Parse(time.RFC3339, s); err == nil && t.After(last) {
			last = t
		}
	}
	consider(Str(header, "metadata", "completed_at"))
	consider(Str(header, "metadata", "started_at"))
	for _, it := range iterations {
		consider(Str(it, "timestamp"))
	}
	return last, !last.IsZero()
}

// Get follows keys through nested objects; nil when any is missing.
func Get(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// Str is Get for a string; "" when missing or not a string.
func Str(m map[string]any, keys ...string) string {
	s, _ := Get(m, keys...).(string)
	return s
}

func intOf(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(string(x))
		return n, err == nil
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		return int(x), float64(int(x)) == x
	}
	return 0, false
}

// mapAt returns m[key] as an object, creating it when absent or not an
// object (a non-object there would fail validation anyway).
func mapAt(m map[string]any, key string) map[string]any {
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[key] = o
	return o
}

func setNonEmpty(m map[string]any, key, v string) {
	if v != "" {
		m[key] = v
	}
}

func dropEmpty(m map[string]any, keys ...string) {
	for _, k := range keys {
		if o, ok := m[k].(map[string]any); ok && len(o) == 0 {
			delete(m, k)
		}
	}
}

// cloneMap copies the maps and slices of a decoded value, so edits never
// reach a caller's document.
func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+4)
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
