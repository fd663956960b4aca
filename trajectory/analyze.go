package trajectory

import (
	"encoding/json"
	"math"
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
		a.RetryCount += ComputeMetrics(r.Iterations).Retries

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
