package aiwgstate_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	aiwgstate "github.com/aiwg/aiwg-state"
)

// TestInstallMergeDrivers: every strategy's driver lands in the clone's
// git config as git reads it; a directory outside git is refused.
func TestInstallMergeDrivers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ds, err := aiwgstate.InstallMergeDrivers(ctx, dir, "/opt/aiwg state/bin/aiwg-state")
	if err != nil || len(ds) < 5 {
		t.Fatalf("%+v %v", ds, err)
	}
	for _, d := range ds {
		out, err := exec.Command("git", "-C", dir, "config", "merge."+d.Driver+".driver").Output()
		if err != nil || strings.TrimSpace(string(out)) != d.Command {
			t.Errorf("%s: git config says %q (%v), want %q", d.Driver, out, err, d.Command)
		}
		if !strings.HasPrefix(d.Command, "'/opt/aiwg state/bin/aiwg-state' merge-file --strategy ") {
			t.Errorf("%s: the executable is not quoted for the shell: %s", d.Driver, d.Command)
		}
	}
	if _, err := aiwgstate.InstallMergeDrivers(ctx, t.TempDir(), "aiwg-state"); !errors.Is(err, aiwgstate.ErrNotFound) {
		t.Errorf("outside git: %v", err)
	}
}

// TestFileDiffPatch: a diff's RFC 6902 patch, whole or scoped to a key,
// with pointers from the document root.
func TestFileDiffPatch(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	if _, err := st.Put(ctx, "plan.json", []byte(`{"risk":{"level":"low","owner":"a"},"steps":[1]}`), aiwgstate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "plan.json", []byte(`{"risk":{"level":"high","owner":"a"},"steps":[1,2]}`), aiwgstate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	diffs, _, _, err := st.Diff(ctx, aiwgstate.DiffOptions{File: "plan.json"})
	if err != nil || len(diffs) != 1 {
		t.Fatalf("%+v %v", diffs, err)
	}
	all, err := diffs[0].Patch("")
	if err != nil || len(all) != 2 {
		t.Errorf("whole patch: %+v %v", all, err)
	}
	scoped, err := diffs[0].Patch("risk")
	if err != nil || len(scoped) != 1 || scoped[0].Op != "replace" || scoped[0].Path != "/risk/level" {
		t.Errorf("patch of risk: %+v %v", scoped, err)
	}
	if none, err := diffs[0].Patch("absent.key"); err != nil || len(none) != 0 {
		t.Errorf("patch of an absent key: %+v %v", none, err)
	}
}
