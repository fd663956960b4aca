package merge_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/store"
)

// TestInstallDrivers: every strategy's driver lands in the clone's
// git config as git reads it; a directory outside git is refused.
func TestInstallDrivers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	testutil.Git{}.Run(t, "init", "-q", dir)
	ds, err := merge.InstallDrivers(ctx, dir, "/opt/aiwg state/bin/aiwg-state")
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
	if _, err := merge.InstallDrivers(ctx, t.TempDir(), "/usr/bin/aiwg-state"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("outside git: %v", err)
	}
	if _, err := merge.InstallDrivers(ctx, dir, "aiwg-state"); !errors.Is(err, store.ErrUsage) {
		t.Errorf("a relative executable: %v", err)
	}
}
