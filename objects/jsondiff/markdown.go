package jsondiff

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"
)

// Values in a Markdown table cell are cut to this many characters; the full
// value follows the table in a <details> block.
const markdownValueWidth = 60

// WriteMarkdown writes changes for a pull-request review (GitHub-flavoured
// Markdown): a heading with the file name, a table of key path, change, old
// and new value, then the full text of values the table had to cut, in
// collapsed <details> blocks, and long strings as ```diff fences.
func WriteMarkdown(w io.Writer, file string, changes []Change) error {
	bw := bufio.NewWriter(w)
	if file != "" {
		fmt.Fprintf(bw, "### %s\n\n", codeSpan(sanitize(file)))
	}
	if len(changes) == 0 {
		bw.WriteString("_No changes._\n")
		return bw.Flush()
	}
	bw.WriteString("| Key | Change | Old | New |\n| --- | --- | --- | --- |\n")
	var after strings.Builder // details and text diffs, in table order
	for _, c := range changes {
		path := sanitize(displayPath(c.Path))
		what := string(c.Kind)
		var oldCell, newCell string
		switch c.Kind {
		case Added:
			newCell = valueCell(c.New)
		case Removed:
			oldCell = valueCell(c.Old)
		case Moved:
			what = "moved from " + codeSpan(sanitize(displayPath(c.From)))
		case Changed:
			if isTextChange(c) {
				oldCell, newCell = "_text diff below_", "_text diff below_"
			} else {
				oldCell, newCell = valueCell(c.Old), valueCell(c.New)
			}
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", cell(codeSpan(path)), cell(what), cell(oldCell), cell(newCell))
		writeMarkdownDetail(&after, c, path)
	}
	if after.Len() > 0 {
		bw.WriteString("\n")
		bw.WriteString(after.String())
	}
	return bw.Flush()
}

func writeMarkdownDetail(b *strings.Builder, c Change, path string) {
	if isTextChange(c) {
		fmt.Fprintf(b, "**%s**\n\n", codeSpan(path))
		var body strings.Builder
		for _, l := range withContext(lineDiff(c.Old.(string), c.New.(string)), 3) {
			if l.Op == lineElision {
				fmt.Fprintf(&body, "@@ %d unchanged %s @@\n", l.Skip, plural(l.Skip, "line", "lines"))
				continue
			}
			body.WriteByte(byte(l.Op))
			body.WriteString(sanitize(l.Text))
			body.WriteByte('\n')
		}
		if note := finalNewlineNote(c.Old.(string), c.New.(string)); note != "" {
			body.WriteString(`\ ` + note + "\n")
		}
		writeFence(b, "diff", body.String())
		return
	}
	oldCut := c.Kind != Added && c.Kind != Moved && truncated(c.Old)
	newCut := c.Kind != Removed && c.Kind != Moved && truncated(c.New)
	if !oldCut && !newCut {
		return
	}
	fmt.Fprintf(b, "<details><summary>Full value of <code>%s</code></summary>\n\n", html.EscapeString(path))
	if oldCut {
		if c.Kind == Changed {
			b.WriteString("Old:\n\n")
		}
		writeFence(b, "json", pretty(c.Old)+"\n")
	}
	if newCut {
		if c.Kind == Changed {
			b.WriteString("New:\n\n")
		}
		writeFence(b, "json", pretty(c.New)+"\n")
	}
	b.WriteString("</details>\n\n")
}

func truncated(v any) bool { return short(v, markdownValueWidth) != canonical(v) }

func valueCell(v any) string {
	s := short(v, markdownValueWidth)
	if s != canonical(v) {
		return codeSpan(s) + " (full value below)"
	}
	return codeSpan(s)
}

// cell escapes a table cell. GitHub applies the \| escape before parsing
// inlines, so it also holds inside code spans.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// codeSpan wraps s in enough backticks that none inside can close it,
// padding with spaces where s starts or ends with a backtick.
func codeSpan(s string) string {
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// writeFence writes body (ending in a newline) in a fenced code block whose
// fence is longer than any backtick run inside.
func writeFence(b *strings.Builder, lang, body string) {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	fmt.Fprintf(b, "%s%s\n%s%s\n\n", fence, lang, body, fence)
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// WriteMarkdownFile writes a file's heading and one line saying what
// happened to it as a whole (a file that is not JSON: "not JSON, added").
func WriteMarkdownFile(w io.Writer, file, what string) error {
	_, err := fmt.Fprintf(w, "### %s\n\n_%s._\n\n", codeSpan(sanitize(file)), MarkdownText(what))
	return err
}

// MarkdownCode is s as inline code safe in a Markdown table cell: control
// characters escaped, no backtick run can close it, no | ends the cell.
// For names and values an agent wrote.
func MarkdownCode(s string) string { return cell(codeSpan(sanitize(s))) }

// MarkdownText is s as plain Markdown text, within a line, that renders
// literally: each character that starts emphasis, code, a link, HTML or
// an entity escaped, control characters
// escaped, | escaped for a table cell. For text an agent wrote (a commit
// subject) shown outside code.
func MarkdownText(s string) string {
	var b strings.Builder
	for _, r := range sanitize(s) {
		if strings.ContainsRune("\\`*_[]<>|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Printable is s with control characters (but tab) and invalid UTF-8
// escaped as \uXXXX: text an agent wrote, safe to print to a terminal.
func Printable(s string) string { return sanitize(s) }
