package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/store"
)

func listBranches(s *session) error {
	bs, err := s.store.Branches(s.c.Context)
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, bs)
	}
	for _, b := range bs {
		mark := " "
		if b.Head {
			mark = "*"
		}
		extra := ""
		if b.Merging {
			extra = " (merging)"
		}
		fmt.Fprintf(s.out, "%s %s %s%s\n", mark, b.Name, shortHash(b.Commit), extra)
	}
	return nil
}

func runMerge(s *session) error {
	c := s.c
	into := c.String("into")
	modes := 0
	for _, f := range []string{"continue", "abort", "verify"} {
		if c.IsSet(f) {
			modes++
		}
	}
	if modes > 1 {
		return usagef("merge takes one of --continue, --abort, --verify")
	}
	wo := s.writeOptions()
	switch {
	case c.Bool("continue"):
		wo.Branch = into
		if _, err := args(c, 0, 0); err != nil {
			return err
		}
		res, err := s.store.Merges().Continue(c.Context, wo)
		return s.printMerge(res, err)
	case c.Bool("abort"):
		if _, err := args(c, 0, 0); err != nil {
			return err
		}
		if err := s.store.Merges().Abort(c.Context, store.WriteOptions{Branch: into}); err != nil {
			return err
		}
		if s.json {
			return printJSON(s.out, map[string]any{"aborted": true})
		}
		fmt.Fprintln(s.out, "merge aborted; the branch is as it was")
		return nil
	case c.IsSet("verify"):
		if _, err := args(c, 0, 0); err != nil {
			return err
		}
		res, err := s.store.Merges().Verify(c.Context, c.String("verify"), merge.VerifyOptions{Branch: into, Strategy: jsonmerge.Strategy(c.String("strategy"))})
		if res == nil {
			return err
		}
		if s.json {
			if perr := printJSON(s.out, res); perr != nil {
				return perr
			}
			return err
		}
		byHand := 0
		for _, d := range res.Differences {
			what := "expected"
			if d.Conflicted {
				byHand++
				what = "resolved by hand (the recomputed merge conflicts here), not failing the check: merged"
			}
			fmt.Fprintf(s.out, "%s: %s %s, found %s\n", d.File, what, orAbsent(d.Expected), orAbsent(d.Actual))
			for _, ch := range d.Changes {
				b, _ := jsonLine(ch)
				fmt.Fprintf(s.out, "    %s\n", b)
			}
		}
		if err == nil {
			fmt.Fprintf(s.out, "%s is the merge of its parents", shortHash(res.Commit))
			if byHand > 0 {
				fmt.Fprintf(s.out, ", with %d file(s) resolved by hand, as listed", byHand)
			}
			fmt.Fprintln(s.out)
		}
		return err
	}
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	wo.Branch = ""
	res, err := s.store.Merges().Merge(c.Context, a[0], merge.MergeOptions{
		Into: into, Strategy: jsonmerge.Strategy(c.String("strategy")), DryRun: c.Bool("dry-run"), NoFF: c.Bool("no-ff"), FirstParent: c.Bool("first-parent"), Write: wo,
	})
	return s.printMerge(res, err)
}

func orAbsent(h string) string {
	if h == "" {
		return "(absent)"
	}
	return shortHash(h)
}

func jsonLine(v any) (string, error) {
	var b bytes.Buffer
	err := printJSON(&b, v)
	return strings.TrimSpace(b.String()), err
}

// printMerge prints a merge's outcome; with conflicts it prints them and
// returns the error, so the exit code is 4.
func (s *session) printMerge(res *merge.MergeResult, err error) error {
	if res == nil || (err != nil && !errors.Is(err, store.ErrConflict) && res.Commit == nil) {
		return err // refused before anything landed: no outcome to print
	}
	if s.json {
		if perr := printJSON(s.out, res); perr != nil {
			return perr
		}
		return err
	}
	dry := ""
	if res.DryRun {
		dry = " (dry run: nothing written)"
	}
	switch res.Status {
	case merge.MergeUpToDate:
		fmt.Fprintf(s.out, "already up to date: %s contains %s\n", res.Into, res.From)
	case merge.MergeFastForward:
		fmt.Fprintf(s.out, "fast-forward %s to %s, %d file(s)%s\n", res.Into, shortHash(res.Theirs), len(res.Files), dry)
	case merge.MergeCommitted:
		if res.Commit != nil {
			fmt.Fprintf(s.out, "%s %s %s\n", shortHash(res.Commit.Commit), res.Commit.MutationID, res.Commit.Subject)
		} else {
			fmt.Fprintf(s.out, "merge %s into %s: clean, %d file(s)%s\n", res.From, res.Into, len(res.Files), dry)
		}
	case merge.MergeConflicts:
		fmt.Fprintf(s.out, "merge %s into %s: %d conflict(s)%s\n", res.From, res.Into, len(res.Conflicts), dry)
		printConflicts(s, res.Conflicts)
	}
	return err
}

