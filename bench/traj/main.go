// Command traj measures the trajectory figures in one run on one
// machine: recording an iteration on an empty store against a store of
// 1,000 trajectories (the ratio should stay within 1.2×), and `traj
// analyze` over 1,000 trajectories of 20 iterations (in-process and through
// the CLI; the target is under 2 s).
//
//	go run ./bench/traj                 # 1,000 × 20, 300 timed iterations per store
//	go run ./bench/traj -n 200 -iters 100
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

func main() {
	n := flag.Int("n", 1000, "trajectories in the full store")
	k := flag.Int("k", 20, "iterations per trajectory")
	iters := flag.Int("iters", 300, "timed iterations recorded per store")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "aiwg-bench-traj-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "aiwg-state")
	benchutil.BuildCLI(bin)
	fmt.Printf("machine: %s/%s, %d CPUs; no fsync\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())

	empty := open(ctx, filepath.Join(work, "empty.git"))
	full := open(ctx, filepath.Join(work, "full.git"))
	t0 := time.Now()
	seed(ctx, full, *n, *k)
	fmt.Printf("seeded %d trajectories × %d iterations in %s (one import commit each), then git gc\n\n", *n, *k, time.Since(t0).Round(time.Millisecond))
	check(empty.Repo().Maintain(ctx, true))

	// Interleave the two stores so machine noise hits both alike.
	var onEmpty, onFull []time.Duration
	idE, idF := start(ctx, empty), start(ctx, full)
	for i := 0; i < *iters; i++ {
		if i > 0 && i%trajectory.MaxIterations == 0 {
			idE, idF = start(ctx, empty), start(ctx, full)
		}
		onEmpty = append(onEmpty, record(ctx, empty, idE))
		onFull = append(onFull, record(ctx, full, idF))
	}
	me, mf := median(onEmpty), median(onFull)
	fmt.Printf("%-46s %10s %10s\n", "record one iteration (API, in-process)", "median", "p90")
	fmt.Printf("%-46s %10s %10s\n", "  empty store", me, p90(onEmpty))
	fmt.Printf("%-46s %10s %10s\n", fmt.Sprintf("  store with %d trajectories", *n), mf, p90(onFull))
	fmt.Printf("%-46s %10.2f×  (target ≤ 1.2×)\n\n", "  ratio full / empty", float64(mf)/float64(me))

	var api []time.Duration
	var an trajectory.Analysis
	for i := 0; i < 5; i++ {
		t := time.Now()
		an, err = full.Trajectories().Analyze(ctx, trajectory.AnalyzeOptions{}, store.ReadOptions{})
		check(err)
		api = append(api, time.Since(t))
	}
	var cli []time.Duration
	for i := 0; i < 5; i++ {
		t := time.Now()
		out, err := exec.Command(bin, "traj", "analyze", "--json", "--store", full.Dir()).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "traj analyze: %v\n%s", err, out)
			os.Exit(1)
		}
		cli = append(cli, time.Since(t))
	}
	fmt.Printf("traj analyze over %d trajectories (%d iterations read)\n", an.Trajectories, an.Trajectories**k+*iters)
	fmt.Printf("%-46s %10s %10s\n", "  API, in-process (warm cache after run 1)", median(api), p90(api))
	fmt.Printf("%-46s %10s %10s  (target < 2 s)\n", "  CLI, fresh process", median(cli), p90(cli))
	check(empty.Close())
	check(full.Close())
}

func open(ctx context.Context, dir string) *aiwgstate.Store {
	st, err := aiwgstate.Init(ctx, dir, store.InitOptions{Options: store.Options{NoSync: true}})
	check(err)
	return st
}

func seed(ctx context.Context, st *aiwgstate.Store, n, k int) {
	tools := []string{"Read", "Grep", "Write", "Bash"}
	for i := 0; i < n; i++ {
		its := make([]string, k)
		for j := range its {
			status := "success"
			if (i*7+j)%6 == 0 {
				status = "failure"
			}
			its[j] = fmt.Sprintf(`{"iteration_number": %d, "timestamp": "2026-11-01T10:00:%02dZ", "thought": {"type": "progress", "content": "step %d of run %d: look at the next file"}, "action": {"tool": %q, "description": "a tool call", "parameters": {"path": "src/file%d.go"}}, "observation": {"status": %q, "result": "some output of the tool, a line or two long", "error_details": {"error_type": "E%d"}}, "cost": {"input_tokens": 400, "output_tokens": 100, "total_tokens": 500, "total_cost_usd": 0.005}, "duration_ms": 120}`,
				j+1, j%60, j+1, i, tools[(i+j)%len(tools)], j, status, j%3)
		}
		outcome := []string{"success", "success", "failure"}[i%3]
		doc := fmt.Sprintf(`{"version": "1.0.0", "trajectory_id": "traj-%08x", "task_context": {"task_id": "task-%08x", "task_type": %q, "task_prompt": "a task"}, "outcome": {"status": %q}, "metadata": {"started_at": "2026-11-01T10:00:00Z"}, "iterations": [%s]}`,
			i, i, []string{"bug_fixing", "code_analysis", "test_generation"}[i%3], outcome, strings.Join(its, ","))
		_, _, err := st.Trajectories().Import(ctx, []byte(doc), trajectory.ImportOptions{}, store.WriteOptions{Agent: "seed"})
		check(err)
	}
	check(st.Repo().Maintain(ctx, true))
}

func start(ctx context.Context, st *aiwgstate.Store) string {
	id, _, err := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "bug_fixing", Prompt: "p"}, store.WriteOptions{Agent: "bench"})
	check(err)
	return id
}

func record(ctx context.Context, st *aiwgstate.Store, id string) time.Duration {
	t := time.Now()
	_, _, err := st.Trajectories().RecordIteration(ctx, id, trajectory.IterationInput{Fields: trajectory.IterationFields{
		ThoughtType: "progress", Thought: "next", Tool: "Bash", Status: "success", Result: "ok", CostUSD: "0.001",
	}}, store.WriteOptions{Agent: "bench"})
	check(err)
	return time.Since(t)
}

func median(d []time.Duration) time.Duration { return quantile(d, 0.5) }
func p90(d []time.Duration) time.Duration    { return quantile(d, 0.9) }

func quantile(d []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*q)].Round(time.Microsecond)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
