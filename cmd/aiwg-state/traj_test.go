package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/trajectory"
)

func specExample(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "trajectories", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := objects.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func trajEncode(t *testing.T, v any) string {
	t.Helper()
	b, err := objects.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func trajDecode(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := objects.Decode([]byte(s))
	if err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %s", s)
	}
	return m
}

// withoutIDsAndTimes removes what a re-recording cannot reproduce.
func trajWithoutIDsAndTimes(doc map[string]any) map[string]any {
	delete(doc, "trajectory_id")
	if md, ok := doc["metadata"].(map[string]any); ok {
		for _, k := range []string{"started_at", "completed_at", "total_duration_ms"} {
			delete(md, k)
		}
	}
	its, _ := doc["iterations"].([]any)
	for _, it := range its {
		delete(it.(map[string]any), "timestamp")
	}
	return doc
}

func loadTrajSchema(t *testing.T) *trajectory.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "trajectory", "trajectory.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trajectory.CompileSchema(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTrajSpecExamplesRecordedIterationByIteration: the two examples of
// the RLM trajectories specification, recorded through the CLI one
// iteration at a time, come back from `traj show --json` as the example
// documents (modulo ids and times) and validate.
func TestTrajSpecExamplesRecordedIterationByIteration(t *testing.T) {
	sch := loadTrajSchema(t)
	for _, name := range []string{"successful_trajectory", "failed_trajectory"} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			example := specExample(t, name)
			tc := example["task_context"].(map[string]any)
			startExtra := map[string]any{"task_context": map[string]any{}, "metadata": map[string]any{}}
			for _, k := range []string{"context_size_tokens", "depth"} {
				if v, ok := tc[k]; ok {
					startExtra["task_context"].(map[string]any)[k] = v
				}
			}
			md, _ := example["metadata"].(map[string]any)
			for _, k := range []string{"temperature", "execution_mode", "environment"} {
				if v, ok := md[k]; ok {
					startExtra["metadata"].(map[string]any)[k] = v
				}
			}
			args := []string{"traj", "start", "--task-type", tc["task_type"].(string), "--prompt", tc["task_prompt"].(string), "--task", tc["task_id"].(string), "-"}
			for flag, key := range map[string]string{"--tree": "tree_id", "--state": "state_id"} {
				if v, ok := tc[key].(string); ok {
					args = append(args, flag, v)
				}
			}
			if m, ok := md["model"].(string); ok {
				args = append(args, "--model", m)
			}
			id := strings.TrimSpace(mustCLI(t, s, trajEncode(t, startExtra), args...))
			if !strings.HasPrefix(id, "traj-") {
				t.Fatalf("start printed %q", id)
			}
			for i, it := range example["iterations"].([]any) {
				out := mustCLI(t, s, trajEncode(t, it), "traj", "iter", id, "-", "--json")
				var r struct{ Iteration int }
				if err := json.Unmarshal([]byte(out), &r); err != nil || r.Iteration != i+1 {
					t.Fatalf("iteration %d: %s", i+1, out)
				}
			}
			outcome := example["outcome"].(map[string]any)
			extra := map[string]any{"outcome": outcome, "quality_metrics": example["quality_metrics"]}
			mustCLI(t, s, trajEncode(t, extra), "traj", "complete", id, "--status", outcome["status"].(string), "-")

			got := trajDecode(t, mustCLI(t, s, "", "traj", "show", id, "--json"))
			if err := sch.ValidateTrajectory(got); err != nil {
				t.Fatalf("show --json does not validate: %v", err)
			}
			if got["trajectory_id"] != id {
				t.Fatalf("trajectory_id = %v", got["trajectory_id"])
			}
			// The metrics the store adds to the specification's (retry rate,
			// each tool's success) are computed beside the example's own.
			qm, _ := got["quality_metrics"].(map[string]any)
			if qm["retry_rate"] == nil || qm["tool_success"] == nil {
				t.Fatalf("quality_metrics lack retry_rate or tool_success: %v", qm)
			}
			delete(qm, "retry_rate")
			delete(qm, "tool_success")
			want := trajWithoutIDsAndTimes(specExample(t, name))
			if g := trajWithoutIDsAndTimes(got); !objects.Equal(g, want) {
				t.Fatalf("recorded document differs from the specification's example:\n%s\nwant:\n%s", trajEncode(t, g), trajEncode(t, want))
			}
			// One commit per iteration, each one file, with the link trailers.
			n := len(example["iterations"].([]any))
			for i := 1; i <= n; i++ {
				msg := gitOut(t, s, "log", "-1", "--format=%B", fmt.Sprintf("main~%d", n-i+1))
				if !strings.Contains(msg, "Trajectory: "+id+"\n") || !strings.Contains(msg, fmt.Sprintf("Iteration: %d\n", i)) {
					t.Fatalf("iteration %d commit lacks trailers:\n%s", i, msg)
				}
				files := strings.Fields(gitOut(t, s, "diff-tree", "--no-commit-id", "--name-only", "-r", fmt.Sprintf("main~%d", n-i+1)))
				if len(files) != 1 || files[0] != fmt.Sprintf("trajectories/%s/iterations/%04d.json", id, i) {
					t.Fatalf("iteration %d commit changed %v", i, files)
				}
			}
			gitOut(t, s, "fsck", "--strict", "--no-dangling")
		})
	}
}

