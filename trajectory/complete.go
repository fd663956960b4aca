package trajectory

import (
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Completion is what `traj complete` is told.
type Completion struct {
	Status, FinalResult, Reason string
	// Extra holds further outcome, metadata and quality_metrics fields as a
	// partial document ({"quality_metrics": {"overall_quality": 0.9}}); what
	// it gives is kept over what the store computes.
	Extra map[string]any
	Now   time.Time
}

// Complete returns the header of a finished trajectory: the outcome, the
// metadata totals computed from the iterations (tokens, cost, duration,
// iteration count) and the quality metrics that can be computed from them
// (successful and failed iterations, retry count and rate, efficiency, error
// recovery, each tool's success). Values the caller gives in Extra, or gave
// in the header when the run started, are kept as given.
func Complete(header map[string]any, iterations []map[string]any, c Completion) map[string]any {
	h := cloneMap(header)
	extra := cloneMap(c.Extra)

	outcome := mapAt(h, "outcome")
	setNonEmpty(outcome, "status", c.Status)
	setNonEmpty(outcome, "final_result", c.FinalResult)
	setNonEmpty(outcome, "completion_reason", c.Reason)
	if len(iterations) > 0 {
		// The schema's minimum is 1: a run with no iteration leaves it out.
		outcome["iterations_to_completion"] = json.Number(strconv.Itoa(len(iterations)))
	}
	mergeInto(outcome, extra["outcome"])

	md := mapAt(h, "metadata")
	if _, ok := md["completed_at"]; !ok && !c.Now.IsZero() {
		md["completed_at"] = Timestamp(c.Now)
	}
	t := Totals(iterations)
	md["total_iterations"] = json.Number(strconv.Itoa(len(iterations)))
	if t.hasTokens {
		md["total_tokens"] = json.Number(strconv.FormatInt(t.Tokens, 10))
	}
	if t.hasCost {
		md["total_cost_usd"] = json.Number(t.CostUSD)
	}
	if ms, ok := elapsedMs(md); ok {
		md["total_duration_ms"] = json.Number(strconv.FormatInt(ms, 10))
	} else if t.hasDuration {
		md["total_duration_ms"] = json.Number(strconv.FormatInt(t.DurationMs, 10))
	}
	mergeInto(md, extra["metadata"])

	// A metric the caller gave, when the run started or now, is kept: the
	// store computes only what it was not told. The ones that need
	// judgement (hallucination_detected, thought_grounding,
	// reasoning_quality, action_appropriateness, overall_quality) are
	// never computed, only kept.
	qm := mapAt(h, "quality_metrics")
	given := map[string]bool{}
	for k := range qm {
		given[k] = true
	}
	if p, ok := extra["quality_metrics"].(map[string]any); ok {
		for k := range p {
			given[k] = true
		}
	}
	set := func(k string, v any) {
		if !given[k] {
			qm[k] = v
		}
	}
	m := ComputeMetrics(iterations)
	set("successful_iterations", json.Number(strconv.Itoa(m.Successful)))
	set("failed_iterations", json.Number(strconv.Itoa(m.Failed)))
	set("retry_count", json.Number(strconv.Itoa(m.Retries)))
	if len(iterations) > 0 {
		set("efficiency", ratio(m.Successful, len(iterations)))
		set("retry_rate", ratio(m.Retries, len(iterations)))
	}
	set("error_recovery", ratio(m.Recovered, m.Failed))
	if len(m.Tools) > 0 {
		tools := make([]any, len(m.Tools))
		for i, t := range m.Tools {
			tools[i] = map[string]any{"tool": t.Tool, "calls": json.Number(strconv.Itoa(t.Calls)),
				"successful": json.Number(strconv.Itoa(t.Successful)), "success_rate": ratio(t.Successful, t.Calls)}
		}
		set("tool_success", tools)
	}
	mergeInto(qm, extra["quality_metrics"])

	for k, v := range extra {
		if k != "outcome" && k != "metadata" && k != "quality_metrics" && k != "iterations" {
			h[k] = v
		}
	}
	return h
}

// mergeInto copies the members of a partial object over dst.
func mergeInto(dst map[string]any, partial any) {
	if p, ok := partial.(map[string]any); ok {
		for k, v := range p {
			dst[k] = v
		}
	}
}

// ratio is a/b with at most 4 decimals, 1 when b is 0 (nothing to fail at).
func ratio(a, b int) json.Number {
	if b == 0 {
		return "1"
	}
	return json.Number(trimDecimal(strconv.FormatFloat(float64(a)/float64(b), 'f', 4, 64)))
}

func trimDecimal(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func elapsedMs(md map[string]any) (int64, bool) {
	a, err1 := time.Parse(time.RFC3339, Str(md, "started_at"))
	b, err2 := time.Parse(time.RFC3339, Str(md, "completed_at"))
	if err1 != nil || err2 != nil || b.Before(a) {
		return 0, false
	}
	return b.Sub(a).Milliseconds(), true
}

// Sums are a trajectory's totals over its iterations.
type Sums struct {
	Tokens     int64
	CostUSD    string // exact decimal sum of the iterations' literals
	DurationMs int64

	hasTokens, hasCost, hasDuration bool
}

// Totals adds up the iterations' costs. Token counts are total_tokens, or
// input plus output when the total is missing; money is summed exactly in
// decimal, so 0.006 + 0.010 + 0.015 is 0.031 and not 0.031000000000000003.
func Totals(iterations []map[string]any) Sums {
	var s Sums
	var cost Decimal
	for _, it := range iterations {
		c, _ := it["cost"].(map[string]any)
		if n, ok := intOf(c["total_tokens"]); ok {
			s.Tokens += int64(n)
			s.hasTokens = true
		} else {
			in, ok1 := intOf(c["input_tokens"])
			out, ok2 := intOf(c["output_tokens"])
			if ok1 || ok2 {
				s.Tokens += int64(in + out)
				s.hasTokens = true
			}
		}
		if cost.Add(c["total_cost_usd"]) {
			s.hasCost = true
		}
		if n, ok := intOf(it["duration_ms"]); ok {
			s.DurationMs += int64(n)
			s.hasDuration = true
		}
	}
	s.CostUSD = cost.String()
	return s
}

// Decimal sums JSON number literals exactly.
type Decimal struct{ r big.Rat }

// Add adds a JSON number; it reports false (and adds nothing) for anything
// else.
func (d *Decimal) Add(v any) bool {
	var lit string
	switch x := v.(type) {
	case json.Number:
		lit = string(x)
	case float64:
		lit = strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		lit = strconv.Itoa(x)
	default:
		return false
	}
	var r big.Rat
	if _, ok := r.SetString(lit); !ok {
		return false
	}
	d.r.Add(&d.r, &r)
	return true
}

// Float is the sum as a float64, for averages.
func (d *Decimal) Float() float64 {
	f, _ := d.r.Float64()
	return f
}

// String is the sum as the shortest exact decimal literal (sums of decimal
// literals always have one); at most 18 decimals otherwise.
func (d *Decimal) String() string {
	for prec := 0; prec <= 18; prec++ {
		s := d.r.FloatString(prec)
		var back big.Rat
		back.SetString(s)
		if back.Cmp(&d.r) == 0 {
			return s
		}
	}
	return trimDecimal(d.r.FloatString(18))
}

// Metrics are the quality metrics computable from iterations alone.
type Metrics struct {
	Successful int `json:"successful_iterations"`
	Failed     int `json:"failed_iterations"`
	// Retries: iterations that call the same tool as the iteration just
	// before, when that one did not succeed.
	Retries int `json:"retry_count"`
	// Recovered: failed iterations followed, later in the run, by a
	// successful one.
	Recovered int `json:"recovered"`
	// Tools are the calls of each tool and how many succeeded, by tool
	// name.
	Tools []ToolSuccess `json:"tool_success,omitempty"`
}

// ToolSuccess is how often one tool was called and succeeded.
type ToolSuccess struct {
	Tool        string  `json:"tool"`
	Calls       int     `json:"calls"`
	Successful  int     `json:"successful"`
	SuccessRate float64 `json:"success_rate"`
}

// ComputeMetrics counts observations: success is successful; failure,
// error and timeout are failed; partial is neither.
func ComputeMetrics(iterations []map[string]any) Metrics {
	var m Metrics
	lastSuccess := -1
	for i := len(iterations) - 1; i >= 0; i-- {
		if Str(iterations[i], "observation", "status") == "success" {
			lastSuccess = i
			break
		}
	}
	tools := map[string]*ToolSuccess{}
	for i, it := range iterations {
		st := Str(it, "observation", "status")
		if tool := Str(it, "action", "tool"); tool != "" {
			t := tools[tool]
			if t == nil {
				t = &ToolSuccess{Tool: tool}
				tools[tool] = t
			}
			t.Calls++
			if st == "success" {
				t.Successful++
			}
		}
		switch {
		case st == "success":
			m.Successful++
		case failedObservation[st]:
			m.Failed++
			if lastSuccess > i {
				m.Recovered++
			}
		}
		if i > 0 {
			prev := iterations[i-1]
			if Str(prev, "observation", "status") != "success" && Str(prev, "action", "tool") != "" &&
				Str(prev, "action", "tool") == Str(it, "action", "tool") {
				m.Retries++
			}
		}
	}
	for _, t := range tools {
		t.SuccessRate = rate(t.Successful, t.Calls)
		m.Tools = append(m.Tools, *t)
	}
	sort.Slice(m.Tools, func(i, j int) bool { return m.Tools[i].Tool < m.Tools[j].Tool })
	return m
}

func jsonNumber(s string) any { return json.Number(s) }
