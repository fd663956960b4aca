package ui_test

import (
	"context"
	"errors"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/lease"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

// Hostile text an agent might write anywhere: the browser tests assert
// that none of it runs (window.__xss stays unset) and that it shows
// literally.
const (
	xssScript = `<script>window.__xss=1</script>`
	xssAttr   = `"><img src=x onerror="window.__xss=2">`
	xssURL    = `javascript:window.__xss=3`
	// xssBranch is a branch name git accepts (no spaces) that is HTML.
	xssBranch = `"><img/src=x/onerror=window.__xss=4>`
	xssFile   = `evil/<img src=x onerror=window.__xss=5>.json`
	xssAgent  = `mallory" autofocus onfocus="window.__xss=6" x='`
)

// fixture is the store every page is tested on, with what each page
// must show.
type fixture struct {
	st         *aiwgstate.Store
	plan       string // the planner's mutation of docs/plan.json (a commit)
	mergeTopic string // the merge commit of topic into main
	state      string // an RLM state id
	traj       string // a trajectory id
	report     string // a commit that changed one line of a long text
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	f := &fixture{st: st}
	clock := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	wo := func(agent string) store.WriteOptions {
		clock = clock.Add(time.Minute)
		return store.WriteOptions{Agent: agent, Time: clock}
	}
	on := func(branch, agent string) store.WriteOptions {
		w := wo(agent)
		w.Branch = branch
		return w
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	put := func(file, body string, w store.WriteOptions) *store.Mutation {
		t.Helper()
		m, err := st.Put(ctx, file, []byte(body), w)
		must(err)
		return m
	}
	set := func(file, key, value string, w store.WriteOptions) *store.Mutation {
		t.Helper()
		m, err := st.Set(ctx, file, key, []byte(value), w)
		must(err)
		return m
	}
	w := wo("planner")
	w.Correlation = "run-42"
	m := put("docs/plan.json", `{"title":"Ship the report","risk":{"level":"low"},"items":[{"id":"t1","title":"Draft"},{"id":"t2","title":"Review"}]}`, w)
	f.plan = m.Commit
	set("docs/plan.json", "risk.level", `"high"`, wo("reviewer"))
	put("docs/report.json", `{"body":"Summary\nRevenue rose.\nCosts fell.\nOutlook: stable."}`, wo("writer"))
	f.report = set("docs/report.json", "body", `"Summary\nRevenue rose.\nCosts fell sharply.\nOutlook: stable."`, wo("editor")).Commit
	plain := func(file, body, agent string) {
		c := testutil.CommitFile(t, testutil.Git{GitDir: st.Dir(), Env: testutil.AgentEnv(agent)}, "HEAD", file, body, "by hand\n")
		storetest.Git(t, st, "update-ref", "refs/heads/main", c)
	}
	plain("notes/readme.md", "first line\nsecond line\n", "writer")

	// A branch merged into main, drawn beside the main line.
	_, err := st.CreateBranch(ctx, "topic", "main")
	must(err)
	set("docs/topic.json", "a", `1`, on("topic", "topic-agent"))
	set("docs/topic.json", "b", `2`, on("topic", "topic-agent"))
	set("docs/plan.json", "title", `"Ship the final report"`, wo("planner"))
	mw := wo("integrator")
	mw.Branch = "main"
	res, err := st.Merges().Merge(ctx, "topic", merge.MergeOptions{Into: "main", NoFF: true, Write: mw})
	must(err)
	f.mergeTopic = res.Commit.Commit

	// An agent's branch under review, with a conflict against main.
	_, err = st.CreateBranch(ctx, "agents/planner/main", "main")
	must(err)
	set("docs/plan.json", "risk.level", `"medium"`, on("agents/planner/main", "planner"))
	set("docs/plan.json", "items", `[{"id":"t1","title":"Draft"},{"id":"t0","title":"Plan"},{"id":"t2","title":"Review"}]`, on("agents/planner/main", "planner"))
	set("docs/plan.json", "risk.level", `"critical"`, wo("reviewer"))

	// A merge left in progress, its conflict open, on a staging branch.
	_, err = st.CreateBranch(ctx, "staging", "main")
	must(err)
	set("docs/plan.json", "title", `"Staging title"`, on("staging", "stager"))
	_, err = st.Merges().Merge(ctx, "agents/planner/main", merge.MergeOptions{Into: "staging", Write: on("staging", "stager")})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the staging merge: want a conflict, got %v", err)
	}

	// Coordination: a held lease and a queue.
	_, err = st.Leases().Acquire(ctx, "build/artifacts", lease.Options{TTL: 100 * 365 * 24 * time.Hour}, wo("builder"))
	must(err)
	_, _, err = st.Queues().Put(ctx, "tasks", []byte(`{"do":"summarise"}`), wo("planner"))
	must(err)
	_, _, err = st.Queues().Put(ctx, "tasks", []byte(`{"do":"publish"}`), wo("planner"))
	must(err)

	// An RLM state with a checkpoint, then changes since it.
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "Summarise the quarter"}, wo("rlm-agent"))
	must(err)
	f.state = info.StateID
	_, err = st.States().SetVar(ctx, f.state, "draft", "first pass", rlm.VarOptions{}, wo("rlm-agent"))
	must(err)
	_, err = st.States().CreateCheckpoint(ctx, f.state, "before_review", "the first draft", wo("rlm-agent"))
	must(err)
	_, err = st.States().SetVar(ctx, f.state, "draft", "second pass", rlm.VarOptions{}, wo("rlm-agent"))
	must(err)
	_, err = st.States().SetFinal(ctx, f.state, "Quarter summarised", wo("rlm-agent"))
	must(err)

	// A trajectory of three iterations, completed.
	id, _, err := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "summarise", Prompt: "Summarise the quarter", Model: "m-1"}, wo("rlm-agent"))
	must(err)
	f.traj = id
	for i, tok := range []int64{1200, 300, 2500} {
		in, out := tok*2/3, tok/3
		status := "success"
		if i == 1 {
			status = "error"
		}
		_, _, err := st.Trajectories().RecordIteration(ctx, id, trajectory.IterationInput{Fields: trajectory.IterationFields{
			ThoughtType: "reasoning", Thought: "step " + string(rune('A'+i)), Tool: "search", Description: "look it up",
			Status: status, Result: "found it", ErrorType: map[bool]string{true: "timeout"}[status == "error"], ErrorMsg: map[bool]string{true: "the search timed out"}[status == "error"],
			TokensIn: &in, TokensOut: &out, CostUSD: []string{"0.012", "0.003", "0.025"}[i],
		}}, wo("rlm-agent"))
		must(err)
	}
	_, err = st.Trajectories().Complete(ctx, id, trajectory.CompletionInput{Status: "success", Final: "Quarter summarised", Extra: []byte(`{"quality_metrics":{"overall_quality":0.9}}`)}, wo("rlm-agent"))
	must(err)

	// Hostile names and values everywhere an agent can put them.
	hw := wo(xssAgent)
	hw.Correlation = xssScript
	put("evil/doc.json", `{"`+jsonEscape(xssScript)+`":"`+jsonEscape(xssAttr)+`","link":"`+jsonEscape(xssURL)+`"}`, hw)
	_, err = st.Put(ctx, xssFile, []byte(`{"v":"`+jsonEscape(xssAttr)+`"}`), wo(xssAgent))
	if err != nil {
		t.Logf("a file named %q: %v (left out)", xssFile, err)
	}
	plain("evil/javascript:x.md", xssScript+"\n"+xssAttr+"\n", "mallory")
	_, err = st.CreateBranch(ctx, xssBranch, "main")
	must(err)
	mw = on(xssBranch, xssAgent)
	mw.Message = xssScript + " " + xssAttr
	set("evil/doc.json", "link", `"`+jsonEscape(xssURL)+`//again"`, mw)
	return f
}

func jsonEscape(s string) string {
	out := ""
	for _, r := range s {
		switch r {
		case '"':
			out += `\"`
		case '\\':
			out += `\\`
		default:
			out += string(r)
		}
	}
	return out
}