func TestTrajRefusals(t *testing.T) {
	s := newStore(t)
	id := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "bug_fixing", "--prompt", "p"))
	iter := []string{"traj", "iter", id, "--thought-type", "goal", "--thought", "t", "--tool", "Read", "--status", "success", "--result", "r"}
	mustCLI(t, s, "", iter...)
	head := gitOut(t, s, "rev-parse", "main")
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		says        string
	}{
		{"thought type outside the enum", "", []string{"traj", "iter", id, "--thought-type", "musing", "--thought", "t", "--tool", "Read", "--status", "success", "--result", "r"}, exitDomain, "thought.type"},
		{"missing status", "", []string{"traj", "iter", id, "--thought-type", "goal", "--thought", "t", "--tool", "Read", "--result", "r"}, exitDomain, "observation.status"},
		{"stdin iteration with a bad result", `{"thought": {"type": "goal", "content": "c"}, "action": {"tool": "A", "description": "d"}, "observation": {"status": "success", "result": 7}}`, []string{"traj", "iter", id, "-"}, exitDomain, "observation.result"},
		{"stale iteration number", `{"iteration_number": 1, "thought": {"type": "goal", "content": "c"}, "action": {"tool": "A", "description": "d"}, "observation": {"status": "success", "result": "r"}}`, []string{"traj", "iter", id, "-"}, exitStale, "next iteration is 2"},
		{"stdin that is not an object", `[1]`, []string{"traj", "iter", id, "-"}, exitUsage, "object"},
		{"unknown trajectory", "", []string{"traj", "iter", "traj-00000000", "--tool", "Read", "--thought-type", "goal", "--thought", "t", "--status", "success", "--result", "r"}, exitDomain, "traj-00000000"},
		{"not a trajectory id", "", []string{"traj", "show", "traj-xyz"}, exitUsage, "not a trajectory id"},
		{"bad tokens", "", append(append([]string{}, iter...), "--tokens-in", "-3"), exitUsage, "tokens-in"},
		{"negative cost", "", append(append([]string{}, iter...), "--cost", "-1"), exitUsage, "--cost"},
		{"a cost that is not a number", "", append(append([]string{}, iter...), "--cost", "cheap"), exitUsage, "--cost"},
		{"bad params", "", append(append([]string{}, iter...), "--params", "[1]"), exitUsage, "params"},
		{"start without a prompt", "", []string{"traj", "start", "--task-type", "x"}, exitUsage, "--prompt"},
		{"start with a bad task id", "", []string{"traj", "start", "--task-type", "x", "--prompt", "p", "--task", "task-1"}, exitDomain, "task_context.task_id"},
		{"complete with a bad status", "", []string{"traj", "complete", id, "--status", "won"}, exitDomain, "outcome.status"},
		{"complete with a bad reason", "", []string{"traj", "complete", id, "--status", "success", "--reason", "bored"}, exitDomain, "outcome.completion_reason"},
		{"complete without status", "", []string{"traj", "complete", id}, exitUsage, "status"},
		{"prune with a bad age", "", []string{"traj", "prune", "--older-than", "soon"}, exitUsage, "older-than"},
		{"iteration without its tool", "", []string{"traj", "iter", id, "--thought-type", "goal", "--thought", "t"}, exitUsage, "needs --tool"},
		{"import of a file that is not there", "", []string{"traj", "import", "nosuch.json"}, exitUsage, "nosuch.json"},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, s, c.stdin, c.args...)
		if code != c.code || !strings.Contains(errOut, c.says) {
			t.Errorf("%s: exit %d (want %d): %s", c.name, code, c.code, errOut)
		}
		if strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: error is not one line: %q", c.name, errOut)
		}
	}
	if gitOut(t, s, "rev-parse", "main") != head {
		t.Fatal("a refused command wrote a commit")
	}
	mustCLI(t, s, "", "traj", "complete", id, "--status", "success")
	if _, errOut, code := runCLI(t, s, "", iter...); code != exitDomain || !strings.Contains(errOut, "completed") {
		t.Errorf("iter after complete: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, s, "", "traj", "complete", id, "--status", "failure"); code != exitDomain || !strings.Contains(errOut, "already completed") {
		t.Errorf("complete twice: exit %d %s", code, errOut)
	}
}

