package review

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/aiwg-state/objects/jsondiff"
	"github.com/aiwg/aiwg-state/store"
)

// shown trailers: Operation and Path are what "what" says already.
func trailers(m *store.Mutation) []string {
	var out []string
	for _, t := range m.Trailers {
		switch strings.ToLower(t.Key) {
		case "operation", "path", "mutation-id":
			continue
		}
		out = append(out, t.Key+": "+t.Value)
	}
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// problems sums up what stands in the way of the merge, "" when nothing.
func (r *Report) problems() string {
	var p []string
	if r.Merge.Error != "" {
		p = append(p, "the merge could not be tried")
	}
	if n := len(r.Merge.Conflicts); n > 0 {
		p = append(p, fmt.Sprintf("%d conflict(s)", n))
	}
	if n := len(r.Policy.Violations); n > 0 {
		p = append(p, fmt.Sprintf("%d policy violation(s)", n))
	}
	if r.Policy.Error != "" {
		p = append(p, "the policy check could not run")
	}
	if n := len(r.Schemas.Violations); n > 0 {
		p = append(p, fmt.Sprintf("%d schema violation(s)", n))
	}
	if r.Schemas.Error != "" {
		p = append(p, "the schema check could not run")
	}
	return strings.Join(p, ", ")
}

// WriteMarkdown writes the report as a pull-request comment
// (GitHub-flavoured Markdown, which GitLab and Forgejo render as well).
// Everything an agent wrote (names, subjects, trailers, keys, values) is
// escaped to show literally.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	code, text := jsondiff.MarkdownCode, jsondiff.MarkdownText
	fmt.Fprintf(bw, "## Review of %s into %s\n\n", code(r.Head), code(r.Base))
	if p := r.problems(); p != "" {
		fmt.Fprintf(bw, "**Needs attention:** %s.\n\n", p)
	} else {
		bw.WriteString("**Ready to merge:** no conflict, the policy and the schemas pass.\n\n")
	}
	fmt.Fprintf(bw, "| | |\n| --- | --- |\n| Base | %s at %s |\n| Head | %s at %s |\n| Merge base | %s |\n| Mutations | %d by %d agent(s) |\n| Files changed | %d |\n\n",
		code(r.Base), code(short(r.BaseCommit)), code(r.Head), code(short(r.HeadCommit)), code(short(r.MergeBase)), len(r.Mutations), len(r.Agents), len(r.Changes))

	bw.WriteString("### Mutations\n\n")
	if len(r.Mutations) == 0 {
		bw.WriteString("_None: the base has every commit of the head._\n\n")
	} else {
		bw.WriteString("| Commit | Time (UTC) | Agent | Mutation | What | Trailers |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, m := range r.Mutations {
			var tr []string
			for _, t := range trailers(m) {
				tr = append(tr, code(t))
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s |\n", code(short(m.Commit)), m.Time.UTC().Format("2006-01-02 15:04:05"), code(m.Agent), code(m.MutationID), text(m.Subject), strings.Join(tr, " "))
		}
		if r.MutationsTruncated {
			fmt.Fprintf(bw, "\n_Only the newest %d are listed._\n", len(r.Mutations))
		}
		bw.WriteString("\n")
	}

	bw.WriteString("### Changes since the merge base\n\n")
	if len(r.Changes) == 0 {
		bw.WriteString("_No changes._\n\n")
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	for _, d := range r.Changes {
		var err error
		switch d.Status {
		case "binary":
			err = jsondiff.WriteMarkdownFile(bw, d.File, "not JSON, "+d.Change)
		case "renamed":
			err = jsondiff.WriteMarkdownFile(bw, d.File, "moved from "+d.From+", unchanged")
		default:
			if err = jsondiff.WriteMarkdown(bw, d.File, d.Changes); err == nil {
				_, err = bw.WriteString("\n")
			}
		}
		if err != nil {
			return err
		}
	}

	bw.WriteString("### What a merge would do\n\n")
	switch {
	case r.Merge.Error != "":
		fmt.Fprintf(bw, "_%s._\n\n", text(r.Merge.Error))
	default:
		fmt.Fprintf(bw, "A merge into %s: **%s**.\n\n", code(r.Base), text(r.Merge.Status))
	}
	if len(r.Merge.Keys) > 0 {
		bw.WriteString("| File | Key | Strategy | Outcome |\n| --- | --- | --- | --- |\n")
		for _, k := range r.Merge.Keys {
			key, st := "(whole file)", "-"
			if k.Key != "" {
				key = code(k.Key)
			}
			if k.Strategy != "" {
				st = code(k.Strategy)
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", code(k.File), key, st, outcomeText(k.Outcome))
		}
		bw.WriteString("\n")
	}
	if len(r.Merge.Conflicts) > 0 {
		bw.WriteString("Conflicts:\n\n| File | Key | Why | Base | Ours | Theirs |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, c := range r.Merge.Conflicts {
			side := func(v []byte, missing bool) string {
				if missing || v == nil {
					return "_absent_"
				}
				return code(string(v))
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s |\n", code(c.File), code(c.Key), text(c.Reason), side(c.Base, c.BaseMissing), side(c.Ours, c.OursMissing), side(c.Theirs, c.TheirsMissing))
		}
		bw.WriteString("\n")
	}

	bw.WriteString("### Policy\n\n")
	switch {
	case r.Policy.Error != "":
		fmt.Fprintf(bw, "❌ The check could not run: %s\n\n", text(r.Policy.Error))
	case r.Policy.OK:
		bw.WriteString("✅ Every commit passes the access policy.\n\n")
	default:
		bw.WriteString("❌ A push of these commits would be refused:\n\n| Commit | Agent | Path | Rule | Detail |\n| --- | --- | --- | --- | --- |\n")
		for _, v := range r.Policy.Violations {
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", code(short(v.Commit)), code(v.Agent), code(v.Path), code(v.Rule), text(v.Detail))
		}
		bw.WriteString("\n")
	}

	bw.WriteString("### Schemas\n\n")
	switch {
	case r.Schemas.Error != "":
		fmt.Fprintf(bw, "❌ The check could not run: %s\n", text(r.Schemas.Error))
	case r.Schemas.OK:
		bw.WriteString("✅ Every document the head changed meets its schema.\n")
	default:
		bw.WriteString("❌ Documents that break their schema:\n\n| File | Schema | Field | Reason |\n| --- | --- | --- | --- |\n")
		for _, v := range r.Schemas.Violations {
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", code(v.File), code(v.Schema), code(v.Field), text(v.Reason))
		}
	}
	return bw.Flush()
}

func outcomeText(o string) string {
	switch o {
	case Taken:
		return "taken from the head"
	case Settled:
		return "both changed it: the strategy settles it"
	case Conflict:
		return "**conflict**"
	}
	return o
}

// TextOptions tune WriteText.
type TextOptions struct {
	// Color marks headings, the verdicts and the diffs with ANSI colour.
	Color bool
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	paint := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[m"
	}
	head := func(s string) { fmt.Fprintf(bw, "\n%s\n", paint("1", s)) }
	fmt.Fprintf(bw, "%s\n", paint("1", fmt.Sprintf("review of %s into %s", r.Head, r.Base)))
	fmt.Fprintf(bw, "base %s  head %s  merge base %s\n", short(r.BaseCommit), short(r.HeadCommit), short(r.MergeBase))
	if p := r.problems(); p != "" {
		fmt.Fprintf(bw, "%s %s\n", paint("31", "needs attention:"), p)
	} else {
		fmt.Fprintf(bw, "%s no conflict, the policy and the schemas pass\n", paint("32", "ready to merge:"))
	}
	head(fmt.Sprintf("mutations (%d by %s)", len(r.Mutations), strings.Join(r.Agents, ", ")))
	for _, m := range r.Mutations {
		fmt.Fprintf(bw, "%s  %s  %-12s  %s  %s\n", paint("33", short(m.Commit)), m.Time.UTC().Format("2006-01-02 15:04:05"), jsondiff.Printable(m.Agent), orDash(m.MutationID), jsondiff.Printable(m.Subject))
		if tr := trailers(m); len(tr) > 0 {
			fmt.Fprintf(bw, "    %s\n", jsondiff.Printable(strings.Join(tr, "; ")))
		}
	}
	if r.MutationsTruncated {
		fmt.Fprintf(bw, "(only the newest %d)\n", len(r.Mutations))
	}
	head("changes since the merge base")
	if len(r.Changes) == 0 {
		bw.WriteString("none\n")
	}
	for _, d := range r.Changes {
		switch d.Status {
		case "binary":
			fmt.Fprintf(bw, "%s: not JSON, %s\n", jsondiff.Printable(d.File), d.Change)
		case "renamed":
			fmt.Fprintf(bw, "%s → %s: moved, unchanged\n", jsondiff.Printable(d.From), jsondiff.Printable(d.File))
		default:
			if err := jsondiff.WriteText(bw, d.File, d.Changes, jsondiff.TextOptions{Color: opts.Color}); err != nil {
				return err
			}
		}
	}
	head("what a merge would do")
	if r.Merge.Error != "" {
		fmt.Fprintln(bw, r.Merge.Error)
	} else {
		fmt.Fprintf(bw, "into %s: %s\n", r.Base, r.Merge.Status)
	}
	for _, k := range r.Merge.Keys {
		key := k.Key
		if key == "" {
			key = "(whole file)"
		}
		out := outcomeText(k.Outcome)
		if k.Outcome == Conflict {
			out = paint("31", "conflict")
		}
		fmt.Fprintf(bw, "  %s %s  [%s]  %s\n", jsondiff.Printable(k.File), jsondiff.Printable(key), orDash(k.Strategy), out)
	}
	for _, c := range r.Merge.Conflicts {
		fmt.Fprintf(bw, "  conflict %s %s: %s\n", jsondiff.Printable(c.File), jsondiff.Printable(c.Key), c.Reason)
	}
	head("policy")
	switch {
	case r.Policy.Error != "":
		fmt.Fprintf(bw, "%s %s\n", paint("31", "could not run:"), r.Policy.Error)
	case r.Policy.OK:
		fmt.Fprintf(bw, "%s every commit passes\n", paint("32", "ok:"))
	}
	for _, v := range r.Policy.Violations {
		fmt.Fprintf(bw, "%s %s\n", paint("31", "violation:"), jsondiff.Printable(v.String()))
	}
	head("schemas")
	switch {
	case r.Schemas.Error != "":
		fmt.Fprintf(bw, "%s %s\n", paint("31", "could not run:"), r.Schemas.Error)
	case r.Schemas.OK:
		fmt.Fprintf(bw, "%s every document the head changed meets its schema\n", paint("32", "ok:"))
	}
	for _, v := range r.Schemas.Violations {
		fmt.Fprintf(bw, "%s %s\n", paint("31", "violation:"), jsondiff.Printable(v.Error()))
	}
	return bw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
