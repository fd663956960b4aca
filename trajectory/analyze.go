package trajectory

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Run is one trajectory as analysis reads it.
type Run struct {
	Header     map[string]any
	Iterations []map[string]any
}

// AnalyzeOptions narrow and shape an analysis.
type AnalyzeOptions struct {
	// TaskType keeps one task type ("" = all).
	TaskType string
	// Since keeps trajectories started at or after it (zero = all); a
	// trajectory without a start time is judged by its last activity.
	Since time.Time
	// NGram is the length of the tool sequences counted (default 3; runs
	// shorter than that count as one sequence of their own length).
	NGram int
	// Top bounds the failure patterns and tool sequences listed (default 10).
	Top int
	// MinRetries is how many retries make a retry pattern worth fixing
	// the prompt for (default 2).
	MinRetries int
	// MinSuccessRate is the success rate from which a task type's
	// successful runs give a prompt template (default 0.8).
	MinSuccessRate float64
}

// Analysis is the learning summary of the RLM trajectories specification over many trajectories.
type Analysis struct {
	Trajectories int `json:"trajectories"`
	// Completed have an outcome; rates are over completed trajectories.
	Completed   int     `json:"completed"`
	Successful  int     `json:"successful"`
	SuccessRate float64 `json:"success_rate"`
	// AverageIterationsToSuccess is the mean iteration count of
	// successful trajectories.
	AverageIterationsToSuccess float64          `json:"average_iterations_to_success"`
	RetryCount                 int              `json:"retry_count"`
	FailurePatterns            []FailurePattern `json:"failure_patterns"`
	ToolSequences              []ToolSequence   `json:"effective_tool_sequences"`
	ByTaskType                 []TaskTypeStats  `json:"by_task_type"`
	// ToolSuccess is each tool's calls and successes over every run.
	ToolSuccess []ToolSuccess `json:"tool_success"`
	// PromptImprovements is the specification's improve_prompts output.
	PromptImprovements PromptImprovements `json:"prompt_improvements"`
}

// PromptImprovements say where prompts need work and what worked: the
// RLM trajectories' "if high retry count: identify and fix ambiguous
// instructions" and "if high success rate: extract a prompt template".
type PromptImprovements struct {
	// HighRetryPatterns are the tools retried at least MinRetries times
	// after the same kind of failure in one task type, most retried first.
	HighRetryPatterns []RetryPattern `json:"high_retry_patterns"`
	// Templates are drawn from the successful runs of each task type whose
	// success rate is at least MinSuccessRate.
	Templates []PromptTemplate `json:"templates"`
}

// RetryPattern is a tool called again right after it failed, in one task
// type, after one kind of failure: a sign of an ambiguous instruction.
type RetryPattern struct {
	TaskType string `json:"task_type"`
	Tool     string `json:"tool"`
	// ErrorType is the failed attempt's error_details.error_type, or its
	// status.
	ErrorType string `json:"error_type"`
	Retries   int    `json:"retries"`
	// Trajectories (at most 5) hold the retries, Prompts (at most 3,
	// distinct) are their task prompts: the instructions to make clearer.
	Trajectories []string `json:"trajectories"`
	Prompts      []string `json:"prompts"`
}

// PromptTemplate is what the successful runs of a task type did.
type PromptTemplate struct {
	TaskType    string  `json:"task_type"`
	SuccessRate float64 `json:"success_rate"`
	Successful  int     `json:"successful"`
	// Prompt, Tools and Iterations are the successful run that took the
	// fewest iterations (TrajectoryID), ties by id: the template.
	Prompt       string   `json:"prompt"`
	TrajectoryID string   `json:"trajectory_id"`
	Iterations   int      `json:"iterations"`
	Tools        []string `json:"tools"`
	// ExamplePrompts are up to 3 distinct prompts of successful runs,
	// shortest runs first.
	ExamplePrompts []string `json:"example_prompts"`
}

