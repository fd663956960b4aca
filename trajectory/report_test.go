package trajectory

import (
	"bytes"
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
