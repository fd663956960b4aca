package trajectory

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	genTools    = []string{"Read", "Grep", "Write", "Bash"}
	genTypes    = []string{"bug_fixing", "code_analysis", "test_generation"}
	genErrors   = []string{"", "InvalidArgument", "Timeout", "NotFound"}
	genStatuses = []string{"success", "success", "success", "failure", "error", "timeout", "partial"}
	genOutcomes = []string{"", "success", "success", "failure", "partial_success"}
)

// genRuns builds random trajectories the way the store would hold them.
func genRuns(r *rand.Rand, n int) []Run {
	runs := make([]Run, n)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range runs {
		h := map[string]any{
			"trajectory_id": fmt.Sprintf("traj-%08x", i),
			"task_context":  map[string]any{"task_type": genTypes[r.IntN(len(genTypes))]},
			"metadata":      map[string]any{"started_at": Timestamp(base.Add(time.Duration(i) * time.Hour))},
		}
		if o := genOutcomes[r.IntN(len(genOutcomes))]; o != "" {
			h["outcome"] = map[string]any{"status": o}
		}
		its := make([]map[string]any, r.IntN(8))
		for j := range its {
			obs := map[string]any{"status": genStatuses[r.IntN(len(genStatuses))]}
			if e := genErrors[r.IntN(len(genErrors))]; e != "" && obs["status"] != "success" {
				obs["error_details"] = map[string]any{"error_type": e}
			}
			its[j] = map[string]any{
				"iteration_number": json.Number(fmt.Sprint(j + 1)),
				"action":           map[string]any{"tool": genTools[r.IntN(len(genTools))]},
				"observation":      obs,
				"cost": map[string]any{
					"total_tokens":   json.Number(fmt.Sprint(r.IntN(1000))),
					"total_cost_usd": json.Number(fmt.Sprintf("0.%03d", r.IntN(1000))),
				},
			}
		}
		runs[i] = Run{Header: h, Iterations: its}
	}
	return runs
}

// bruteForce recomputes the analysis the slow, obvious way.
type bruteResult struct {
	total, completed, success int
	rate, avgIters            float64
	failures                  map[string][3]int // occurrences, recovered, success_after
	recoveryTools             map[string]map[string]int
	ngrams                    map[string][2]int // count, runs
	costByType                map[string]*big.Rat
	runsByType                map[string]int
}

func bruteForce(runs []Run, taskType string, since time.Time, n int) bruteResult {
	b := bruteResult{failures: map[string][3]int{}, recoveryTools: map[string]map[string]int{}, ngrams: map[string][2]int{},
		costByType: map[string]*big.Rat{}, runsByType: map[string]int{}}
	iters := 0
	for _, r := range runs {
		tt := r.Header["task_context"].(map[string]any)["task_type"].(string)
		if taskType != "" && tt != taskType {
			continue
		}
		started, _ := time.Parse(time.RFC3339, r.Header["metadata"].(map[string]any)["started_at"].(string))
		if !since.IsZero() && started.Before(since) {
			continue
		}
		b.total++
		b.runsByType[tt]++
		if b.costByType[tt] == nil {
			b.costByType[tt] = new(big.Rat)
		}
		status := ""
		if o, ok := r.Header["outcome"].(map[string]any); ok {
			status = o["status"].(string)
			b.completed++
		}
		if status == "success" {
			b.success++
			iters += len(r.Iterations)
		}
		for j, it := range r.Iterations {
			c, _ := new(big.Rat).SetString(string(it["cost"].(map[string]any)["total_cost_usd"].(json.Number)))
			b.costByType[tt].Add(b.costByType[tt], c)
			obs := it["observation"].(map[string]any)
			st := obs["status"].(string)
			if st != "failure" && st != "error" && st != "timeout" {
				continue
			}
			et := st
			if ed, ok := obs["error_details"].(map[string]any); ok {
				et = ed["error_type"].(string)
			}
			f := b.failures[et]
			f[0]++
			if j+1 < len(r.Iterations) && r.Iterations[j+1]["observation"].(map[string]any)["status"] == "success" {
				f[1]++
				if b.recoveryTools[et] == nil {
					b.recoveryTools[et] = map[string]int{}
				}
				b.recoveryTools[et][r.Iterations[j+1]["action"].(map[string]any)["tool"].(string)]++
			}
			if status == "success" {
				f[2]++
			}
			b.failures[et] = f
		}
		if status == "success" && len(r.Iterations) > 0 {
			var tools []string
			for _, it := range r.Iterations {
				tools = append(tools, it["action"].(map[string]any)["tool"].(string))
			}
			k := n
			if len(tools) < k {
				k = len(tools)
			}
			seen := map[string]bool{}
			for i := 0; i+k <= len(tools); i++ {
				key := strings.Join(tools[i:i+k], " ")
				g := b.ngrams[key]
				g[0]++
				if !seen[key] {
					g[1]++
					seen[key] = true
				}
				b.ngrams[key] = g
			}
		}
	}
	if b.completed > 0 {
		b.rate = float64(b.success) / float64(b.completed)
	}
	if b.success > 0 {
		b.avgIters = float64(iters) / float64(b.success)
	}
	return b
}

func TestAnalyzeMatchesBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, seed*7))
		runs := genRuns(r, 1+r.IntN(60))
		o := AnalyzeOptions{NGram: 1 + r.IntN(3), Top: 1000}
		if seed%3 == 0 {
			o.TaskType = genTypes[r.IntN(len(genTypes))]
		}
		if seed%4 == 0 {
			o.Since = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
		}
		got := Analyze(runs, o)
		want := bruteForce(runs, o.TaskType, o.Since, o.NGram)
		if got.Trajectories != want.total || got.Completed != want.completed || got.Successful != want.success {
			t.Fatalf("seed %d: counts %d/%d/%d, want %d/%d/%d", seed, got.Trajectories, got.Completed, got.Successful, want.total, want.completed, want.success)
		}
		if math.Abs(got.SuccessRate-want.rate) > 1e-4 || math.Abs(got.AverageIterationsToSuccess-want.avgIters) > 1e-4 {
			t.Fatalf("seed %d: rate %v avg %v, want %v %v", seed, got.SuccessRate, got.AverageIterationsToSuccess, want.rate, want.avgIters)
		}
		if len(got.FailurePatterns) != len(want.failures) {
			t.Fatalf("seed %d: %d failure patterns, want %d", seed, len(got.FailurePatterns), len(want.failures))
		}
		for _, p := range got.FailurePatterns {
			w := want.failures[p.ErrorType]
			if [3]int{p.Occurrences, p.Recovered, p.SuccessAfter} != w {
				t.Fatalf("seed %d: pattern %s = %d/%d/%d, want %v", seed, p.ErrorType, p.Occurrences, p.Recovered, p.SuccessAfter, w)
			}
			for _, rc := range p.RecoveryActions {
				if want.recoveryTools[p.ErrorType][rc.Tool] != rc.Count {
					t.Fatalf("seed %d: %s recovered by %s %d times, want %d", seed, p.ErrorType, rc.Tool, rc.Count, want.recoveryTools[p.ErrorType][rc.Tool])
				}
			}
			if len(p.RecoveryActions) != len(want.recoveryTools[p.ErrorType]) {
				t.Fatalf("seed %d: %s recovery tools %v", seed, p.ErrorType, p.RecoveryActions)
			}
		}
		if len(got.ToolSequences) != len(want.ngrams) {
			t.Fatalf("seed %d: %d sequences, want %d", seed, len(got.ToolSequences), len(want.ngrams))
		}
		for i, q := range got.ToolSequences {
			if w := want.ngrams[strings.Join(q.Tools, " ")]; [2]int{q.Count, q.Trajectories} != w {
				t.Fatalf("seed %d: sequence %v = %d/%d, want %v", seed, q.Tools, q.Count, q.Trajectories, w)
			}
			if i > 0 && got.ToolSequences[i-1].Count < q.Count {
				t.Fatalf("seed %d: sequences not sorted by count", seed)
			}
		}
		types := make([]string, 0, len(want.runsByType))
		for tt := range want.runsByType {
			types = append(types, tt)
		}
		sort.Strings(types)
		if len(got.ByTaskType) != len(types) {
			t.Fatalf("seed %d: %d task types, want %d", seed, len(got.ByTaskType), len(types))
		}
		for i, ts := range got.ByTaskType {
			if ts.TaskType != types[i] || ts.Trajectories != want.runsByType[ts.TaskType] {
				t.Fatalf("seed %d: task type %d = %s/%d", seed, i, ts.TaskType, ts.Trajectories)
			}
			wc, _ := new(big.Rat).SetString(string(ts.TotalCostUSD))
			if wc == nil || wc.Cmp(want.costByType[ts.TaskType]) != 0 {
				t.Fatalf("seed %d: %s cost %s, want %s", seed, ts.TaskType, ts.TotalCostUSD, want.costByType[ts.TaskType].FloatString(6))
			}
		}
	}
}

func TestAnalyzeTopAndEmpty(t *testing.T) {
	a := Analyze(nil, AnalyzeOptions{})
	if a.Trajectories != 0 || a.SuccessRate != 0 || a.FailurePatterns == nil || a.ToolSequences == nil || a.ByTaskType == nil {
		t.Fatalf("empty analysis: %+v", a)
	}
	runs := genRuns(rand.New(rand.NewPCG(9, 9)), 200)
	if a := Analyze(runs, AnalyzeOptions{Top: 2}); len(a.ToolSequences) > 2 || len(a.FailurePatterns) > 2 {
		t.Fatalf("top 2: %d sequences, %d patterns", len(a.ToolSequences), len(a.FailurePatterns))
	}
}

