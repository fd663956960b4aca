package trajectory

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aiwg/aiwg-state/objects"
)

func TestDecimalSumsAreExact(t *testing.T) {
	cases := []struct {
		in   []any
		want string
	}{
		{[]any{json.Number("0.006"), json.Number("0.010"), json.Number("0.015")}, "0.031"},
		{[]any{json.Number("0.0045"), json.Number("0.007")}, "0.0115"},
		{[]any{json.Number("0.1"), json.Number("0.2")}, "0.3"},
		{[]any{json.Number("1e-3"), json.Number("2")}, "2.001"},
		{[]any{}, "0"},
		{[]any{"not a number", nil, json.Number("5")}, "5"},
	}
	for _, c := range cases {
		var d Decimal
		for _, v := range c.in {
			d.Add(v)
		}
		if got := d.String(); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCompleteComputesWhatTheSeedComputes(t *testing.T) {
	for _, name := range []string{"successful_trajectory", "failed_trajectory"} {
		seed := loadExample(t, name)
		header, its, err := Split(seed)
		if err != nil {
			t.Fatal(err)
		}
		delete(header, "outcome")
		delete(header, "quality_metrics")
		md, _ := header["metadata"].(map[string]any)
		for _, k := range []string{"total_iterations", "total_tokens", "total_cost_usd"} {
			delete(md, k)
		}
		done := Complete(header, its, Completion{Status: "success", Now: time.Date(2026, 2, 9, 10, 0, 3, 0, time.UTC)})
		wantMD := seed["metadata"].(map[string]any)
		for _, k := range []string{"total_iterations", "total_tokens", "total_cost_usd"} {
			if !objects.Equal(Get(done, "metadata", k), wantMD[k]) {
				t.Errorf("%s: metadata.%s = %v, want %v", name, k, Get(done, "metadata", k), wantMD[k])
			}
		}
		wantQM := seed["quality_metrics"].(map[string]any)
		for _, k := range []string{"successful_iterations", "failed_iterations", "retry_count", "error_recovery"} {
			if !objects.Equal(Get(done, "quality_metrics", k), wantQM[k]) {
				t.Errorf("%s: quality_metrics.%s = %v, want %v", name, k, Get(done, "quality_metrics", k), wantQM[k])
			}
		}
		if !objects.Equal(Get(done, "outcome", "iterations_to_completion"), Get(seed, "outcome", "iterations_to_completion")) {
			t.Errorf("%s: iterations_to_completion = %v", name, Get(done, "outcome", "iterations_to_completion"))
		}
	}
}

func TestCompleteKeepsCallerMetrics(t *testing.T) {
	header := NewHeader(Start{ID: "traj-00000001", TaskID: "task-00000001", TaskType: "t", Prompt: "p",
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	its := []map[string]any{
		mustDecode(t, `{"iteration_number": 1, "action": {"tool": "A"}, "observation": {"status": "failure"}, "duration_ms": 5}`),
		mustDecode(t, `{"iteration_number": 2, "action": {"tool": "A"}, "observation": {"status": "success"}, "duration_ms": 7}`),
	}
	extra := mustDecode(t, `{"quality_metrics": {"efficiency": 0.7, "overall_quality": 0.75}, "outcome": {"quality_score": 0.5}, "metadata": {"model": "m"}}`)
	done := Complete(header, its, Completion{Status: "success", Reason: "task_complete", Extra: extra, Now: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)})
	checks := map[string]any{
		"quality_metrics.efficiency":        json.Number("0.7"),
		"quality_metrics.overall_quality":   json.Number("0.75"),
		"quality_metrics.retry_count":       json.Number("1"),
		"quality_metrics.failed_iterations": json.Number("1"),
		"outcome.quality_score":             json.Number("0.5"),
		"outcome.completion_reason":         "task_complete",
		"metadata.model":                    "m",
		"metadata.total_duration_ms":        json.Number("2000"),
		"metadata.completed_at":             "2026-01-01T00:00:02Z",
	}
	for path, want := range checks {
		keys := splitDots(path)
		if got := Get(done, keys...); !objects.Equal(got, want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if Completed(header) {
		t.Error("Complete changed its input")
	}
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func TestBuildIteration(t *testing.T) {
	in, out := int64(500), int64(100)
	it, err := BuildIteration(nil, IterationFields{ThoughtType: "research", Thought: "t", Tool: "Grep",
		Params: map[string]any{"pattern": "x"}, Status: "success", Result: "r", TokensIn: &in, TokensOut: &out, CostUSD: "0.006"},
		3, time.Date(2026, 2, 9, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := mustDecode(t, `{"iteration_number": 3, "timestamp": "2026-02-09T10:00:00Z",
		"thought": {"type": "research", "content": "t"},
		"action": {"tool": "Grep", "description": "call Grep", "parameters": {"pattern": "x"}},
		"observation": {"status": "success", "result": "r"},
		"cost": {"input_tokens": 500, "output_tokens": 100, "total_tokens": 600, "total_cost_usd": 0.006}}`)
	if !objects.Equal(it, want) {
		a, _ := objects.Encode(it)
		t.Fatalf("got\n%s", a)
	}
	if _, err := BuildIteration(mustDecode(t, `{"iteration_number": 2}`), IterationFields{}, 3, time.Time{}); err == nil {
		t.Fatal("a stale iteration_number was accepted")
	}
	if _, err := BuildIteration(nil, IterationFields{CostUSD: "0x1p-2"}, 1, time.Time{}); err == nil {
		t.Fatal("a hex cost was accepted")
	}
}

// TestCompleteComputesEveryMetric: the metrics the iterations support are
// computed (retry rate, each tool's success beside efficiency and error
// recovery); the ones that need judgement, and any the caller gave when
// the run started, are kept as given.
func TestCompleteComputesEveryMetric(t *testing.T) {
	header := NewHeader(Start{ID: "traj-00000001", TaskID: "task-00000001", TaskType: "t", Prompt: "p",
		Extra: mustDecode(t, `{"quality_metrics": {"thought_grounding": 0.4, "hallucination_detected": true, "error_recovery": 0.25}}`),
		Now:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	its := []map[string]any{
		mustDecode(t, `{"iteration_number": 1, "action": {"tool": "Bash"}, "observation": {"status": "failure"}}`),
		mustDecode(t, `{"iteration_number": 2, "action": {"tool": "Bash"}, "observation": {"status": "error"}}`),
		mustDecode(t, `{"iteration_number": 3, "action": {"tool": "Bash"}, "observation": {"status": "success"}}`),
		mustDecode(t, `{"iteration_number": 4, "action": {"tool": "Read"}, "observation": {"status": "success"}}`),
	}
	extra := mustDecode(t, `{"quality_metrics": {"hallucination_detected": false}}`)
	done := Complete(header, its, Completion{Status: "success", Extra: extra})
	checks := map[string]any{
		"quality_metrics.retry_count":            json.Number("2"),
		"quality_metrics.retry_rate":             json.Number("0.5"),
		"quality_metrics.efficiency":             json.Number("0.5"),
		"quality_metrics.error_recovery":         json.Number("0.25"), // given at start, not the computed 1
		"quality_metrics.thought_grounding":      json.Number("0.4"),
		"quality_metrics.hallucination_detected": false, // given at completion wins over the start's
	}
	for path, want := range checks {
		if got := Get(done, splitDots(path)...); !objects.Equal(got, want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	want := mustDecode(t, `{"t": [{"tool": "Bash", "calls": 3, "successful": 1, "success_rate": 0.3333}, {"tool": "Read", "calls": 1, "successful": 1, "success_rate": 1}]}`)["t"]
	if got := Get(done, "quality_metrics", "tool_success"); !objects.Equal(got, want) {
		t.Errorf("tool_success = %v, want %v", got, want)
	}
}
