package trajectory

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReportOfTheFailedExample(t *testing.T) {
	doc := loadExample(t, "failed_trajectory")
	got := string(Report(doc))
	for _, want := range []string{
		"# Trajectory traj-b2c3d4e5\n",
		"> Find all uses of deprecated API",
		"- Status: success",
		"### 1. Grep",
		"- **Thought** (goal): I need to search for calls to the deprecated API",
		"- **Observation** (failure): grep: src/: Is a directory",
		"- Iteration 1: InvalidArgument — Path must be file or glob pattern; recovered in iteration 2 with Grep",
		"| cost (USD) | 0.0115 |",
		"| tokens | 1150 |",
		"- Grep tool requires glob pattern, not bare directory path (Corrected in iteration 2) — iteration 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q\n%s", want, got)
		}
	}
	if !bytes.Equal(Report(doc), Report(doc)) {
		t.Error("the report is not deterministic")
	}
}

func TestReportOfARunningTrajectory(t *testing.T) {
	doc := Assemble(NewHeader(Start{ID: "traj-00000001", TaskID: "task-00000001", TaskType: "t", Prompt: "p"}), nil)
	got := string(Report(doc))
	for _, want := range []string{"Still running: 0 iteration(s)", "## Errors and recoveries\n\nNone.", "## Lessons\n\nNone recorded."} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q\n%s", want, got)
		}
	}
}

func TestReportDrawsIterations(t *testing.T) {
	doc := loadExample(t, "failed_trajectory")
	got := string(Report(doc))
	for _, want := range []string{
		"```mermaid\ntimeline\n    title Iterations\n    1 : Grep : failure\n    2 : Grep : success\n",
		"x-axis \"iteration\" [1, 2",
		"title \"Tokens per iteration\"",
		"title \"Cost per iteration (USD)\"",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q\n%s", want, got)
		}
	}
}

// TestMermaidLabelsAreInert: a tool name or status an agent chose cannot
// end a Mermaid statement, add a directive, open HTML or close the block.
func TestMermaidLabelsAreInert(t *testing.T) {
	hostile := "x : y\n```\n<script>alert(1)</script> %%{init: {}}%% click A \"javascript:alert(1)\" ; end"
	its := []map[string]any{{
		"iteration_number": json.Number("1"),
		"action":           map[string]any{"tool": hostile},
		"observation":      map[string]any{"status": hostile},
	}}
	got := string(IterationCharts(its))
	an := string(AnalysisMarkdown(Analysis{Completed: 1, FailurePatterns: []FailurePattern{{ErrorType: hostile, Occurrences: 1}},
		ByTaskType: []TaskTypeStats{{TaskType: hostile}}, ToolSuccess: []ToolSuccess{{Tool: hostile, Calls: 1}}}))
	for name, out := range map[string]string{"report": got, "analysis": an} {
		inBlock := false
		for _, l := range strings.Split(out, "\n") {
			if l == "```mermaid" {
				inBlock = true
				continue
			}
			if l == "```" {
				inBlock = false
				continue
			}
			if !inBlock {
				continue
			}
			if strings.ContainsAny(strings.Replace(l, " 0 --> 100", "", 1), "<>`;{}%") || strings.Count(l, ":") > 2 || strings.Contains(l, "javascript:") {
				t.Errorf("%s: a hostile label reached a Mermaid line: %q", name, l)
			}
		}
		if inBlock {
			t.Errorf("%s: a Mermaid block is left open", name)
		}
	}
	if !strings.Contains(an, "| x : y ''' &lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("analysis: the hostile name is not in its table, on one line and escaped:\n%s", an)
	}
}