func TestTrajLimits(t *testing.T) {
	s := newStore(t)
	id := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "t", "--prompt", "p"))
	iter := []string{"traj", "iter", id, "--thought-type", "progress", "--thought", "t", "--tool", "Bash", "--status", "success", "--result", "ok"}
	for i := 0; i < trajectory.MaxIterations; i++ {
		mustCLI(t, s, "", iter...)
	}
	_, errOut, code := runCLI(t, s, "", iter...)
	if code != exitDomain || !strings.Contains(errOut, "100 iterations") {
		t.Fatalf("101st iteration: exit %d: %s", code, errOut)
	}

	big := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "t", "--prompt", "p"))
	six := fmt.Sprintf(`{"thought": {"type": "goal", "content": "c"}, "action": {"tool": "A", "description": "d"}, "observation": {"status": "success", "result": %q}}`, strings.Repeat("x", 6<<20))
	mustCLI(t, s, six, "traj", "iter", big, "-")
	_, errOut, code = runCLI(t, s, six, "traj", "iter", big, "-")
	if code != exitDomain || !strings.Contains(errOut, "10 MB") {
		t.Fatalf("a trajectory past 10 MB: exit %d: %s", code, errOut)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

// TestTrajConcurrentIterations: several processes record iterations into
// one trajectory at once; the iterations come out numbered 1..N without
// gaps or duplicates, one commit each.
func TestTrajConcurrentIterations(t *testing.T) {
	writers, each := 6, 8
	if testing.Short() {
		writers, each = 3, 4
	}
	s := newStore(t)
	id := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "t", "--prompt", "p"))
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := 0; j < each; j++ {
				cmd := exec.Command(bin, "traj", "iter", id, "--thought-type", "progress", "--thought", fmt.Sprintf("w%d-%d", w, j),
					"--tool", "Bash", "--status", "success", "--result", "ok", "--store", s, "--no-sync", "--agent", fmt.Sprintf("agent-%d", w))
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("writer %d: %v: %s", w, err, out)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := writers * each
	files := strings.Fields(gitOut(t, s, "ls-tree", "--name-only", "main:trajectories/"+id+"/iterations"))
	if len(files) != n {
		t.Fatalf("%d iteration files, want %d", len(files), n)
	}
	seen := map[string]bool{}
	for i, f := range files {
		if f != trajectory.IterationName(i+1) {
			t.Fatalf("file %d is %s", i, f)
		}
		doc := trajDecode(t, gitOut(t, s, "show", "main:trajectories/"+id+"/iterations/"+f))
		if doc["iteration_number"] != json.Number(fmt.Sprint(i+1)) {
			t.Fatalf("%s holds iteration_number %v", f, doc["iteration_number"])
		}
		thought := trajectory.Str(doc, "thought", "content")
		if seen[thought] {
			t.Fatalf("%s recorded twice", thought)
		}
		seen[thought] = true
	}
	trailers := strings.Fields(gitOut(t, s, "log", "--format=%(trailers:key=Iteration,valueonly)", "main"))
	sort.Slice(trailers, func(i, j int) bool {
		return len(trailers[i]) < len(trailers[j]) || len(trailers[i]) == len(trailers[j]) && trailers[i] < trailers[j]
	})
	if len(trailers) != n || trailers[0] != "1" || trailers[n-1] != fmt.Sprint(n) {
		t.Fatalf("Iteration trailers: %v", trailers)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

func TestTrajImportAnalyzeReportPrune(t *testing.T) {
	s := newStore(t)
	dir := filepath.Join("..", "..", "testdata", "trajectories")
	files := []string{filepath.Join(dir, "successful_trajectory.json"), filepath.Join(dir, "failed_trajectory.json")}
	out := mustCLI(t, s, "", append([]string{"traj", "import"}, files...)...)
	if !strings.Contains(out, "traj-a1b2c3d4") || !strings.Contains(out, "traj-b2c3d4e5") {
		t.Fatalf("import: %s", out)
	}
	if msg := gitOut(t, s, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "Imported-From: failed_trajectory.json") {
		t.Fatalf("import commit: %s", msg)
	}
	// Imported as stored here: the document comes back unchanged.
	got := trajDecode(t, mustCLI(t, s, "", "traj", "show", "traj-a1b2c3d4", "--json"))
	if !objects.Equal(got, specExample(t, "successful_trajectory")) {
		t.Fatalf("imported document differs:\n%s", trajEncode(t, got))
	}
	if _, errOut, code := runCLI(t, s, "", "traj", "import", files[0]); code != exitDomain || !strings.Contains(errOut, "already") {
		t.Fatalf("importing twice: exit %d %s", code, errOut)
	}
	mustCLI(t, s, "", "traj", "import", "--new-id", files[0])
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-001", "task_type": "t", "task_prompt": "p"}}`), 0o644)
	if _, errOut, code := runCLI(t, s, "", "traj", "import", bad); code != exitDomain || !strings.Contains(errOut, "task_context.task_id") {
		t.Fatalf("importing an invalid file: exit %d %s", code, errOut)
	}

	var list []trajectory.Summary
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "traj", "ls", "--json", "--task-type", "bug_fixing")), &list); err != nil || len(list) != 2 {
		t.Fatalf("ls --task-type bug_fixing: %v %v", list, err)
	}

	var an trajectory.Analysis
	analysis := mustCLI(t, s, "", "traj", "analyze", "--json", "--ngram", "2")
	if err := json.Unmarshal([]byte(analysis), &an); err != nil {
		t.Fatal(err)
	}
	// Costs are JSON numbers, the total as exact as the stored decimals.
	var costs struct {
		ByTaskType []map[string]any `json:"by_task_type"`
	}
	json.Unmarshal([]byte(analysis), &costs)
	for _, tt := range costs.ByTaskType {
		for _, k := range []string{"total_cost_usd", "average_cost_usd"} {
			if _, ok := tt[k].(float64); !ok {
				t.Errorf("%s of %v is %T, not a number", k, tt["task_type"], tt[k])
			}
		}
	}
	if len(costs.ByTaskType) == 0 {
		t.Errorf("analyze --json has no by_task_type: %s", analysis)
	}
	if an.Trajectories != 3 || an.Successful != 3 || an.SuccessRate != 1 || an.AverageIterationsToSuccess != 2.6667 {
		t.Fatalf("analysis: %+v", an)
	}
	if len(an.FailurePatterns) != 1 || an.FailurePatterns[0].ErrorType != "InvalidArgument" || an.FailurePatterns[0].Recovered != 1 ||
		len(an.FailurePatterns[0].RecoveryActions) != 1 || an.FailurePatterns[0].RecoveryActions[0].Tool != "Grep" {
		t.Fatalf("failure patterns: %+v", an.FailurePatterns)
	}
	if len(an.ToolSequences) == 0 || strings.Join(an.ToolSequences[0].Tools, ",") != "Grep,Read" || an.ToolSequences[0].Count != 2 {
		t.Fatalf("tool sequences: %+v", an.ToolSequences)
	}
	if human := mustCLI(t, s, "", "traj", "analyze"); !strings.Contains(human, "bug_fixing") || !strings.Contains(human, "InvalidArgument") {
		t.Fatalf("analyze: %s", human)
	}
	if md := mustCLI(t, s, "", "traj", "analyze", "--format", "markdown"); !strings.Contains(md, "| bug_fixing |") ||
		!strings.Contains(md, "```mermaid\npie title Failures by kind\n    \"InvalidArgument\" : ") {
		t.Fatalf("analyze --format markdown:\n%s", md)
	}

	// The prompt improvements: the example's one Grep retry is listed
	// from --min-retries 1, and each task type gives a template.
	pi := an.PromptImprovements
	if len(pi.HighRetryPatterns) != 0 || len(pi.Templates) != 2 || pi.Templates[0].TaskType != "bug_fixing" ||
		strings.Join(pi.Templates[0].Tools, ",") != "Grep,Read,Write" || pi.Templates[0].Prompt != "Fix the null pointer error in validateUser()" {
		t.Fatalf("prompt improvements: %+v", pi)
	}
	human := mustCLI(t, s, "", "traj", "analyze", "--min-retries", "1")
	if !strings.Contains(human, "code_analysis: Grep retried after InvalidArgument, 1 retries (traj-b2c3d4e5)") ||
		!strings.Contains(human, `prompt: "Find all uses of deprecated API"`) || !strings.Contains(human, "Grep → Read → Write") {
		t.Fatalf("analyze --min-retries 1:\n%s", human)
	}
	for _, bad := range [][]string{{"--min-retries", "0"}, {"--min-success-rate", "1.5"}, {"--min-success-rate", "0"}} {
		if _, _, code := runCLI(t, s, "", append([]string{"traj", "analyze"}, bad...)...); code != exitUsage {
			t.Fatalf("analyze %v: exit %d", bad, code)
		}
	}

	report := mustCLI(t, s, "", "traj", "report", "traj-b2c3d4e5")
	if stored := gitOut(t, s, "show", "main:trajectories/traj-b2c3d4e5/report.md"); stored != report || !strings.Contains(stored, "## Errors and recoveries") {
		t.Fatalf("report.md:\n%s", stored)
	}
	if got := mustCLI(t, s, "", "cat", "trajectories/traj-b2c3d4e5/report.md"); got != report {
		t.Errorf("cat report.md:\n%s", got)
	}

	// The successful example is dated February 2026: prune takes it
	// (and its --new-id copy) once it is 90 days old; the undated failed
	// example is judged by its import commit, which is recent.
	before := strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	out = mustCLI(t, s, "", "traj", "prune", "--older-than", "1d", "--json")
	var pr struct{ Pruned []string }
	if err := json.Unmarshal([]byte(out), &pr); err != nil || len(pr.Pruned) != 2 {
		t.Fatalf("prune: %s", out)
	}
	if parent := strings.TrimSpace(gitOut(t, s, "rev-parse", "main~1")); parent != before {
		t.Fatal("prune wrote more than one commit")
	}
	if _, _, code := runCLI(t, s, "", "traj", "show", "traj-a1b2c3d4"); code != exitDomain {
		t.Fatal("a pruned trajectory is still there")
	}
	if !strings.Contains(gitOut(t, s, "show", "main~1:trajectories/traj-a1b2c3d4/trajectory.json"), "validateUser") {
		t.Fatal("history lost the pruned trajectory")
	}
	mustCLI(t, s, "", "traj", "show", "traj-b2c3d4e5")
	if out := mustCLI(t, s, "", "traj", "prune"); !strings.Contains(out, "nothing to prune") {
		t.Fatalf("second prune: %s", out)
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

func TestTrajStateSnapshotAndTimeline(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk", `"high"`)
	head := strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	id := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "t", "--prompt", "look at the plan"))
	mustCLI(t, s, "", "traj", "iter", id, "--thought-type", "research", "--thought", "read the plan", "--tool", "Read",
		"--status", "success", "--result", "high", "--state-snapshot", "HEAD~1", "--tokens-in", "3", "--tokens-out", "4", "--cost", "0.5")
	doc := trajDecode(t, mustCLI(t, s, "", "traj", "show", id, "--json"))
	it := doc["iterations"].([]any)[0].(map[string]any)
	if trajectory.Str(it, "state_snapshot", "commit") != head {
		t.Fatalf("state_snapshot = %v, want commit %s", it["state_snapshot"], head)
	}
	if !strings.Contains(gitOut(t, s, "log", "-1", "--format=%B"), "State-Snapshot: "+head) {
		t.Fatal("no State-Snapshot trailer")
	}
	if _, _, code := runCLI(t, s, "", "traj", "iter", id, "--tool", "Read", "--thought-type", "goal", "--thought", "t", "--status", "success", "--result", "r", "--state-snapshot", "nope"); code != exitDomain {
		t.Fatalf("an unknown snapshot revision: exit %d", code)
	}
	out := mustCLI(t, s, "", "traj", "show", id)
	for _, want := range []string{id + "  t  running  1 iteration(s)", "prompt: look at the plan", "Read", "7 tok", "$0.5", "thought: read the plan"} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, out)
		}
	}
	if out := mustCLI(t, s, "", "traj", "ls", "--status", "running"); !strings.Contains(out, id) {
		t.Fatalf("ls --status running: %s", out)
	}
	if out := mustCLI(t, s, "", "traj", "ls", "--status", "success"); out != "" {
		t.Fatalf("ls --status success: %s", out)
	}
	var help, errOut bytes.Buffer
	if code := run([]string{"aiwg-state", "traj", "--help"}, strings.NewReader(""), &help, &errOut); code != 0 ||
		!strings.Contains(help.String(), "Examples:") || !strings.Contains(help.String(), "analyze") {
		t.Fatalf("traj --help: exit %d: %s%s", code, help.String(), errOut.String())
	}
}

