// Command ui measures how long the review app (package ui) takes to draw
// each of its pages, server-side, on a store of 100,000 commits: the
// store bench/audit builds with git fast-import (1,000 variables, one
// JSON document each, each commit an agent's mutation of one of them),
// its changed-paths index built once (aiwg-state reindex), then, through
// the store's own write path, an agent's branch of a few mutations, a
// branch merged back into main, 100 agent branches, an RLM state with a checkpoint and a
// trajectory, so that every page has something to show.
//
// Each page is requested through the app's handler in this process (no
// network, no browser: the server's share), after one warm-up request;
// the median, the fastest and the slowest of -runs requests are printed.
//
//	go run ./bench/ui                     # 100,000 commits, 15 runs a page
//	go run ./bench/ui -commits 10000 -runs 5
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
	"github.com/aiwg/aiwg-state/ui"
)

const variables = 1000

// agentBranches is how many agent branches the overview lists.
const agentBranches = 100

// budget is the page time the app promises on a 100,000-commit store.
const budget = 300 * time.Millisecond

func main() {
	commits := flag.Int("commits", 100000, "commits of the fast-import store")
	runs := flag.Int("runs", 15, "timed requests per page")
	keep := flag.Bool("keep", false, "keep the store (its directory is printed)")
	flag.Parse()
	work, err := os.MkdirTemp("", "aiwg-ui-bench-")
	check(err)
	if *keep {
		fmt.Println("store in", work)
	} else {
		defer os.RemoveAll(work)
	}
	ctx := context.Background()
	dir := filepath.Join(work, "state.git")
	t0 := time.Now()
	benchutil.FastImport(dir, *commits, variables)
	build := time.Since(t0)
	benchutil.Git(dir, "commit-graph", "write", "--reachable", "--changed-paths")
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
	check(err)
	defer st.Close()
	t0 = time.Now()
	_, err = st.Reindex(ctx, nil)
	check(err)
	reindex := time.Since(t0)
	state, traj, deep := populate(ctx, st)

	fmt.Printf("machine: %s/%s, %d CPUs, %s; a store of %d commits (fast-import %s, reindex %s), %d variables\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), *commits, round(build), round(reindex), variables)
	fmt.Printf("each page requested through the handler in-process, %d runs after a warm-up; budget %s\n\n", *runs, budget)
	fmt.Printf("%-58s %9s %9s %9s %9s\n", "page", "median", "min", "max", "bytes")

	h := ui.New(st, ui.Options{})
	q := url.QueryEscape
	pages := []struct{ name, path string }{
		{"overview (the 50 agent branches written last of 100)", "/"},
		{"overview, every branch (103)", "/?branches=all"},
		{"history, newest page", "/history"},
		{"history, a page deep in history", "/history?at=" + deep},
		{"history, one agent (1 commit in 8)", "/history?agent=agent3"},
		{"history, an agent with no commit (bounded scan)", "/history?agent=nobody"},
		{"history, a busy file (index)", "/history?file=variables/v0042.json"},
		{"history, a key path (index)", "/history?file=variables/v0042.json&key=value"},
		{"history, a correlation id", "/history?corr=run-1"},
		{"history, since 2h", "/history?since=2h"},
		{"mutation (head)", "/mutation/HEAD"},
		{"mutation (the first import commit: 1,001 files)", "/mutation/" + firstCommit(dir)},
		{"pull request main...agents/planner/main", "/review?base=main&head=" + q("agents/planner/main")},
		{"document with per-key blame (busy file)", "/doc?path=variables/v0042.json"},
		{"document at an old revision", "/doc?path=variables/v0042.json&rev=" + deep},
		{"one key's history", "/key?path=variables/v0042.json&key=value"},
		{"files of a directory (1,001 entries)", "/files?dir=variables"},
		{"RLM states", "/rlm"},
		{"an RLM state with its checkpoints", "/rlm/" + state},
		{"trajectories", "/traj"},
		{"a trajectory with its chart", "/traj/" + traj},
	}
	over := 0
	for _, p := range pages {
		size := 0
		get := func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+p.path, nil))
			if rec.Code != 200 {
				body, _ := io.ReadAll(rec.Result().Body)
				fmt.Fprintf(os.Stderr, "%s: status %d: %.300s\n", p.path, rec.Code, body)
				os.Exit(1)
			}
			size = rec.Body.Len()
		}
		get()
		ds := make([]time.Duration, *runs)
		for i := range ds {
			t0 := time.Now()
			get()
			ds[i] = time.Since(t0)
		}
		med := benchutil.Median(ds)
		mark := ""
		if med > budget {
			mark = "  over budget"
			over++
		}
		fmt.Printf("%-58s %9s %9s %9s %9d%s\n", p.name, round(med), round(slices.Min(ds)), round(slices.Max(ds)), size, mark)
	}
	if over > 0 {
		fmt.Printf("\n%d page(s) over %s\n", over, budget)
		os.Exit(1)
	}
}

