package trajectory

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Mermaid pictures for reports: git hosts render a ```mermaid block as a
// diagram, so a pull request or a report.md shows a run's shape at a
// glance. Every label comes from an agent and is hostile: mermaidText
// keeps letters, digits and a few harmless marks, so no label can end a
// statement, open a link or HTML, or close the fenced block.

// mermaidText is s made safe for a Mermaid label, at most max runes.
func mermaidText(s string, max int) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range s {
		if n >= max {
			b.WriteString("…")
			break
		}
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-./()+", r)
		if !ok {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
				space = true
				n++
			}
			continue
		}
		b.WriteRune(r)
		space = false
		n++
	}
	out := strings.TrimSpace(b.String())
	if out == "" {
		return "-"
	}
	return out
}

// IterationCharts renders a Mermaid timeline of a run's iterations (each
// its tool and observation status) and charts of tokens and cost per
// iteration; nothing when there are no iterations.
func IterationCharts(iterations []map[string]any) []byte {
	if len(iterations) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("```mermaid\ntimeline\n    title Iterations\n")
	for i, it := range iterations {
		n := scalar(it["iteration_number"])
		if _, err := strconv.Atoi(n); err != nil {
			n = strconv.Itoa(i + 1)
		}
		fmt.Fprintf(&b, "    %s : %s : %s\n", n, mermaidText(Str(it, "action", "tool"), 40), mermaidText(Str(it, "observation", "status"), 20))
	}
	b.WriteString("```\n\n")

	var labels, tokens, costs []string
	haveTokens, haveCost := false, false
	for i, it := range iterations {
		labels = append(labels, strconv.Itoa(i+1))
		t := Totals([]map[string]any{it})
		tokens = append(tokens, strconv.FormatInt(t.Tokens, 10))
		haveTokens = haveTokens || t.hasTokens
		c := "0"
		if t.hasCost {
			c, haveCost = t.CostUSD, true
		}
		costs = append(costs, c)
	}
	chart := func(title, axis, kind string, values []string) {
		fmt.Fprintf(&b, "```mermaid\nxychart-beta\n    title \"%s\"\n    x-axis \"iteration\" [%s]\n    y-axis \"%s\"\n    %s [%s]\n```\n\n",
			title, strings.Join(labels, ", "), axis, kind, strings.Join(values, ", "))
	}
	if haveTokens {
		chart("Tokens per iteration", "tokens", "bar", tokens)
	}
	if haveCost {
		chart("Cost per iteration (USD)", "USD", "line", costs)
	}
	return b.Bytes()
}

// AnalysisMarkdown renders an analysis for a pull request or a wiki: the
// figures as tables and their distributions as Mermaid charts (outcomes,
// failure patterns, success rate by task type, tool success).
func AnalysisMarkdown(an Analysis) []byte {
	var b bytes.Buffer
	b.WriteString("# Trajectory analysis\n\n")
	fmt.Fprintf(&b, "| | value |\n|---|---|\n| trajectories | %d |\n| completed | %d |\n| successful | %d |\n| success rate | %.1f%% |\n| average iterations to success | %.2f |\n| retries | %d |\n\n",
		an.Trajectories, an.Completed, an.Successful, an.SuccessRate*100, an.AverageIterationsToSuccess, an.RetryCount)
	if an.Completed > 0 {
		fmt.Fprintf(&b, "```mermaid\npie title Outcomes of completed runs\n    \"successful\" : %d\n    \"not successful\" : %d\n```\n\n", an.Successful, an.Completed-an.Successful)
	}

	b.WriteString("## By task type\n\n")
	if len(an.ByTaskType) == 0 {
		b.WriteString("None.\n\n")
	} else {
		b.WriteString("| task type | runs | completed | success | iterations to success | tokens | cost (USD) |\n|---|---|---|---|---|---|---|\n")
		var names, rates []string
		for _, t := range an.ByTaskType {
			fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% | %.2f | %d | %s |\n", cell(t.TaskType), t.Trajectories, t.Completed, t.SuccessRate*100, t.AverageIterationsToSuccess, t.TotalTokens, t.TotalCostUSD)
			names = append(names, strconv.Quote(mermaidText(t.TaskType, 30)))
			rates = append(rates, strconv.FormatFloat(t.SuccessRate*100, 'f', 1, 64))
		}
		fmt.Fprintf(&b, "\n```mermaid\nxychart-beta\n    title \"Success rate by task type, percent\"\n    x-axis [%s]\n    y-axis \"success rate\" 0 --> 100\n    bar [%s]\n```\n\n", strings.Join(names, ", "), strings.Join(rates, ", "))
	}

	b.WriteString("## Failure patterns\n\n")
	if len(an.FailurePatterns) == 0 {
		b.WriteString("None.\n\n")
	} else {
		b.WriteString("| error | occurrences | recovered next | run succeeded |\n|---|---|---|---|\n")
		var pie strings.Builder
		for _, p := range an.FailurePatterns {
			fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", cell(p.ErrorType), p.Occurrences, p.Recovered, p.SuccessAfter)
			fmt.Fprintf(&pie, "    %s : %d\n", strconv.Quote(mermaidText(p.ErrorType, 30)), p.Occurrences)
		}
		fmt.Fprintf(&b, "\n```mermaid\npie title Failures by kind\n%s```\n\n", pie.String())
	}

	b.WriteString("## Tool success\n\n")
	if len(an.ToolSuccess) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| tool | calls | successful | rate |\n|---|---|---|---|\n")
		var names, calls, ok []string
		for _, t := range an.ToolSuccess {
			fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% |\n", cell(t.Tool), t.Calls, t.Successful, t.SuccessRate*100)
			names = append(names, strconv.Quote(mermaidText(t.Tool, 30)))
			calls = append(calls, strconv.Itoa(t.Calls))
			ok = append(ok, strconv.Itoa(t.Successful))
		}
		fmt.Fprintf(&b, "\n```mermaid\nxychart-beta\n    title \"Calls (bars) and successes (line) per tool\"\n    x-axis [%s]\n    y-axis \"calls\"\n    bar [%s]\n    line [%s]\n```\n", strings.Join(names, ", "), strings.Join(calls, ", "), strings.Join(ok, ", "))
	}
	return b.Bytes()
}

// cell keeps an agent's text inside one Markdown table cell: on one line,
// its pipes escaped, no HTML.
func cell(s string) string {
	s = oneLine(s)
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "`", "'")
	return r.Replace(s)
}