// FailurePattern is one kind of failed observation and what followed it.
type FailurePattern struct {
	// ErrorType is error_details.error_type, or the observation status when
	// none is given.
	ErrorType   string `json:"error_type"`
	Occurrences int    `json:"occurrences"`
	// Recovered counts occurrences whose next iteration succeeded.
	Recovered int `json:"recovered"`
	// RecoveryActions are the tools of those next iterations.
	RecoveryActions []ToolCount `json:"recovery_actions"`
	// SuccessAfter counts occurrences in trajectories whose outcome was
	// success.
	SuccessAfter int `json:"success_after_recovery"`
}

// ToolCount is a tool and how often it appears.
type ToolCount struct {
	Tool  string `json:"tool"`
	Count int    `json:"count"`
}

// ToolSequence is a run of consecutive tools in successful trajectories.
type ToolSequence struct {
	Tools []string `json:"tools"`
	// Count is its occurrences, Trajectories the successful trajectories
	// holding it at least once.
	Count        int `json:"count"`
	Trajectories int `json:"trajectories"`
}

// TaskTypeStats are the figures of one task type.
type TaskTypeStats struct {
	TaskType                   string      `json:"task_type"`
	Trajectories               int         `json:"trajectories"`
	Completed                  int         `json:"completed"`
	Successful                 int         `json:"successful"`
	SuccessRate                float64     `json:"success_rate"`
	AverageIterationsToSuccess float64     `json:"average_iterations_to_success"`
	TotalTokens                int64       `json:"total_tokens"`
	TotalCostUSD               json.Number `json:"total_cost_usd"` // exact: the sum of the decimals stored
	AverageCostUSD             float64     `json:"average_cost_usd"`
}

// Keep reports whether a run passes the options' filters.
func (o AnalyzeOptions) Keep(header map[string]any, iterations []map[string]any) bool {
	if o.TaskType != "" && Str(header, "task_context", "task_type") != o.TaskType {
		return false
	}
	if !o.Since.IsZero() {
		t, err := time.Parse(time.RFC3339, Str(header, "metadata", "started_at"))
		if err != nil {
			var ok bool
			if t, ok = LastActivity(header, iterations); !ok {
				return false
			}
		}
		if t.Before(o.Since) {
			return false
		}
	}
	return true
}

