package ui

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/aiwg/aiwg-state/trajectory"
)

type trajsData struct {
	Rev   string
	Trajs []trajectory.Summary
}

func (a *app) trajectories(r *http.Request) (string, *view, error) {
	ro, rev := a.readAt(r)
	ts, err := a.st.Trajectories().List(r.Context(), trajectory.Filter{}, ro)
	if err != nil {
		return "", nil, err
	}
	// Newest first: the run a reviewer looks for is the last one.
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].StartedAt.After(ts[j].StartedAt) })
	return "trajs", &view{Title: "RLM trajectories", Nav: "traj", Data: &trajsData{Rev: rev, Trajs: ts}}, nil
}

// iterationRow is one thought, action and observation.
type iterationRow struct {
	N                      string
	ThoughtType, Thought   string
	Tool, Action           string
	Status, Result, Error  string
	Tokens, Cost, Duration string
}

type metric struct{ Name, Value string }

type trajData struct {
	Rev        string
	ID         string
	Summary    trajectory.Summary
	Outcome    []metric
	Totals     []metric
	Quality    []metric
	Iterations []iterationRow
	Chart      *chart
}

func (a *app) trajectory(r *http.Request) (string, *view, error) {
	ro, rev := a.readAt(r)
	id := r.PathValue("id")
	doc, err := a.st.Trajectories().Get(r.Context(), id, ro)
	if err != nil {
		return "", nil, err
	}
	its, _ := doc["iterations"].([]any)
	d := &trajData{Rev: rev, ID: id, Summary: trajectory.Summarize(doc, len(its))}
	d.Outcome = metrics(doc["outcome"], "")
	d.Totals = metrics(doc["metadata"], "")
	d.Quality = metrics(doc["quality_metrics"], "lessons_learned")
	var points []chartPoint
	for _, x := range its {
		it, ok := x.(map[string]any)
		if !ok {
			continue
		}
		row := iterationRow{
			N:           scalar(it["iteration_number"]),
			ThoughtType: trajectory.Str(it, "thought", "type"),
			Thought:     trajectory.Str(it, "thought", "content"),
			Tool:        trajectory.Str(it, "action", "tool"),
			Action:      trajectory.Str(it, "action", "description"),
			Status:      trajectory.Str(it, "observation", "status"),
			Result:      scalar(trajectory.Get(it, "observation", "result")),
			Error:       trajectory.Str(it, "observation", "error_details", "message"),
			Tokens:      scalar(trajectory.Get(it, "cost", "total_tokens")),
			Cost:        scalar(trajectory.Get(it, "cost", "total_cost_usd")),
			Duration:    scalar(it["duration_ms"]),
		}
		d.Iterations = append(d.Iterations, row)
		p := chartPoint{Label: row.N}
		p.Tokens, _ = strconv.ParseFloat(row.Tokens, 64)
		p.Cost, _ = strconv.ParseFloat(row.Cost, 64)
		points = append(points, p)
	}
	d.Chart = drawChart(points)
	return "traj", &view{Title: "Trajectory " + id, Nav: "traj", Data: d}, nil
}

// metrics lists an object's scalar members, sorted, leaving out skip.
func metrics(v any, skip string) []metric {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []metric
	for k, x := range m {
		if k != skip {
			out = append(out, metric{k, scalar(x)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// scalar is a value as text: a string as is, anything else as JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return compactJSON(v)
}
