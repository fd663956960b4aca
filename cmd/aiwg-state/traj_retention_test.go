package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGcPrunesTrajectoriesPastRetention: gc prunes, in one commit, the
// trajectories older than trajectories.retention_days and leaves the young
// ones; retention 0 keeps them all, and a negative one is refused.
func TestGcPrunesTrajectoriesPastRetention(t *testing.T) {
	s := newStore(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "trajectories", "successful_trajectory.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Every time in it five years back: long past any retention.
	old := regexp.MustCompile(`"20[0-9][0-9]-`).ReplaceAll(data, []byte(`"2021-`))
	file := filepath.Join(t.TempDir(), "old.json")
	os.WriteFile(file, old, 0o644)
	mustCLI(t, s, "", "traj", "import", file)
	young := strings.TrimSpace(mustCLI(t, s, "", "traj", "start", "--task-type", "bug_fixing", "--prompt", "p"))

	mustCLI(t, s, "", "config", "trajectories.retention_days", "0")
	before := gitOut(t, s, "rev-parse", "main")
	mustCLI(t, s, "", "gc")
	if after := gitOut(t, s, "rev-parse", "main"); after != before {
		t.Fatalf("retention 0: gc committed (%s -> %s)", before, after)
	}
	if _, errOut, code := runCLI(t, s, "", "config", "trajectories.retention_days", "-1"); code != exitUsage || !strings.Contains(errOut, "retention_days") {
		t.Fatalf("negative retention: exit %d %q", code, errOut)
	}

	mustCLI(t, s, "", "config", "trajectories.retention_days", "30")
	before = strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	out := mustCLI(t, s, "", "gc", "--json")
	if !strings.Contains(out, `"trajectories_pruned":["traj-a1b2c3d4"]`) {
		t.Fatalf("gc --json: %s", out)
	}
	if n := strings.TrimSpace(gitOut(t, s, "rev-list", "--count", before+"..main")); n != "1" {
		t.Fatalf("gc wrote %s commits, want 1", n)
	}
	tree := gitOut(t, s, "ls-tree", "-r", "--name-only", "main", "trajectories")
	if strings.Contains(tree, "traj-a1b2c3d4") || !strings.Contains(tree, young) {
		t.Fatalf("after gc:\n%s", tree)
	}
	// History keeps it.
	gitOut(t, s, "show", before+":trajectories/traj-a1b2c3d4/trajectory.json")
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
	if out := mustCLI(t, s, "", "gc"); strings.Contains(out, "pruned") {
		t.Fatalf("second gc: %s", out)
	}
}