func printConflicts(s *session, cs []merge.ConflictEntry) {
	side := func(v []byte, missing bool) string {
		if missing || v == nil {
			return "-"
		}
		return string(v)
	}
	for _, c := range cs {
		where := c.File
		if c.Key != "" {
			where += " " + c.Key
		}
		fmt.Fprintf(s.out, "%s: %s\n    base %s | ours %s | theirs %s\n", where, c.Reason,
			side(c.Base, c.BaseMissing), side(c.Ours, c.OursMissing), side(c.Theirs, c.TheirsMissing))
	}
}

// runMergeFile is the git merge driver.
func runMergeFile(c *cli.Context) error {
	a, err := args(c, 3, 3)
	if err != nil {
		return err
	}
	strategy, err := jsonmerge.ParseStrategy(c.String("strategy"))
	if err != nil {
		return err
	}
	read := func(p string) ([]byte, error) {
		data, err := os.ReadFile(p)
		if err != nil {
			// A missing input file is a bad argument, as for apply.
			return nil, usagef("merge-file: %v", err)
		}
		return data, nil
	}
	base, err := read(a[0])
	if err != nil {
		return err
	}
	ours, err := read(a[1])
	if err != nil {
		return err
	}
	theirs, err := read(a[2])
	if err != nil {
		return err
	}
	path := c.String("path")
	opts := jsonmerge.Options{Strategy: strategy}
	var clocks [2]jsonmerge.Clock
	gitDir := ""
	if path != "" {
		if data, err := os.ReadFile(".gitattributes"); err == nil {
			attrs, err := jsonmerge.ParseAttributes(data)
			if err != nil {
				return err
			}
			found, _ := attrs.Lookup(path)
			opts.Fallback, opts.Keys = found.Fallback, found.Keys
		}
		if out, err := exec.Command("git", "rev-parse", "--git-dir").Output(); err == nil {
			gitDir = strings.TrimSpace(string(out))
			clocks = driverClocks(path)
		}
	}
	res, rec := jsonmerge.Driver(path, base, ours, theirs, clocks, opts)
	if !res.Missing {
		if err := os.WriteFile(a[1], res.Data, 0o644); err != nil {
			return err
		}
	}
	if rec == nil {
		return nil
	}
	data, err := rec.Encode()
	if err != nil {
		return err
	}
	where := a[1] + ".aiwg-conflicts.json"
	if gitDir != "" {
		where = filepath.Join(gitDir, "aiwg-conflicts", filepath.FromSlash(path)+".json")
	}
	if err := os.MkdirAll(filepath.Dir(where), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(where, data, 0o644); err != nil {
		return err
	}
	n := len(rec.Keys)
	if rec.Reason != "" {
		n = 1
	}
	return fmt.Errorf("%w: %s: %d conflict(s) left (%s strategy); recorded in %s", store.ErrConflict, orName(path, a[1]), n, strategy, where)
}

func orName(path, file string) string {
	if path != "" {
		return path
	}
	return file
}

// driverClocks finds, inside a running git merge, the clocks of the last
// commits that changed path on HEAD (ours) and on the branch merged in
// (theirs, named by git's GITHEAD_<id> variable), the same commits and the
// same clocks aiwg-state merge uses. Outside a merge they are zero.
func driverClocks(path string) [2]jsonmerge.Clock {
	var out [2]jsonmerge.Clock
	theirs := ""
	for _, kv := range os.Environ() {
		if k, _, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GITHEAD_") {
			if theirs != "" {
				return out // an octopus: no single other side
			}
			theirs = strings.TrimPrefix(k, "GITHEAD_")
		}
	}
	for i, rev := range []string{"HEAD", theirs} {
		if rev == "" {
			continue
		}
		raw, err := exec.Command("git", "log", "-1", "--first-parent", "--format=%ct%x00%an%x00%B", rev, "--", path).Output()
		if err != nil || len(raw) == 0 {
			continue
		}
		parts := strings.SplitN(string(raw), "\x00", 3)
		if len(parts) != 3 {
			continue
		}
		ct, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil {
			continue
		}
		// git log adds a newline after the format; the message ends in one.
		msg := strings.TrimSuffix(parts[2], "\n")
		out[i] = store.ClockFrom(msg, ct, parts[1])
	}
	return out
}

func runInstallDrivers(c *cli.Context) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	dir := c.String("repo")
	if dir == "" {
		dir = "."
	}
	exe := c.String("bin")
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	installed, err := merge.InstallDrivers(c.Context, dir, exe)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errkind.Errorf(store.ErrNotFound, "%s is not in a git repository (run install-drivers in a git clone of a store, or pass --repo DIR)", dir)
		}
		return err
	}
	diff, err := merge.InstallDiffDriver(c.Context, dir)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		// One list, as before the diff driver: it is the entry with
		// an xfuncname rather than a command.
		out := make([]map[string]string, 0, len(installed)+1)
		for _, d := range installed {
			out = append(out, map[string]string{"driver": d.Driver, "command": d.Command})
		}
		out = append(out, map[string]string{"driver": diff.Driver, "xfuncname": diff.Xfuncname})
		return printJSON(c.App.Writer, out)
	}
	for _, d := range installed {
		fmt.Fprintf(c.App.Writer, "merge.%s.driver = %s\n", d.Driver, d.Command)
	}
	fmt.Fprintf(c.App.Writer, "diff.%s.xfuncname = %s\n", diff.Driver, diff.Xfuncname)
	return nil
}