// populate adds, through the store's write path, what the other pages
// show: an agent's branch, a merged branch, an RLM state and a
// trajectory. It returns the state and trajectory ids and a commit deep
// in history.
func populate(ctx context.Context, st *aiwgstate.Store) (state, traj, deep string) {
	wo := func(agent string) store.WriteOptions { return store.WriteOptions{Agent: agent, Correlation: "run-1"} }
	on := func(branch, agent string) store.WriteOptions { w := wo(agent); w.Branch = branch; return w }
	_, err := st.CreateBranch(ctx, "agents/planner/main", "main")
	check(err)
	_, err = st.CreateBranch(ctx, "topic", "main")
	check(err)
	for i := 0; i < 5; i++ {
		_, err = st.Set(ctx, "variables/v0042.json", "value", []byte(fmt.Sprint(-i)), on("agents/planner/main", "planner"))
		check(err)
		_, err = st.Set(ctx, fmt.Sprintf("variables/v%04d.json", 100+i), "value", []byte(fmt.Sprint(i)), on("topic", "topic-agent"))
		check(err)
	}
	// A swarm's worth of agent branches, each a mutation ahead, for the
	// overview to count.
	for i := 0; i < agentBranches; i++ {
		b := fmt.Sprintf("agents/a%03d/main", i)
		_, err = st.CreateBranch(ctx, b, "main")
		check(err)
		_, err = st.Set(ctx, fmt.Sprintf("variables/v%04d.json", 200+i), "value", []byte("1"), on(b, fmt.Sprintf("a%03d", i)))
		check(err)
	}
	_, err = st.Set(ctx, "variables/v0007.json", "value", []byte("7"), wo("agent1"))
	check(err)
	_, err = st.Merges().Merge(ctx, "topic", merge.MergeOptions{Into: "main", NoFF: true, Write: wo("integrator")})
	check(err)
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "Summarise the variables"}, wo("rlm-agent"))
	check(err)
	_, err = st.States().SetVar(ctx, info.StateID, "draft", "first", rlm.VarOptions{}, wo("rlm-agent"))
	check(err)
	_, err = st.States().CreateCheckpoint(ctx, info.StateID, "drafted", "", wo("rlm-agent"))
	check(err)
	_, err = st.States().SetVar(ctx, info.StateID, "draft", "second", rlm.VarOptions{}, wo("rlm-agent"))
	check(err)
	id, _, err := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "summarise", Prompt: "Summarise"}, wo("rlm-agent"))
	check(err)
	for i := 0; i < 20; i++ {
		in, out := int64(100*i+50), int64(40*i)
		_, _, err = st.Trajectories().RecordIteration(ctx, id, trajectory.IterationInput{Fields: trajectory.IterationFields{
			ThoughtType: "reasoning", Thought: "step", Tool: "search", Status: "success", Result: "ok",
			TokensIn: &in, TokensOut: &out, CostUSD: fmt.Sprintf("0.%03d", i+1)}}, wo("rlm-agent"))
		check(err)
	}
	h, err := st.Resolve("HEAD~50000", "")
	if err != nil {
		h, err = st.Resolve("HEAD~100", "")
	}
	check(err)
	return info.StateID, id, h.String()
}

func firstCommit(dir string) string {
	return strings.TrimSpace(benchutil.Git(dir, "rev-list", "--max-parents=0", "main"))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