// TestLogShowsTheRunAWriteBelongsTo: a write linked with --traj/--iter
// carries the trailers, and log shows the link on its line.
func TestLogShowsTheRunAWriteBelongsTo(t *testing.T) {
	s := newStore(t)
	id := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "t", "--prompt", "p"))
	mustCLI(t, s, "", "set", "plan.json", "risk", `"high"`, "--traj", id, "--iter", "1", "--agent", "planner")
	mustCLI(t, s, "", "set", "plan.json", "owner", `"ops"`, "--agent", "planner")
	lines := strings.Split(strings.TrimSpace(mustCLI(t, s, "", "log", "plan.json")), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "[traj-") || !strings.HasSuffix(lines[1], "["+id+"#1]") {
		t.Fatalf("log:\n%s", strings.Join(lines, "\n"))
	}
	if trailers := gitOut(t, s, "log", "-1", "--format=%(trailers:key=Trajectory,key=Iteration)", "main~1"); !strings.Contains(trailers, "Trajectory: "+id) || !strings.Contains(trailers, "Iteration: 1") {
		t.Fatalf("trailers of the linked write:\n%s", trailers)
	}
	if _, errOut, code := runCLI(t, s, "", "set", "plan.json", "x", "1", "--iter", "2"); code != exitUsage || !strings.Contains(errOut, "--iter needs --traj") {
		t.Fatalf("--iter without --traj: exit %d: %s", code, errOut)
	}
}