// Analyze computes the learning patterns of the RLM trajectories specification over runs, after the
// options' filters. Results are deterministic: ties sort by name.
func Analyze(runs []Run, o AnalyzeOptions) Analysis {
	if o.NGram <= 0 {
		o.NGram = 3
	}
	if o.Top <= 0 {
		o.Top = 10
	}
	if o.MinRetries <= 0 {
		o.MinRetries = 2
	}
	if o.MinSuccessRate <= 0 {
		o.MinSuccessRate = 0.8
	}
	tools := map[string]*ToolSuccess{}
	type retryKey struct{ tt, tool, et string }
	retries := map[retryKey]*RetryPattern{}
	type okRun struct {
		id, prompt string
		tools      []string
	}
	okRuns := map[string][]okRun{}
	var a Analysis
	successIters := 0
	patterns := map[string]*FailurePattern{}
	recovery := map[string]map[string]int{}
	type seqStat struct{ count, runs int }
	seqs := map[string]*seqStat{}
	types := map[string]*TaskTypeStats{}
	typeIters := map[string]int{}
	typeCost := map[string]*Decimal{}

	for _, r := range runs {
		if !o.Keep(r.Header, r.Iterations) {
			continue
		}
		a.Trajectories++
		tt := Str(r.Header, "task_context", "task_type")
		ts := types[tt]
		if ts == nil {
			ts = &TaskTypeStats{TaskType: tt}
			types[tt] = ts
			typeCost[tt] = &Decimal{}
		}
		ts.Trajectories++
		status := Str(r.Header, "outcome", "status")
		success := status == "success"
		if status != "" {
			a.Completed++
			ts.Completed++
		}
		if success {
			a.Successful++
			ts.Successful++
			successIters += len(r.Iterations)
			typeIters[tt] += len(r.Iterations)
		}
		sums := Totals(r.Iterations)
		ts.TotalTokens += sums.Tokens
		if sums.hasCost {
			typeCost[tt].Add(jsonNumber(sums.CostUSD))
		} else {
			typeCost[tt].Add(Get(r.Header, "metadata", "total_cost_usd"))
		}
		rm := ComputeMetrics(r.Iterations)
		a.RetryCount += rm.Retries
		for _, t := range rm.Tools {
			ts := tools[t.Tool]
			if ts == nil {
				ts = &ToolSuccess{Tool: t.Tool}
				tools[t.Tool] = ts
			}
			ts.Calls += t.Calls
			ts.Successful += t.Successful
		}
		id, prompt := Str(r.Header, "trajectory_id"), Str(r.Header, "task_context", "task_prompt")
		for i := 1; i < len(r.Iterations); i++ {
			prev, it := r.Iterations[i-1], r.Iterations[i]
			tool := Str(it, "action", "tool")
			st := Str(prev, "observation", "status")
			if st == "success" || tool == "" || Str(prev, "action", "tool") != tool {
				continue // as ComputeMetrics counts a retry
			}
			et := Str(prev, "observation", "error_details", "error_type")
			if et == "" {
				et = st
			}
			k := retryKey{tt, tool, et}
			p := retries[k]
			if p == nil {
				p = &RetryPattern{TaskType: tt, Tool: tool, ErrorType: et, Trajectories: []string{}, Prompts: []string{}}
				retries[k] = p
			}
			p.Retries++
			if id != "" && len(p.Trajectories) < 5 && !slices.Contains(p.Trajectories, id) {
				p.Trajectories = append(p.Trajectories, id)
			}
			if prompt != "" && len(p.Prompts) < 3 && !slices.Contains(p.Prompts, prompt) {
				p.Prompts = append(p.Prompts, prompt)
			}
		}
		if success {
			run := okRun{id: id, prompt: prompt, tools: make([]string, len(r.Iterations))}
			for i, it := range r.Iterations {
				run.tools[i] = Str(it, "action", "tool")
			}
			okRuns[tt] = append(okRuns[tt], run)
		}

		for i, it := range r.Iterations {
			st := Str(it, "observation", "status")
			if !failedObservation[st] {
				continue
			}
			et := Str(it, "observation", "error_details", "error_type")
			if et == "" {
				et = st
			}
			p := patterns[et]
			if p == nil {
				p = &FailurePattern{ErrorType: et}
				patterns[et] = p
				recovery[et] = map[string]int{}
			}
			p.Occurrences++
			if success {
				p.SuccessAfter++
			}
			if i+1 < len(r.Iterations) && Str(r.Iterations[i+1], "observation", "status") == "success" {
				p.Recovered++
				recovery[et][Str(r.Iterations[i+1], "action", "tool")]++
			}
		}

		if success && len(r.Iterations) > 0 {
			tools := make([]string, len(r.Iterations))
			for i, it := range r.Iterations {
				tools[i] = Str(it, "action", "tool")
			}
			n := min(o.NGram, len(tools))
			seen := map[string]bool{}
			for i := 0; i+n <= len(tools); i++ {
				key := strings.Join(tools[i:i+n], "\x00")
				s := seqs[key]
				if s == nil {
					s = &seqStat{}
					seqs[key] = s
				}
				s.count++
				if !seen[key] {
					seen[key] = true
					s.runs++
				}
			}
		}
	}

	a.SuccessRate = rate(a.Successful, a.Completed)
	a.AverageIterationsToSuccess = rate(successIters, a.Successful)

	a.FailurePatterns = []FailurePattern{}
	for et, p := range patterns {
		for tool, n := range recovery[et] {
			p.RecoveryActions = append(p.RecoveryActions, ToolCount{Tool: tool, Count: n})
		}
		sort.Slice(p.RecoveryActions, func(i, j int) bool {
			x, y := p.RecoveryActions[i], p.RecoveryActions[j]
			return x.Count > y.Count || x.Count == y.Count && x.Tool < y.Tool
		})
		if p.RecoveryActions == nil {
			p.RecoveryActions = []ToolCount{}
		}
		a.FailurePatterns = append(a.FailurePatterns, *p)
	}
	sort.Slice(a.FailurePatterns, func(i, j int) bool {
		x, y := a.FailurePatterns[i], a.FailurePatterns[j]
		return x.Occurrences > y.Occurrences || x.Occurrences == y.Occurrences && x.ErrorType < y.ErrorType
	})
	a.FailurePatterns = a.FailurePatterns[:min(o.Top, len(a.FailurePatterns))]

	a.ToolSequences = []ToolSequence{}
	for key, s := range seqs {
		a.ToolSequences = append(a.ToolSequences, ToolSequence{Tools: strings.Split(key, "\x00"), Count: s.count, Trajectories: s.runs})
	}
	sort.Slice(a.ToolSequences, func(i, j int) bool {
		x, y := a.ToolSequences[i], a.ToolSequences[j]
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return strings.Join(x.Tools, "\x00") < strings.Join(y.Tools, "\x00")
	})
	a.ToolSequences = a.ToolSequences[:min(o.Top, len(a.ToolSequences))]

	a.ByTaskType = []TaskTypeStats{}
	for tt, ts := range types {
		ts.SuccessRate = rate(ts.Successful, ts.Completed)
		ts.AverageIterationsToSuccess = rate(typeIters[tt], ts.Successful)
		ts.TotalCostUSD = json.Number(typeCost[tt].String())
		ts.AverageCostUSD = round(typeCost[tt].Float()/float64(ts.Trajectories), 6)
		a.ByTaskType = append(a.ByTaskType, *ts)
	}
	sort.Slice(a.ByTaskType, func(i, j int) bool { return a.ByTaskType[i].TaskType < a.ByTaskType[j].TaskType })

	a.ToolSuccess = []ToolSuccess{}
	for _, t := range tools {
		t.SuccessRate = rate(t.Successful, t.Calls)
		a.ToolSuccess = append(a.ToolSuccess, *t)
	}
	sort.Slice(a.ToolSuccess, func(i, j int) bool { return a.ToolSuccess[i].Tool < a.ToolSuccess[j].Tool })

	pi := PromptImprovements{HighRetryPatterns: []RetryPattern{}, Templates: []PromptTemplate{}}
	for _, p := range retries {
		if p.Retries >= o.MinRetries {
			pi.HighRetryPatterns = append(pi.HighRetryPatterns, *p)
		}
	}
	sort.Slice(pi.HighRetryPatterns, func(i, j int) bool {
		x, y := pi.HighRetryPatterns[i], pi.HighRetryPatterns[j]
		if x.Retries != y.Retries {
			return x.Retries > y.Retries
		}
		return x.TaskType+"\x00"+x.Tool+"\x00"+x.ErrorType < y.TaskType+"\x00"+y.Tool+"\x00"+y.ErrorType
	})
	pi.HighRetryPatterns = pi.HighRetryPatterns[:min(o.Top, len(pi.HighRetryPatterns))]
	for _, ts := range a.ByTaskType {
		runs := okRuns[ts.TaskType]
		if len(runs) == 0 || ts.SuccessRate < o.MinSuccessRate {
			continue
		}
		sort.SliceStable(runs, func(i, j int) bool {
			if len(runs[i].tools) != len(runs[j].tools) {
				return len(runs[i].tools) < len(runs[j].tools)
			}
			return runs[i].id < runs[j].id
		})
		best := runs[0]
		tp := PromptTemplate{TaskType: ts.TaskType, SuccessRate: ts.SuccessRate, Successful: ts.Successful,
			Prompt: best.prompt, TrajectoryID: best.id, Iterations: len(best.tools), Tools: best.tools, ExamplePrompts: []string{}}
		for _, r := range runs {
			if r.prompt != "" && len(tp.ExamplePrompts) < 3 && !slices.Contains(tp.ExamplePrompts, r.prompt) {
				tp.ExamplePrompts = append(tp.ExamplePrompts, r.prompt)
			}
		}
		pi.Templates = append(pi.Templates, tp)
	}
	a.PromptImprovements = pi
	return a
}

// rate is a/b rounded to 4 decimals; 0 when b is 0.
func rate(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return round(float64(a)/float64(b), 4)
}

func round(f float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(f*p) / p
}