func BenchmarkAnalyze1000x20(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	runs := genRuns(r, 1000)
	for i := range runs {
		for len(runs[i].Iterations) < 20 {
			runs[i].Iterations = append(runs[i].Iterations, runs[i].Iterations...)
			if len(runs[i].Iterations) == 0 {
				runs[i].Iterations = genRuns(r, 2)[1].Iterations
			}
		}
		runs[i].Iterations = runs[i].Iterations[:min(20, len(runs[i].Iterations))]
	}
	b.ResetTimer()
	for b.Loop() {
		Analyze(runs, AnalyzeOptions{})
	}
}

// TestAnalyzePromptImprovements: the specification's improve_prompts
// output: tools retried often after one kind of failure, with the prompts to
// clarify, and a template from the shortest successful run of a task type
// that succeeds often enough; each tool's success over all runs.
func TestAnalyzePromptImprovements(t *testing.T) {
	it := func(tool, status, et string) map[string]any {
		obs := map[string]any{"status": status}
		if et != "" {
			obs["error_details"] = map[string]any{"error_type": et}
		}
		return map[string]any{"action": map[string]any{"tool": tool}, "observation": obs}
	}
	run := func(id, tt, prompt, outcome string, its ...map[string]any) Run {
		h := map[string]any{"trajectory_id": id, "task_context": map[string]any{"task_type": tt, "task_prompt": prompt}}
		if outcome != "" {
			h["outcome"] = map[string]any{"status": outcome}
		}
		return Run{Header: h, Iterations: its}
	}
	runs := []Run{
		run("traj-00000001", "bug_fixing", "fix the login bug", "success",
			it("Grep", "failure", "InvalidArgument"), it("Grep", "failure", "InvalidArgument"), it("Grep", "success", ""), it("Edit", "success", "")),
		run("traj-00000002", "bug_fixing", "fix the logout bug", "success",
			it("Grep", "failure", "InvalidArgument"), it("Grep", "success", ""), it("Edit", "success", "")),
		run("traj-00000003", "bug_fixing", "fix null check", "success", it("Read", "success", ""), it("Edit", "success", "")),
		run("traj-00000004", "code_analysis", "find deprecated API uses", "failure",
			it("Bash", "timeout", ""), it("Bash", "success", "")),
	}
	a := Analyze(runs, AnalyzeOptions{})
	pi := a.PromptImprovements
	if len(pi.HighRetryPatterns) != 1 {
		t.Fatalf("high retry patterns: %+v", pi.HighRetryPatterns)
	}
	p := pi.HighRetryPatterns[0]
	if p.TaskType != "bug_fixing" || p.Tool != "Grep" || p.ErrorType != "InvalidArgument" || p.Retries != 3 ||
		strings.Join(p.Trajectories, ",") != "traj-00000001,traj-00000002" || strings.Join(p.Prompts, "|") != "fix the login bug|fix the logout bug" {
		t.Fatalf("pattern: %+v", p)
	}
	if len(pi.Templates) != 1 {
		t.Fatalf("templates: %+v", pi.Templates)
	}
	tp := pi.Templates[0]
	if tp.TaskType != "bug_fixing" || tp.TrajectoryID != "traj-00000003" || tp.Prompt != "fix null check" || tp.Iterations != 2 ||
		strings.Join(tp.Tools, ",") != "Read,Edit" || tp.SuccessRate != 1 || tp.Successful != 3 ||
		strings.Join(tp.ExamplePrompts, "|") != "fix null check|fix the logout bug|fix the login bug" {
		t.Fatalf("template: %+v", tp)
	}
	// The code_analysis pattern (one retry) and type (never succeeded)
	// show once the thresholds allow them.
	a = Analyze(runs, AnalyzeOptions{MinRetries: 1, MinSuccessRate: 0.01})
	if n := len(a.PromptImprovements.HighRetryPatterns); n != 2 {
		t.Fatalf("with MinRetries 1: %d patterns", n)
	}
	if n := len(a.PromptImprovements.Templates); n != 1 {
		t.Fatalf("a type without a successful run gives no template: %d", n)
	}
	var grep ToolSuccess
	for _, ts := range a.ToolSuccess {
		if ts.Tool == "Grep" {
			grep = ts
		}
	}
	if grep.Calls != 5 || grep.Successful != 2 || grep.SuccessRate != 0.4 {
		t.Fatalf("Grep's success: %+v (all: %+v)", grep, a.ToolSuccess)
	}
}
