package merge

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/store"
)

// MergeDriver is a merge driver registered in a clone's git config.
type MergeDriver struct {
	// Driver is the name .gitattributes uses: merge=aiwg-STRATEGY.
	Driver string `json:"driver"`
	// Command is what git runs (merge.<driver>.driver).
	Command string `json:"command"`
}

// InstallDrivers registers a merge driver for every strategy in the
// git config of the repository at dir (a clone of a store), so that a
// plain git merge there merges the paths .gitattributes assigns as
// aiwg-state merge does. exe is the aiwg-state executable git runs, an
// absolute path.
func InstallDrivers(ctx context.Context, dir, exe string) ([]MergeDriver, error) {
	if !filepath.IsAbs(exe) {
		// git runs the driver from the clone's top, wherever it merges.
		return nil, fmt.Errorf("%w: the merge driver's executable %q is not an absolute path", store.ErrUsage, exe)
	}
	if err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--git-dir").Run(); err != nil {
		return nil, errkind.Errorf(store.ErrNotFound, "%s is not in a git repository (install the drivers in a git clone of a store)", dir)
	}
	var out []MergeDriver
	for _, st := range jsonmerge.Strategies() {
		d := MergeDriver{Driver: jsonmerge.DriverPrefix + string(st), Command: quoteArg(exe) + " merge-file --strategy " + string(st) + " %O %A %B --path %P"}
		name := "merge." + d.Driver
		for _, kv := range [][2]string{{name + ".name", "aiwg-state " + string(st)}, {name + ".driver", d.Command}} {
			if msg, err := exec.CommandContext(ctx, "git", "-C", dir, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git config %s in %s: %v: %s", kv[0], dir, err, strings.TrimSpace(string(msg)))
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// quoteArg quotes s for the shell git runs a driver's command with.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'{}[]$%|&;<>()*?#!\\`~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DiffDriver is the diff driver a store's .gitattributes names for its
// JSON documents (diff=aiwg-json): git's hunk headers then name the key
// a change is in.
const DiffDriver = "aiwg-json"

// DiffFuncname is the driver's diff.aiwg-json.xfuncname: a line of
// canonical JSON that opens an object or array under a key. git heads
// each hunk with the nearest such line above it (the key alone, quoted),
// so git diff and git log -p say which key's value a change is in.
const DiffFuncname = `^[ \t]*("([^"\\]|\\.)*"): [[{]$`

// InstalledDiffDriver is the diff driver registered in a clone's config.
type InstalledDiffDriver struct {
	Driver    string `json:"driver"`
	Xfuncname string `json:"xfuncname"`
}

// InstallDiffDriver registers the diff driver in the git config of the
// repository at dir (a clone of a store); the store's .gitattributes
// assigns it to *.json (diff=aiwg-json).
func InstallDiffDriver(ctx context.Context, dir string) (InstalledDiffDriver, error) {
	d := InstalledDiffDriver{Driver: DiffDriver, Xfuncname: DiffFuncname}
	if err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--git-dir").Run(); err != nil {
		return d, errkind.Errorf(store.ErrNotFound, "%s is not in a git repository (install the drivers in a git clone of a store)", dir)
	}
	key := "diff." + DiffDriver + ".xfuncname"
	if msg, err := exec.CommandContext(ctx, "git", "-C", dir, "config", key, DiffFuncname).CombinedOutput(); err != nil {
		return d, fmt.Errorf("git config %s in %s: %v: %s", key, dir, err, strings.TrimSpace(string(msg)))
	}
	return d, nil
}
