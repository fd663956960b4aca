package trajectory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

func trajStart(t testing.TB, st *aiwgstate.Store) string {
	t.Helper()
	id, _, err := st.Trajectories().Start(context.Background(), trajectory.StartInput{TaskType: "bug_fixing", Prompt: "fix it"}, store.WriteOptions{Agent: "runner"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func trajIteration(tool, status string) trajectory.IterationInput {
	return trajectory.IterationInput{Fields: trajectory.IterationFields{ThoughtType: "progress", Thought: "next step", Tool: tool, Status: status, Result: "r"}}
}

// TestTrajectoryLinkTrailers: a variable mutation made during a run
// carries the Trajectory and Iteration trailers, so its history names the
// iteration that set it.
func TestTrajectoryLinkTrailers(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	id := trajStart(t, st)
	n, _, err := st.Trajectories().RecordIteration(ctx, id, trajIteration("set_variable", "success"), store.WriteOptions{})
	if err != nil || n != 1 {
		t.Fatalf("iteration %d: %v", n, err)
	}
	link, err := trajectory.Trailers(id, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Set(ctx, "global/variables/risk_level.json", "value", []byte(`"high"`), store.WriteOptions{Trailers: link}); err != nil {
		t.Fatal(err)
	}
	var found *store.Mutation
	st.Log(ctx, store.LogOptions{File: "global/variables/risk_level.json"}, func(m *store.Mutation) bool { found = m; return false })
	if found == nil {
		t.Fatal("no history for the variable")
	}
	if gotID, gotIter, ok := trajectory.Link(found); !ok || gotID != id || gotIter != 1 {
		t.Fatalf("link = %s %d %v", gotID, gotIter, ok)
	}
	if out := storetest.Git(t, st, "log", "-1", "--format=%(trailers:key=Trajectory,key=Iteration)", "--", "global/variables/risk_level.json"); out != "Trajectory: "+id+"\nIteration: 1\n\n" {
		t.Fatalf("git sees %q", out)
	}
	for _, bad := range []struct {
		id   string
		iter int
	}{{"traj-1", 1}, {"mut-00000000", 1}, {id, -1}, {id, trajectory.MaxIterations + 1}} {
		if _, err := trajectory.Trailers(bad.id, bad.iter); !errors.Is(err, store.ErrUsage) {
			t.Errorf("TrajectoryTrailers(%q, %d) = %v", bad.id, bad.iter, err)
		}
	}
	// A link to a trajectory the branch does not hold is refused, and
	// writes nothing.
	head := storetest.Git(t, st, "rev-parse", "main")
	stale, _ := trajectory.Trailers("traj-1a2b3c4d", 1)
	if _, err := st.Set(ctx, "global/variables/risk_level.json", "value", []byte(`"low"`), store.WriteOptions{Trailers: stale}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "traj-1a2b3c4d") {
		t.Errorf("a write linked to no trajectory: %v", err)
	}
	if storetest.Git(t, st, "rev-parse", "main") != head {
		t.Error("the refused write moved the branch")
	}
}

func TestTrajectoryLifecycle(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	wo := store.WriteOptions{Time: t0}
	id := func() string {
		id, _, err := st.Trajectories().Start(ctx, trajectory.StartInput{TaskType: "code_analysis", Prompt: "p", Model: "m"}, wo)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}()
	for i, status := range []string{"failure", "success", "success"} {
		wo.Time = t0.Add(time.Duration(i+1) * time.Second)
		if _, _, err := st.Trajectories().RecordIteration(ctx, id, trajIteration("Grep", status), wo); err != nil {
			t.Fatal(err)
		}
	}
	wo.Time = t0.Add(10 * time.Second)
	if _, err := st.Trajectories().Complete(ctx, id, trajectory.CompletionInput{Status: "success", Reason: "task_complete"}, wo); err != nil {
		t.Fatal(err)
	}
	doc, err := st.Trajectories().Get(ctx, id, store.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"metadata.total_iterations":             "3",
		"metadata.total_duration_ms":            "10000",
		"metadata.completed_at":                 "2026-03-01T12:00:10Z",
		"quality_metrics.retry_count":           "1",
		"quality_metrics.successful_iterations": "2",
		"quality_metrics.efficiency":            "0.6667",
		"quality_metrics.error_recovery":        "1",
		"outcome.iterations_to_completion":      "3",
	} {
		if got := fmt.Sprint(trajectory.Get(doc, strings.Split(path, ".")...)); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	// The index is derived; nothing under trajectories/ but the runs.
	if es, _ := st.List(ctx, trajectory.Dir, store.ReadOptions{}); len(es) != 1 || !es[0].IsDir {
		t.Fatalf("trajectories/ holds %v", es)
	}
	// Reads at an older revision see the trajectory as it was.
	old, err := st.Trajectories().Get(ctx, id, store.ReadOptions{At: "HEAD~2"})
	if err != nil || len(old["iterations"].([]any)) != 2 || trajectory.Completed(old) {
		t.Fatalf("at HEAD~2: %v", err)
	}
	// Prune by the documents' own times: nothing is 90 days older than
	// the completion, everything is once a year has passed.
	wo.Time = t0.Add(24 * time.Hour)
	if _, _, err := st.Trajectories().Prune(ctx, 90*24*time.Hour, wo); !errors.Is(err, store.ErrNoChange) {
		t.Fatalf("early prune: %v", err)
	}
	wo.Time = t0.Add(365 * 24 * time.Hour)
	ids, m, err := st.Trajectories().Prune(ctx, 90*24*time.Hour, wo)
	if err != nil || len(ids) != 1 || ids[0] != id || len(m.Changes) != 1 || m.Changes[0].Operation != store.OpDelete {
		t.Fatalf("prune: %v %v %+v", ids, err, m)
	}
	storetest.Fsck(t, st)
}

func TestImportedTrajectoryIsStoredAsRecorded(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "trajectories", "successful_trajectory.json"))
	if err != nil {
		t.Fatal(err)
	}
	id, m, err := st.Trajectories().Import(ctx, data, trajectory.ImportOptions{Name: "../testdata/successful_trajectory.json"}, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id != "traj-a1b2c3d4" || !trajHasTrailer(m, "Imported-From", "successful_trajectory.json") {
		t.Fatalf("import: %s %+v", id, m.Trailers)
	}
	files := strings.Fields(storetest.Git(t, st, "ls-tree", "-r", "--name-only", "HEAD", "trajectories/"))
	want := []string{"trajectories/traj-a1b2c3d4/iterations/0001.json", "trajectories/traj-a1b2c3d4/iterations/0002.json",
		"trajectories/traj-a1b2c3d4/iterations/0003.json", "trajectories/traj-a1b2c3d4/trajectory.json"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v", files)
	}
	// An imported trajectory takes no more iterations: it is completed.
	if _, _, err := st.Trajectories().RecordIteration(ctx, id, trajIteration("Read", "success"), store.WriteOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("iteration on a completed trajectory: %v", err)
	}
	storetest.Fsck(t, st)
}

func trajHasTrailer(m *store.Mutation, key, value string) bool {
	for _, t := range m.Trailers {
		if t.Key == key && t.Value == value {
			return true
		}
	}
	return false
}

func TestSchemaFileIsTheOneEmbedded(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "trajectory", "trajectory.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(trajectory.SchemaJSON()) != string(data) {
		t.Fatal("the embedded schema differs from testdata")
	}
	if !strings.Contains(string(data), `"$comment": "The RLM trajectories specification's schema`) {
		t.Fatal("the schema lacks its $comment header listing the repairs")
	}
}

// seedTrajectories fills a store with n trajectories of k iterations, one
// import commit each.
func seedTrajectories(tb testing.TB, st *aiwgstate.Store, n, k int) {
	tb.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		tb.Helper()
		var its []string
		for j := 1; j <= k; j++ {
			status := "success"
			if (i+j)%5 == 0 {
				status = "failure"
			}
			its = append(its, fmt.Sprintf(`{"iteration_number": %d, "thought": {"type": "progress", "content": "step %d"}, "action": {"tool": "%s", "description": "d"}, "observation": {"status": "%s", "result": "r"}, "cost": {"total_tokens": 100, "total_cost_usd": 0.001}}`,
				j, j, []string{"Read", "Grep", "Write"}[j%3], status))
		}
		doc := fmt.Sprintf(`{"version": "1.0.0", "trajectory_id": "traj-%08x", "task_context": {"task_id": "task-%08x", "task_type": "%s", "task_prompt": "p"}, "outcome": {"status": "success"}, "iterations": [%s]}`,
			i, i, []string{"bug_fixing", "code_analysis"}[i%2], strings.Join(its, ","))
		if _, _, err := st.Trajectories().Import(ctx, []byte(doc), trajectory.ImportOptions{}, store.WriteOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := st.Repo().Maintain(ctx, true); err != nil && !errors.Is(err, repo.ErrLocked) {
		tb.Fatal(err)
	}
}

// BenchmarkRecordIteration compares recording on an empty store and on one
// holding 1,000 trajectories; run with -benchtime=200x.
func BenchmarkRecordIteration(b *testing.B) {
	for _, n := range []int{0, 1000} {
		b.Run(fmt.Sprintf("trajectories=%d", n), func(b *testing.B) {
			st := storetest.New(b)
			seedTrajectories(b, st, n, 1)
			ctx := context.Background()
			var id string
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%trajectory.MaxIterations == 0 {
					b.StopTimer()
					id = trajStart(b, st)
					b.StartTimer()
				}
				if _, _, err := st.Trajectories().RecordIteration(ctx, id, trajIteration("Bash", "success"), store.WriteOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestValidateKnownFile(t *testing.T) {
	good := []byte(`{"iteration_number": 1}`)
	cases := []struct {
		path string
		body []byte
		rule string
	}{
		{"docs/plan.json", []byte(`{"anything": true}`), ""},
		{"trajectories/traj-00000001/iterations/0101.json", good, "limit"},
		{"trajectories/traj-00000001/iterations/x.json", good, "schema"},
		{"trajectories/traj-00000001/iterations/0001.json", []byte(`{"thought": 7}`), "schema"},
	}
	// The specification's first iteration is valid.
	data, err := os.ReadFile("../testdata/trajectories/successful_trajectory.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(doc["iterations"].([]any)[0])
	cases = append(cases, struct {
		path string
		body []byte
		rule string
	}{"trajectories/traj-00000001/iterations/0001.json", first, ""})
	for _, c := range cases {
		if rule, detail := aiwgstate.ValidateKnownFile(c.path, c.body); rule != c.rule {
			t.Errorf("%s: rule %q (%s), want %q", c.path, rule, detail, c.rule)
		}
	}
}
