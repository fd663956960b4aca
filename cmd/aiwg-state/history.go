package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
)

func historyCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "log",
			Usage:     "list mutations, newest first; with FILE[#KEYPATH], only those that changed it",
			ArgsUsage: "[FILE[#KEYPATH]]",
			Description: `Each line: commit, time (UTC), agent, mutation id, what changed.

With FILE, only the commits that changed that file: the same commits as
git log --first-parent -- FILE (or, with --all-parents, as git log -- FILE,
which follows merges into the side that brought the change). With
FILE#KEYPATH, only the commits that changed the value at that key path,
each with the old → new value. Both come from the changed-paths index
(see reindex), so they cost in proportion to that key's changes, not to the
length of history.

Examples:
   aiwg-state log
   aiwg-state log plan.json -n 5
   aiwg-state log docs/plan.json#risk.level
   aiwg-state log docs/plan.json --follow            # across mv, ours or git mv
   aiwg-state log plan.json --all-parents             # both sides of merges
   aiwg-state log --agent planner --since 2026-11-01T00:00:00Z
   aiwg-state log --op delete --json
   aiwg-state log --correlation run-7            # one run's writes, by its Correlation-Id
   aiwg-state log --verify                       # is each signed with its agent's key?`,
			Flags: append(readFlags(),
				&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
				&cli.StringFlag{Name: "since", Usage: "only mutations at or after this RFC 3339 time"},
				&cli.StringFlag{Name: "until", Usage: "only mutations at or before this RFC 3339 time"},
				&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename, merge, rollback"},
				&cli.StringFlag{Name: "source", Usage: "only mutations with this Source trailer (set --source)"},
				&cli.StringFlag{Name: "correlation", Usage: "only mutations with this Correlation-Id trailer (set --correlation): one run's writes"},
				&cli.IntFlag{Name: "n", Usage: "at most this many mutations"},
				&cli.BoolFlag{Name: "follow", Usage: "continue the file's history across moves (aiwg-state mv, or an exact rename made with git mv)"},
				&cli.BoolFlag{Name: "all-parents", Usage: "follow merges into all parents (default: first parents, as git log --first-parent)"},
				verifyFlag(),
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				sigs, err := s.signatures()
				if err != nil {
					return err
				}
				lo := aiwgstate.LogOptions{ReadOptions: s.readOptions(), Agent: s.c.String("agent"), Op: s.c.String("op"), Limit: s.c.Int("n"),
					Source: s.c.String("source"), Correlation: s.c.String("correlation"),
					Follow: s.c.Bool("follow"), AllParents: s.c.Bool("all-parents")}
				if len(a) == 1 {
					lo.File, lo.Key, _ = strings.Cut(a[0], "#")
				} else if lo.Follow {
					return usagef("log --follow needs a FILE")
				}
				if lo.Since, err = parseTime("since", s.c.String("since")); err != nil {
					return err
				}
				if lo.Until, err = parseTime("until", s.c.String("until")); err != nil {
					return err
				}
				var all []*aiwgstate.Mutation
				var verr error
				err = s.store.Log(s.c.Context, lo, func(m *aiwgstate.Mutation) bool {
					if sigs != nil {
						if verr = sigs.Mark(m); verr != nil {
							return false
						}
					}
					if s.json {
						all = append(all, m)
						return true
					}
					printMutationLine(s, m)
					return true
				})
				if err == nil {
					err = verr
				}
				if err != nil {
					return err
				}
				if s.json {
					return printJSON(s.out, nonNil(all))
				}
				return nil
			}),
		},
		{
			Name:      "watch",
			Usage:     "stream mutations as they land, oldest first; with PATH, only those that changed it",
			ArgsUsage: "[PATH]",
			Description: `Each line is a log line (with --json, one JSON object a line: JSON Lines).
The branch is read every --poll; a mutation made by any process, or by
plain git, shows within about that time. --from REV first streams what
came after REV: a consumer that restarts passes the last commit it handled
and misses nothing. When the branch is reset (to a commit that does not
contain the last one streamed), a reset line says so ({"reset":{"from",
"to"}} with --json) before the new line's mutations; a commit streamed
before is not streamed again. PATH is a file or a directory. Stops after -n
mutations, or on Ctrl-C (exit 0).

Examples:
   aiwg-state watch
   aiwg-state watch plan.json --agent planner
   aiwg-state watch leases --json                  # lock events
   aiwg-state watch --from 1a2b3c4d --json -n 10   # resume after a commit`,
			Flags: append(commonFlags(),
				&cli.StringFlag{Name: "from", Usage: "first stream the mutations after this revision (default: only new ones)"},
				&cli.StringFlag{Name: "agent", Usage: "only this agent's mutations"},
				&cli.StringFlag{Name: "op", Usage: "only mutations with this operation: create, update, delete, rename, merge, rollback"},
				&cli.StringFlag{Name: "source", Usage: "only mutations with this Source trailer"},
				&cli.StringFlag{Name: "correlation", Usage: "only mutations with this Correlation-Id trailer"},
				&cli.IntFlag{Name: "n", Usage: "stop after this many mutations (default: run until interrupted)"},
				&cli.DurationFlag{Name: "poll", Value: 100 * time.Millisecond, Usage: "how often the branch is read"},
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				limit := s.c.Int("n")
				if limit < 0 {
					return usagef("-n %d: want a count of mutations (0: no limit)", limit)
				}
				wo := aiwgstate.WatchOptions{Branch: s.c.String("branch"), From: s.c.String("from"), Path: argAt(a, 0),
					Agent: s.c.String("agent"), Op: s.c.String("op"), Source: s.c.String("source"), Correlation: s.c.String("correlation"),
					Poll: s.c.Duration("poll")}
				n := 0
				var werr error
				wo.OnReset = func(from, to string) bool {
					if s.json {
						werr = printJSON(s.out, map[string]any{"reset": map[string]string{"from": from, "to": to}})
					} else {
						fmt.Fprintf(s.out, "reset: the branch moved from %s to %s, which does not contain it\n", shortHash(from), shortHash(to))
					}
					return werr == nil
				}
				err = s.store.Watch(s.c.Context, wo, func(m *aiwgstate.Mutation) bool {
					if s.json {
						werr = printJSON(s.out, m)
					} else {
						printMutationLine(s, m)
					}
					if f, ok := s.out.(interface{ Flush() error }); ok {
						f.Flush()
					}
					n++
					return werr == nil && (limit == 0 || n < limit)
				})
				if errors.Is(err, context.Canceled) {
					return nil // interrupted: the usual end of a watch
				}
				if err != nil {
					return err
				}
				return werr
			}),
		},
		{
			Name:      "blame",
			Usage:     "for every leaf key of a document, the mutation that last set it",
			ArgsUsage: "FILE",
			Description: `Each line: commit, time (UTC), agent, mutation id, key path = value, for
every leaf (scalar, empty object or empty array) of the document at --at
(default HEAD), along first parents: a key merged in from a branch is the
merge's. --all-parents follows such a key into the branch, as git blame
does, naming the agent that set it there (a value no side held, a
resolved conflict, stays the merge's). A key path is a position: inserting
at the front of an array changes every index after it. --lines blames the
stored text line by line instead, like git blame.

Examples:
   aiwg-state blame plan.json
   aiwg-state blame plan.json --all-parents
   aiwg-state blame plan.json --at HEAD~10 --json
   aiwg-state blame plan.json --lines
   aiwg-state blame plan.json --verify            # and whether each setter's commit is signed`,
			Flags: append(readFlags(),
				&cli.BoolFlag{Name: "lines", Usage: "blame lines of the stored text, like git blame"},
				&cli.BoolFlag{Name: "all-parents", Usage: "follow keys merged in from a branch into that branch's history"},
				verifyFlag(),
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 1, 1)
				if err != nil {
					return err
				}
				sigs, err := s.signatures()
				if err != nil {
					return err
				}
				if s.c.Bool("lines") {
					if s.c.Bool("all-parents") {
						return usagef("--all-parents blames keys; --lines blames text along first parents")
					}
					lines, err := s.store.BlameLines(s.c.Context, a[0], s.readOptions())
					if err != nil {
						return err
					}
					for i := range lines {
						if lines[i].Signature, err = verifyCommit(sigs, lines[i].Commit); err != nil {
							return err
						}
					}
					if s.json {
						return printJSON(s.out, nonNil(lines))
					}
					width := len(fmt.Sprint(len(lines)))
					for _, l := range lines {
						fmt.Fprintf(s.out, "%s (%s %s%s %*d) %s\n", boundaryMark(s, l.Commit, l.ShallowBoundary), agentColumn(l.Agent), stamp(l.Time), sigColumn(l.Signature), width, l.Line, l.Text)
					}
					return nil
				}
				entries, err := s.store.Blame(s.c.Context, a[0], s.readOptions(), aiwgstate.BlameOptions{AllParents: s.c.Bool("all-parents")})
				if err != nil {
					return err
				}
				for i := range entries {
					if entries[i].Signature, err = verifyCommit(sigs, entries[i].Commit); err != nil {
						return err
					}
				}
				if s.json {
					return printJSON(s.out, nonNil(entries))
				}
				for _, e := range entries {
					path := e.Path
					if path == "" {
						path = "(root)"
					}
					fmt.Fprintf(s.out, "%s  %s  %s%s  %s  %s = %s\n", boundaryMark(s, e.Commit, e.ShallowBoundary), stamp(e.Time), agentColumn(e.Agent), sigColumn(e.Signature), dashIfEmpty(e.MutationID), path, e.Value)
				}
				return nil
			}),
		},
		{
			Name:      "bisect",
			Usage:     "find the first mutation at which a predicate on the state became true",
			ArgsUsage: " ",
			Description: `Binary search along first parents between --good (where the predicate is
false; default: before the first commit) and --bad (where it is true;
default: HEAD): about log2(n) state reads for n commits.

A predicate is FILE#KEYPATH OP VALUE with OP one of == != < > <= >= and
VALUE a JSON literal (quote strings), or FILE#KEYPATH exists, or FILE
exists; a leading ! negates. A comparison with a missing key is false;
< and > compare numbers.

Examples:
   aiwg-state bisect --pred 'docs/plan.json#risk.level == "high"'
   aiwg-state bisect --pred 'budget.json#spent > 1000' --good v1 --bad main
   aiwg-state bisect --pred 'notes.json exists' --json`,
			Flags: append(commonFlags(),
				&cli.StringFlag{Name: "pred", Usage: "the predicate (see above)", Required: true},
				&cli.StringFlag{Name: "good", Usage: "a revision where the predicate is false (default: before the first commit)"},
				&cli.StringFlag{Name: "bad", Usage: "a revision where the predicate is true (default: HEAD)"},
			),
			Action: command(func(s *session) error {
				if _, err := args(s.c, 0, 0); err != nil {
					return err
				}
				res, err := s.store.Bisect(s.c.Context, aiwgstate.BisectOptions{Predicate: s.c.String("pred"), Good: s.c.String("good"), Bad: s.c.String("bad"), Branch: s.c.String("branch")})
				if err != nil {
					return err
				}
				if s.json {
					return printJSON(s.out, res)
				}
				fmt.Fprintf(s.out, "first mutation where %s (%d states read):\n", res.Predicate, res.Reads)
				printMutationLine(s, res.Mutation)
				return nil
			}),
		},
		{
			Name:  "reindex",
			Usage: "rebuild the changed-paths index that log and blame use",
			Description: `The index lives in the store's git directory (aiwg/index), outside the
versioned tree. Every write keeps it current, and commits it does not know
(made with plain git, fetched) are indexed when a query first meets them,
so reindex is only needed after deleting it or to pay that cost up front.
Progress goes to standard error.

Examples:
   aiwg-state reindex
   aiwg-state reindex --json`,
			Flags: commonFlags(),
			Action: command(func(s *session) error {
				if _, err := args(s.c, 0, 0); err != nil {
					return err
				}
				errw := s.c.App.ErrWriter
				t0 := time.Now()
				last := time.Time{}
				st, err := s.store.Reindex(s.c.Context, func(done, total int) {
					if s.json {
						return // stderr is for JSON then; the result says how many
					}
					if done == total || time.Since(last) > 200*time.Millisecond {
						last = time.Now()
						fmt.Fprintf(errw, "indexing commits: %d/%d\r", done, total)
						if done == total {
							fmt.Fprintln(errw)
						}
					}
				})
				if err != nil {
					return err
				}
				return s.done(st, "indexed %d commits, %d key paths, in %s", st.Commits, st.Keys, time.Since(t0).Round(time.Millisecond))
			}),
		},
		{
			Name:      "diff",
			Usage:     "show what changed, key by key",
			ArgsUsage: "[REV1 [REV2]] [FILE [KEYPATH]]",
			Description: `With no revision: the last mutation. With one: that commit against its
parent, the change REV made, as git show REV (not REV to HEAD, as git diff
REV). With two: REV1 to REV2. FILE and KEYPATH narrow the diff.

Formats: human (colour on a terminal; NO_COLOR honoured), --json,
--format patch (RFC 6902 JSON Patch per file), --format markdown (for a
pull-request review). A file moved whole shows as one rename; its patch
entry is {"file", "from", "patch": []}, since a JSON Patch acts on one
document and cannot move it between files.

Examples:
   aiwg-state diff
   aiwg-state diff HEAD~5 HEAD plan.json
   aiwg-state diff main agents/planner/main plan.json risk
   aiwg-state diff --format markdown HEAD~3 HEAD`,
			Flags: append(commonFlags(),
				&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json, patch or markdown"},
				&cli.BoolFlag{Name: "color", Usage: "force colour in text output"},
			),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 4)
				if err != nil {
					return err
				}
				format := s.c.String("format")
				if !slices.Contains([]string{"text", "json", "patch", "markdown"}, format) {
					return usagef("unknown --format %q: want text, json, patch or markdown", format)
				}
				if slices.Contains(a, "") {
					// An unset shell variable must not widen the diff to
					// every file, or every key.
					return usagef("diff: an empty argument (want REV, FILE or KEYPATH)")
				}
				o := aiwgstate.DiffOptions{}
				var revs []string
				for len(a) > 0 && len(revs) < 2 && !looksLikeFile(a[0]) {
					revs = append(revs, a[0])
					a = a[1:]
				}
				if len(revs) > 0 {
					o.From = revs[0]
				}
				if len(revs) > 1 {
					o.To = revs[1]
				}
				if len(a) > 0 {
					o.File = a[0]
				}
				if len(a) > 1 {
					o.Key = a[1]
				}
				if len(a) > 2 {
					return usagef("diff: too many arguments")
				}
				diffs, _, _, err := s.store.Diff(s.c.Context, o)
				if err != nil {
					return err
				}
				if s.json {
					format = "json"
				}
				if format == "patch" && o.File != "" {
					// One document: the bare RFC 6902 patch, ready for any
					// JSON Patch tool.
					ops := []jsondiff.Op{}
					if len(diffs) == 1 {
						if ops, err = diffs[0].Patch(o.Key); err != nil {
							return err
						}
						if d := diffs[0]; d.Status == "renamed" {
							s.warn(fmt.Sprintf("%s was moved whole to %s: a JSON Patch acts on one document and cannot say so", d.From, d.File))
						}
					}
					return printJSON(s.out, ops)
				}
				return writeDiffs(s, diffs, format)
			}),
		},
		{
			Name:      "show",
			Usage:     "show one mutation: its trailers and its diff",
			ArgsUsage: "[REV|mut-xxxxxxxx]",
			Description: `REV is a commit, branch, tag, HEAD~N or RFC 3339 time (default HEAD); a
mutation id is looked up in the changed-paths index among the commits
reachable from the branch.

Examples:
   aiwg-state show
   aiwg-state show HEAD~3 --json
   aiwg-state show mut-1a2b3c4d
   aiwg-state show --verify                        # with its signature: good, bad, none, unknown-key`,
			Flags: append(commonFlags(), verifyFlag()),
			Action: command(func(s *session) error {
				a, err := args(s.c, 0, 1)
				if err != nil {
					return err
				}
				sigs, err := s.signatures()
				if err != nil {
					return err
				}
				rev := "HEAD"
				if len(a) == 1 {
					rev = a[0]
				}
				m, err := s.store.Show(s.c.Context, rev, s.c.String("branch"))
				if err != nil {
					return err
				}
				if sigs != nil {
					if err := sigs.Mark(m); err != nil {
						return err
					}
				}
				diffs, _, _, err := s.store.Diff(s.c.Context, aiwgstate.DiffOptions{From: m.Commit})
				if err != nil {
					return err
				}
				if s.json {
					return printJSON(s.out, map[string]any{"mutation": m, "diff": nonNil(diffs)})
				}
				fmt.Fprintf(s.out, "commit %s\nagent  %s\ntime   %s\n", m.Commit, m.Agent, m.Time.UTC().Format(time.RFC3339))
				if v := m.Signature; v != nil {
					fmt.Fprintf(s.out, "signature %s\n", signatureLine(v))
				}
				fmt.Fprintf(s.out, "\n    %s\n\n", m.Subject)
				for _, t := range m.Trailers {
					fmt.Fprintf(s.out, "    %s: %s\n", t.Key, t.Value)
				}
				fmt.Fprintln(s.out)
				return writeDiffs(s, diffs, "text")
			}),
		},
	}
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// looksLikeFile tells a document path from a revision in diff's arguments.
func looksLikeFile(a string) bool {
	return strings.HasSuffix(a, ".json") || strings.Contains(a, ".json#")
}

