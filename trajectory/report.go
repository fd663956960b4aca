package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Report renders report.md for a trajectory (the assembled document): the
// goal, each thought → action → observation, errors and recoveries, costs
// and lessons. The same document always renders the same bytes.
func Report(doc map[string]any) []byte {
	var b bytes.Buffer
	id := Str(doc, "trajectory_id")
	fmt.Fprintf(&b, "# Trajectory %s\n\n", id)

	b.WriteString("## Goal\n\n")
	fmt.Fprintf(&b, "%s\n\n", quoteBlock(Str(doc, "task_context", "task_prompt")))
	row := func(label, v string) {
		if v != "" {
			fmt.Fprintf(&b, "- %s: %s\n", label, v)
		}
	}
	row("Task type", Str(doc, "task_context", "task_type"))
	row("Task", Str(doc, "task_context", "task_id"))
	row("Task tree", Str(doc, "task_context", "tree_id"))
	row("State", Str(doc, "task_context", "state_id"))
	row("Parent task", Str(doc, "task_context", "parent_task_id"))
	row("Model", Str(doc, "metadata", "model"))
	row("Started", Str(doc, "metadata", "started_at"))
	row("Completed", Str(doc, "metadata", "completed_at"))
	b.WriteString("\n")

	its := iterationsOf(doc)
	b.WriteString("## Outcome\n\n")
	if st := Str(doc, "outcome", "status"); st != "" {
		row("Status", st)
		row("Reason", Str(doc, "outcome", "completion_reason"))
		row("Final result", oneLine(Str(doc, "outcome", "final_result")))
		row("Quality score", scalar(Get(doc, "outcome", "quality_score")))
	} else {
		fmt.Fprintf(&b, "Still running: %d iteration(s) recorded, no outcome yet.\n", len(its))
	}
	b.WriteString("\n")

	b.WriteString("## Iterations\n\n")
	if len(its) == 0 {
		b.WriteString("None recorded.\n\n")
	}
	b.Write(IterationCharts(its))
	for _, it := range its {
		fmt.Fprintf(&b, "### %s. %s\n\n", scalar(it["iteration_number"]), Str(it, "action", "tool"))
		if ts := Str(it, "timestamp"); ts != "" {
			fmt.Fprintf(&b, "_%s_\n\n", ts)
		}
		fmt.Fprintf(&b, "- **Thought** (%s): %s\n", Str(it, "thought", "type"), oneLine(Str(it, "thought", "content")))
		action := oneLine(Str(it, "action", "description"))
		if p, ok := Get(it, "action", "parameters").(map[string]any); ok && len(p) > 0 {
			action += " `" + compactJSON(p) + "`"
		}
		fmt.Fprintf(&b, "- **Action** (%s): %s\n", Str(it, "action", "tool"), action)
		if r := Str(it, "action", "rationale"); r != "" {
			fmt.Fprintf(&b, "  - Why: %s\n", oneLine(r))
		}
		fmt.Fprintf(&b, "- **Observation** (%s): %s\n", Str(it, "observation", "status"), oneLine(resultText(Get(it, "observation", "result"))))
		if e := Str(it, "observation", "extraction"); e != "" {
			fmt.Fprintf(&b, "  - Extracted: %s\n", oneLine(e))
		}
		if l := Str(it, "observation", "learned"); l != "" {
			fmt.Fprintf(&b, "  - Learned: %s\n", oneLine(l))
		}
		if c := costLine(it); c != "" {
			fmt.Fprintf(&b, "- Cost: %s\n", c)
		}
		b.WriteString("\n")
	}

	b.WriteString("## Errors and recoveries\n\n")
	errs := 0
	for i, it := range its {
		st := Str(it, "observation", "status")
		if !failedObservation[st] {
			continue
		}
		errs++
		what := Str(it, "observation", "error_details", "error_type")
		if what == "" {
			what = st
		}
		msg := Str(it, "observation", "error_details", "message")
		if msg == "" {
			msg = resultText(Get(it, "observation", "result"))
		}
		fmt.Fprintf(&b, "- Iteration %s: %s — %s", scalar(it["iteration_number"]), what, oneLine(msg))
		recovered := false
		for _, next := range its[i+1:] {
			if Str(next, "observation", "status") == "success" {
				fmt.Fprintf(&b, "; recovered in iteration %s with %s", scalar(next["iteration_number"]), Str(next, "action", "tool"))
				recovered = true
				break
			}
		}
		if !recovered {
			b.WriteString("; not recovered")
		}
		b.WriteString("\n")
	}
	if errs == 0 {
		b.WriteString("None.\n")
	}
	b.WriteString("\n")

	b.WriteString("## Costs\n\n")
	t := Totals(its)
	fmt.Fprintf(&b, "| | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| iterations | %d |\n", len(its))
	fmt.Fprintf(&b, "| tokens | %d |\n", t.Tokens)
	fmt.Fprintf(&b, "| cost (USD) | %s |\n", t.CostUSD)
	if d := scalar(Get(doc, "metadata", "total_duration_ms")); d != "" {
		fmt.Fprintf(&b, "| duration (ms) | %s |\n", d)
	} else {
		fmt.Fprintf(&b, "| duration (ms, iterations) | %d |\n", t.DurationMs)
	}
	b.WriteString("\n")

	if qm, ok := doc["quality_metrics"].(map[string]any); ok {
		b.WriteString("## Quality\n\n")
		keys := make([]string, 0, len(qm))
		for k := range qm {
			if k != "lessons_learned" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %s\n", k, scalar(qm[k]))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Lessons\n\n")
	lessons, _ := Get(doc, "quality_metrics", "lessons_learned").([]any)
	learned := 0
	for _, l := range lessons {
		lm, ok := l.(map[string]any)
		if !ok {
			continue
		}
		learned++
		line := "- " + oneLine(Str(lm, "lesson"))
		if c := Str(lm, "context"); c != "" {
			line += " (" + oneLine(c) + ")"
		}
		if n := scalar(lm["iteration"]); n != "" {
			line += " — iteration " + n
		}
		b.WriteString(line + "\n")
	}
	for _, it := range its {
		if l := Str(it, "observation", "learned"); l != "" {
			learned++
			fmt.Fprintf(&b, "- %s — iteration %s\n", oneLine(l), scalar(it["iteration_number"]))
		}
	}
	if learned == 0 {
		b.WriteString("None recorded.\n")
	}
	return b.Bytes()
}

func iterationsOf(doc map[string]any) []map[string]any {
	raw, _ := doc["iterations"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func costLine(it map[string]any) string {
	var parts []string
	if n := scalar(Get(it, "cost", "total_tokens")); n != "" {
		parts = append(parts, n+" tokens")
	}
	if c := scalar(Get(it, "cost", "total_cost_usd")); c != "" {
		parts = append(parts, "$"+c)
	}
	if d := scalar(it["duration_ms"]); d != "" {
		parts = append(parts, d+" ms")
	}
	return strings.Join(parts, ", ")
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	return compactJSON(v)
}

func resultText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}

// oneLine keeps a value on its list item, cut to a readable length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

func quoteBlock(s string) string {
	if s == "" {
		return "> (no prompt recorded)"
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
