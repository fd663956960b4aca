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

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/merge"
)

func mergeCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "branch",
			Usage:     "list, create or delete branches",
			ArgsUsage: "[NAME | ls]",
			Description: `Without NAME, or with "ls": list the branches (* marks the store's HEAD, "merging"
one with a merge in progress). With NAME: create it at --from (default:
the head of the current branch); an existing branch is refused (exit 3).
-d deletes a branch, and any merge in progress on it.

Examples:
   aiwg-state branch                        # list
   aiwg-state branch ls --json
   aiwg-state branch agents/planner/try-1   # create at HEAD
   aiwg-state branch hotfix --from HEAD~3
   aiwg-state branch -d hotfix`,
			Flags: append(commonFlags(),
				&cli.StringFlag{Name: "from", Usage: "the revision the new branch starts at (default: HEAD)"},
				&cli.BoolFlag{Name: "delete", Aliases: []string{"d"}, Usage: "delete the branch NAME (refused if HEAD does not contain it, or it has a merge in progress)"},
				&cli.BoolFlag{Name: "force", Usage: "with -d: delete even unmerged commits and a merge in progress"},
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				switch {
				case len(a) == 0 && s.c.Bool("delete"):
					return usagef("branch -d needs a branch NAME")
				case len(a) == 0 || (a[0] == "ls" && !s.c.Bool("delete") && !s.c.IsSet("from")):
					// "branch ls" lists too; it is a positional word rather than
					// a subcommand so flags may come anywhere on the line.
					return listBranches(s)
				case s.c.Bool("delete"):
					if err := s.store.DeleteBranch(s.c.Context, a[0], s.c.Bool("force")); err != nil {
						return err
					}
					return s.done(map[string]any{"deleted": a[0]}, "deleted branch %s", a[0])
				}
				from := s.c.String("from")
				if from == "" {
					from = s.store.Branch()
				}
				b, err := s.store.CreateBranch(s.c.Context, a[0], from)
				if err != nil {
					return err
				}
				return s.done(b, "created branch %s at %s", b.Name, shortHash(b.Commit))
			}),
		},
		{
			Name:      "switch",
			Usage:     "point the store's HEAD (the default branch of every command) at a branch",
			ArgsUsage: "NAME",
			Description: `Examples:
   aiwg-state switch agents/planner/try-1
   aiwg-state set plan.json risk.level '"low"'   # now writes that branch`,
			Flags: commonFlags(),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 1)
				if err != nil {
					return err
				}
				if err := s.store.Switch(s.c.Context, a[0]); err != nil {
					return err
				}
				return s.done(map[string]any{"head": a[0]}, "HEAD is now %s", a[0])
			}),
		},
		{
			Name:      "merge",
			Usage:     "merge a branch, key by key, with the strategies of .gitattributes",
			ArgsUsage: "BRANCH",
			Description: `Merges BRANCH into --into (default: --branch, else the store's HEAD).
A branch that already contains BRANCH is left alone; one that BRANCH
contains fast-forwards (--no-ff makes a merge commit anyway); otherwise the
two are merged three ways against their merge base and committed with two
parents. Each JSON document changed on both sides is merged key by key
with the strategy .gitattributes gives its path (merge=aiwg-STRATEGY), or
--strategy for every path: last-write-wins, first-write-wins,
merge-objects, merge-arrays, higher-priority-wins, max, sum (counters:
both sides' increments kept), conflict.

What no strategy settles is kept as a conflict (base, ours and theirs per
key path, never markers in the JSON), the branch is left unchanged and the
exit code is 4; no write proceeds on the branch until the merge is
finished with --continue (after aiwg-state resolve) or dropped with --abort.

--verify REV recomputes the merge commit REV from its parents and lists
every difference (exit 4 if any): run it in CI, since git hosts' merge
buttons ignore the aiwg merge drivers. Files where the recomputed merge
itself conflicts were resolved by hand: they are listed, marked so, and
do not fail the check.

Examples:
   aiwg-state merge agents/planner/try-1
   aiwg-state merge feature --into main --dry-run --json
   aiwg-state merge feature --strategy last-write-wins
   aiwg-state conflicts
   aiwg-state resolve plan.json risk.level --theirs
   aiwg-state merge --continue
   aiwg-state merge --abort
   aiwg-state merge --verify main`,
			Flags: append(writeFlags(),
				&cli.StringFlag{Name: "into", Usage: "the branch to merge into (default: --branch, else HEAD)"},
				&cli.StringFlag{Name: "strategy", Usage: "settle every path with this strategy instead of .gitattributes"},
				&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "report what the merge would do; write nothing"},
				&cli.BoolFlag{Name: "no-ff", Usage: "make a merge commit even when a fast-forward would do"},
				&cli.BoolFlag{Name: "first-parent", Usage: "keep the branch's first-parent history (as integrate does): fast-forward only over commits whose first-parent chain holds its head"},
				&cli.BoolFlag{Name: "continue", Usage: "commit the merge in progress once every conflict is resolved"},
				&cli.BoolFlag{Name: "abort", Usage: "drop the merge in progress (the branch was never changed)"},
				&cli.StringFlag{Name: "verify", Usage: "recompute the merge commit REV from its parents and report every difference"},
			),
			Action: command(runMerge),
		},
		{
			Name:  "conflicts",
			Usage: "list what the merge in progress left to resolve",
			Description: `One line per conflict: FILE KEYPATH, the reason, then base, ours and
theirs (compact JSON; "-" where the key does not exist on that side). A
whole-file conflict (not JSON, or not mergeable key by key) has no KEYPATH.

Examples:
   aiwg-state conflicts
   aiwg-state conflicts --into feature --json`,
			Flags: append(commonFlags(), &cli.StringFlag{Name: "into", Usage: "the branch with the merge in progress (default: --branch, else HEAD)"}),
			Action: command(func(s *session) error {
				cs, err := s.store.Conflicts(s.c.Context, s.c.String("into"))
				if errors.Is(err, aiwgstate.ErrNotFound) {
					// No merge in progress: nothing to resolve, which an
					// agent polling this must not read as a failure.
					if s.json {
						return printJSON(s.out, []aiwgstate.ConflictEntry{})
					}
					fmt.Fprintln(s.out, "no merge in progress")
					return nil
				}
				if err != nil {
					return err
				}
				if s.json {
					if cs == nil {
						cs = []aiwgstate.ConflictEntry{}
					}
					return printJSON(s.out, cs)
				}
				printConflicts(s, cs)
				return nil
			}),
		},
		{
			Name:      "resolve",
			Usage:     "settle a conflict of the merge in progress",
			ArgsUsage: "FILE [KEYPATH]",
			Description: `Settles the conflict at KEYPATH of FILE, or all of FILE's conflicts
without KEYPATH, with one of --ours, --theirs, --base or --value JSON (with
no KEYPATH, --value replaces the whole document). A side on which the key
does not exist deletes it. Once nothing is left, merge --continue commits.
merge --verify later accepts what was settled at conflicted keys; a whole
document given with --value that also changes other keys fails it, as any
change the merge did not make.

Examples:
   aiwg-state resolve plan.json risk.level --theirs
   aiwg-state resolve plan.json owner --value '"ops"'
   aiwg-state resolve plan.json --ours          # every conflict of plan.json
   aiwg-state merge --continue`,
			Flags: append(writeFlags(),
				&cli.StringFlag{Name: "into", Usage: "the branch with the merge in progress (default: --branch, else HEAD)"},
				&cli.BoolFlag{Name: "ours", Usage: "keep the value of the branch merged into"},
				&cli.BoolFlag{Name: "theirs", Usage: "take the value of the branch merged in"},
				&cli.BoolFlag{Name: "base", Usage: "go back to the merge base's value"},
				&cli.StringFlag{Name: "value", Usage: "put this JSON there instead"},
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 2)
				if err != nil {
					return err
				}
				var how aiwgstate.Resolution
				n := 0
				for _, side := range []string{"ours", "theirs", "base"} {
					if s.c.Bool(side) {
						how.Take = side
						n++
					}
				}
				if s.c.IsSet("value") {
					how.Value = []byte(s.c.String("value"))
					n++
				}
				if n != 1 {
					return usagef("resolve takes exactly one of --ours, --theirs, --base, --value JSON")
				}
				key := argAt(a, 1)
				left, err := s.store.ResolveConflict(s.c.Context, s.c.String("into"), a[0], key, how, s.writeOptions())
				if err != nil {
					return err
				}
				if s.json {
					return printJSON(s.out, map[string]any{"file": a[0], "key": key, "remaining_files": left})
				}
				if left == 0 {
					fmt.Fprintln(s.out, "resolved; no conflicts left: run aiwg-state merge --continue")
				} else {
					fmt.Fprintf(s.out, "resolved; %d file(s) still have conflicts\n", left)
				}
				return nil
			}),
		},
		{
			Name:      "merge-file",
			Usage:     "the git merge driver: merge BASE, OURS and THEIRS into OURS",
			ArgsUsage: "BASE OURS THEIRS",
			Description: `The entry git calls for merge=aiwg-STRATEGY (see install-drivers) with
%O %A %B --path %P. Writes the merged document into OURS (canonical JSON).
Exit 0 when clean; otherwise exit 4 with ours' value at each unresolved key
and a conflict record (base, ours and theirs per key path) written to
<git-dir>/aiwg-conflicts/<PATH>.json (or OURS.aiwg-conflicts.json outside
a repository), never conflict markers.

Inside a git merge, the clocks that order last-write-wins are those of the
last commits that changed PATH on HEAD and on the branch merged in (git's
GITHEAD_<id> variable), exactly as aiwg-state merge finds them; and the
aiwg-fallback and aiwg-keys attributes of PATH come from ./.gitattributes.

Examples:
   aiwg-state merge-file --strategy merge-objects base.json ours.json theirs.json
   git config merge.aiwg-merge-objects.driver 'aiwg-state merge-file --strategy merge-objects %O %A %B --path %P'`,
			Flags: []cli.Flag{
				jsonFlag(),
				&cli.StringFlag{Name: "strategy", Usage: "the strategy (required)", Required: true},
				&cli.StringFlag{Name: "path", Usage: "the file's path in the tree (git's %P)"},
			},
			Action: runMergeFile,
		},
		{
			Name:  "install-drivers",
			Usage: "register the aiwg merge drivers in a clone's git config",
			Description: `Sets merge.aiwg-STRATEGY.name and merge.aiwg-STRATEGY.driver for every
strategy in the repository's git config, so a plain git merge in a clone of
the store merges the paths .gitattributes assigns (merge=aiwg-STRATEGY)
exactly as aiwg-state merge does.

Examples:
   git clone .aiwg/state.git state && cd state && aiwg-state install-drivers
   aiwg-state install-drivers --repo ../state`,
			Flags: []cli.Flag{
				jsonFlag(),
				&cli.StringFlag{Name: "repo", Usage: "the clone (default: the current directory)"},
				&cli.StringFlag{Name: "bin", Usage: "the aiwg-state executable git should run (default: this one)"},
			},
			Action: runInstallDrivers,
		},
	}
}

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
		if _, err := args(c, 0, 0); err != nil {
			return err
		}
		res, err := s.store.Continue(c.Context, into, wo)
		return s.printMerge(res, err)
	case c.Bool("abort"):
		if _, err := args(c, 0, 0); err != nil {
			return err
		}
		if err := s.store.Abort(c.Context, into); err != nil {
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
		res, err := s.store.VerifyMerge(c.Context, c.String("verify"), into, merge.Strategy(c.String("strategy")))
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
	res, err := s.store.Merge(c.Context, a[0], aiwgstate.MergeOptions{
		Into: into, Strategy: merge.Strategy(c.String("strategy")), DryRun: c.Bool("dry-run"), NoFF: c.Bool("no-ff"), FirstParent: c.Bool("first-parent"), Write: wo,
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
func (s *session) printMerge(res *aiwgstate.MergeResult, err error) error {
	if res == nil || (err != nil && !errors.Is(err, aiwgstate.ErrConflict) && res.Commit == nil) {
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
	case aiwgstate.MergeUpToDate:
		fmt.Fprintf(s.out, "already up to date: %s contains %s\n", res.Into, res.From)
	case aiwgstate.MergeFastForward:
		fmt.Fprintf(s.out, "fast-forward %s to %s, %d file(s)%s\n", res.Into, shortHash(res.Theirs), len(res.Files), dry)
	case aiwgstate.MergeCommitted:
		if res.Commit != nil {
			fmt.Fprintf(s.out, "%s %s %s\n", shortHash(res.Commit.Commit), res.Commit.MutationID, res.Commit.Subject)
		} else {
			fmt.Fprintf(s.out, "merge %s into %s: clean, %d file(s)%s\n", res.From, res.Into, len(res.Files), dry)
		}
	case aiwgstate.MergeConflicts:
		fmt.Fprintf(s.out, "merge %s into %s: %d conflict(s)%s\n", res.From, res.Into, len(res.Conflicts), dry)
		printConflicts(s, res.Conflicts)
	}
	return err
}

func printConflicts(s *session, cs []aiwgstate.ConflictEntry) {
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
	strategy, err := merge.ParseStrategy(c.String("strategy"))
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
	opts := merge.Options{Strategy: strategy}
	var clocks [2]merge.Clock
	gitDir := ""
	if path != "" {
		if data, err := os.ReadFile(".gitattributes"); err == nil {
			attrs, err := merge.ParseAttributes(data)
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
	res, rec := merge.Driver(path, base, ours, theirs, clocks, opts)
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
	return fmt.Errorf("%w: %s: %d conflict(s) left (%s strategy); recorded in %s", aiwgstate.ErrConflict, orName(path, a[1]), n, strategy, where)
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
func driverClocks(path string) [2]merge.Clock {
	var out [2]merge.Clock
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
		out[i] = aiwgstate.ClockFrom(msg, ct, parts[1])
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
	installed, err := aiwgstate.InstallMergeDrivers(c.Context, dir, exe)
	if err != nil {
		if errors.Is(err, aiwgstate.ErrNotFound) {
			return errkind.Errorf(aiwgstate.ErrNotFound, "%s is not in a git repository (run install-drivers in a git clone of a store, or pass --repo DIR)", dir)
		}
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, installed)
	}
	for _, d := range installed {
		fmt.Fprintf(c.App.Writer, "merge.%s.driver = %s\n", d.Driver, d.Command)
	}
	return nil
}