func writeDiffs(s *session, diffs []aiwgstate.FileDiff, format string) error {
	switch format {
	case "json":
		return printJSON(s.out, nonNil(diffs))
	case "patch":
		out := make([]map[string]any, 0, len(diffs))
		for _, d := range diffs {
			ops, _ := d.Patch("") // no key path: no error
			f := map[string]any{"file": d.File, "patch": ops}
			if d.From != "" {
				f["from"] = d.From
			}
			out = append(out, f)
		}
		return printJSON(s.out, out)
	case "markdown":
		for _, d := range diffs {
			if d.Status == "renamed" {
				fmt.Fprintf(s.out, "### `%s` → `%s`\n\n_Moved, unchanged._\n\n", d.From, d.File)
				continue
			}
			if err := jsondiff.WriteMarkdown(s.out, d.File, d.Changes); err != nil {
				return err
			}
		}
		return nil
	case "text":
		color := s.c.Bool("color") || (s.inv.terminal(s.out) && s.inv.getenv("NO_COLOR") == "")
		for _, d := range diffs {
			if d.Status == "binary" {
				fmt.Fprintf(s.out, "%s: not JSON, changed\n", d.File)
				continue
			}
			if d.Status == "renamed" {
				fmt.Fprintf(s.out, "%s → %s: moved, unchanged\n", d.From, d.File)
				continue
			}
			if err := jsondiff.WriteText(s.out, d.File, d.Changes, jsondiff.TextOptions{Color: color}); err != nil {
				return err
			}
		}
		return nil
	}
	return usagef("unknown --format %q: want text, json, patch or markdown", format)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "                   "
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func printMutationLine(s *session, m *aiwgstate.Mutation) {
	what := m.Subject
	if v := m.Value; v != nil {
		what = fmt.Sprintf("%s %s#%s: %s → %s", v.Op, v.File, v.Key, valueOrNone(v.Old), valueOrNone(v.New))
		if v.From != "" {
			what += " (moved from " + v.From + ")"
		}
	}
	if traj, iter, ok := aiwgstate.TrajectoryLink(m); ok {
		// The run this write belongs to (--traj/--iter on the write).
		if iter > 0 {
			what += fmt.Sprintf("  [%s#%d]", traj, iter)
		} else {
			what += "  [" + traj + "]"
		}
	}
	id := m.MutationID
	if id == "" {
		id = "-"
	}
	if m.ShallowBoundary {
		what += "  (shallow boundary)"
	}
	fmt.Fprintf(s.out, "%s  %s  %s%s  %s  %s\n", shortHash(m.Commit), m.Time.UTC().Format("2006-01-02 15:04:05"), agentColumn(m.Agent), sigColumn(m.Signature), id, what)
	if m.ShallowBoundary {
		s.noteShallow(m.Commit)
	}
}

// boundaryMark is git blame's mark of a line credited to a boundary
// commit: ^ before the hash.
func boundaryMark(s *session, commit string, boundary bool) string {
	if !boundary {
		return shortHash(dashIfEmpty(commit))
	}
	s.noteShallow(commit)
	return "^" + shortHash(commit)
}

// agentWidth is the width of the agent column of log and blame.
const agentWidth = 12

// agentColumn is an agent's name in a column of agentWidth characters:
// padded, or cut with "…" so that the columns after it stay in line. (The
// full name is in --json and in git log.)
func agentColumn(name string) string {
	n := utf8.RuneCountInString(name)
	if n > agentWidth {
		r := []rune(name)
		return string(r[:agentWidth-1]) + "…"
	}
	return name + strings.Repeat(" ", agentWidth-n)
}

func valueOrNone(v []byte) string {
	if v == nil {
		return "(none)"
	}
	if len(v) > 80 {
		return string(v[:77]) + "..."
	}
	return string(v)
}

func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, usagef("--%s: want an RFC 3339 time like 2026-11-22T10:00:00Z, got %q", flag, v)
	}
	return t, nil
}
