package main

import (
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/internal/termtext"
	"github.com/aiwg/aiwg-state/internal/when"
	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/trajectory"
)

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

func writeDiffs(s *session, diffs []store.FileDiff, format string) error {
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
		if len(diffs) == 0 {
			fmt.Fprintln(s.out, "_No changes._")
		}
		for _, d := range diffs {
			if d.Status == "binary" {
				if err := jsondiff.WriteMarkdownFile(s.out, d.File, "not JSON, "+d.Change); err != nil {
					return err
				}
				continue
			}
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
		color := s.colored
		for _, d := range diffs {
			if d.Status == "binary" {
				fmt.Fprintf(s.out, "%s: not JSON, %s\n", d.File, d.Change)
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

func printMutationLine(s *session, m *store.Mutation) {
	what := m.Subject
	if v := m.Value; v != nil {
		what = fmt.Sprintf("%s %s#%s: %s → %s", v.Op, v.File, v.Key, valueOrNone(v.Old), valueOrNone(v.New))
		if v.From != "" {
			what += " (moved from " + v.From + ")"
		}
	}
	if traj, iter, ok := trajectory.Link(m); ok {
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
	fmt.Fprintf(s.out, "%s  %s  %s%s  %s  %s\n", s.paint(colorCommit, shortHash(m.Commit)), m.Time.UTC().Format("2006-01-02 15:04:05"), s.paint(colorAgent, agentColumn(m.Agent)), sigColumn(m.Signature), s.paint(colorDim, id), termtext.Safe(what))
	if m.ShallowBoundary {
		s.noteShallow(m.Commit)
	}
}

// boundaryMark is git blame's mark of a line credited to a boundary
// commit: ^ before the hash.
func boundaryMark(s *session, commit string, boundary bool) string {
	if !boundary {
		return s.paint(colorCommit, shortHash(dashIfEmpty(commit)))
	}
	s.noteShallow(commit)
	return s.paint(colorCommit, "^"+shortHash(commit))
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

// parseTime reads a time flag (--since, --until) as people type it: a
// date, an RFC 3339 time or an age (2h, 1d, 3w: that long ago).
func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := when.Parse(v, time.Now())
	if err != nil {
		return t, usagef("--%s %q: want %s", flag, v, when.Forms)
	}
	return t, nil
}
