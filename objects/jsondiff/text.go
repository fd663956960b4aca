package jsondiff

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// TextOptions tunes WriteText.
type TextOptions struct {
	// Color adds ANSI colours. The caller decides (terminal, NO_COLOR);
	// this package never looks at the environment.
	Color bool
}

// Values on a change line are cut to this many characters.
const textValueWidth = 60

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
)

// WriteText writes changes for a person at a terminal, one line per change:
//
//	~ risk.level: "low" → "high"
//	+ items.3: {"id":"t4","title":"Write the report"}
//	- owner: "alice"
//	→ a.b moved to c.d
//
// preceded by the file name when file is not empty. Values are compact JSON
// cut to a line; long or multi-line strings are shown as a line or word diff
// indented under their change line. Everything printed is escaped so that
// state cannot drive the terminal.
func WriteText(w io.Writer, file string, changes []Change, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	t := textWriter{w: bw, color: opts.Color}
	if file != "" {
		t.line(t.paint(ansiBold, sanitize(file)))
	}
	if len(changes) == 0 {
		t.line(t.paint(ansiDim, "  (no changes)"))
	}
	for _, c := range changes {
		t.change(c)
	}
	return bw.Flush()
}

type textWriter struct {
	w     *bufio.Writer
	color bool
}

func (t textWriter) paint(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (t textWriter) line(parts ...string) {
	for _, p := range parts {
		t.w.WriteString(p)
	}
	t.w.WriteByte('\n')
}

func (t textWriter) change(c Change) {
	path := sanitize(displayPath(c.Path))
	switch c.Kind {
	case Added:
		t.line(t.paint(ansiGreen, "+ "+path), ": ", t.paint(ansiGreen, short(c.New, textValueWidth)))
	case Removed:
		t.line(t.paint(ansiRed, "- "+path), ": ", t.paint(ansiRed, short(c.Old, textValueWidth)))
	case Moved:
		t.line(t.paint(ansiCyan, "→ "+sanitize(displayPath(c.From))), " moved to ", t.paint(ansiCyan, path))
	case Changed:
		if isTextChange(c) {
			t.line(t.paint(ansiYellow, "~ "+path), ":")
			t.textChange(c.Old.(string), c.New.(string))
			return
		}
		t.line(t.paint(ansiYellow, "~ "+path), ": ",
			t.paint(ansiRed, short(c.Old, textValueWidth)), " → ", t.paint(ansiGreen, short(c.New, textValueWidth)))
	default:
		t.line("? ", path)
	}
}

const textIndent = "    "

func (t textWriter) textChange(old, new string) {
	if !multiline(old) && !multiline(new) {
		var b strings.Builder
		b.WriteString(textIndent)
		for _, d := range wordDiff(old, new) {
			s := sanitize(d.Text)
			switch d.Op {
			case diffmatchpatch.DiffDelete:
				if t.color {
					b.WriteString(ansiRed + s + ansiReset)
				} else {
					b.WriteString("[-" + s + "-]")
				}
			case diffmatchpatch.DiffInsert:
				if t.color {
					b.WriteString(ansiGreen + s + ansiReset)
				} else {
					b.WriteString("{+" + s + "+}")
				}
			default:
				b.WriteString(s)
			}
		}
		t.line(b.String())
		return
	}
	for _, l := range withContext(lineDiff(old, new), contextLines) {
		switch l.Op {
		case lineElision:
			t.line(textIndent, t.paint(ansiDim, fmt.Sprintf("⋯ %d unchanged %s", l.Skip, plural(l.Skip, "line", "lines"))))
		case lineDel:
			t.line(textIndent, t.paint(ansiRed, "- "+sanitize(l.Text)))
		case lineIns:
			t.line(textIndent, t.paint(ansiGreen, "+ "+sanitize(l.Text)))
		default:
			t.line(textIndent, "  ", sanitize(l.Text))
		}
	}
	if note := finalNewlineNote(old, new); note != "" {
		t.line(textIndent, t.paint(ansiDim, `\ `+note))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// short is the compact JSON of v cut to width characters, with an ellipsis
// where it was cut. The JSON is already escaped, so it is safe to print.
func short(v any, width int) string {
	s := canonical(v)
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
