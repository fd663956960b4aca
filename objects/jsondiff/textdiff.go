package jsondiff

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Strings past this many characters, or with a line break, are shown as a
// text diff under their change line instead of as two quoted values.
const longString = 80

// textDiffTimeout bounds go-diff's work on one string. Set explicitly: the
// library's default (1 s) is long for an interactive command, and past the
// timeout its results degrade whatever the value.
const textDiffTimeout = 200 * time.Millisecond

// contextLines is how many unchanged lines are kept around each change in a
// line diff; longer unchanged runs are summarised.
const contextLines = 2

// isTextChange reports a change best read as a text diff.
func isTextChange(c Change) bool {
	if c.Kind != Changed {
		return false
	}
	o, ok1 := c.Old.(string)
	n, ok2 := c.New.(string)
	if !ok1 || !ok2 {
		return false
	}
	return isLong(o) || isLong(n)
}

func isLong(s string) bool {
	return strings.ContainsAny(s, "\n\r") || utf8.RuneCountInString(s) > longString
}

func multiline(s string) bool { return strings.ContainsAny(s, "\n\r") }

type lineOp byte

const (
	lineSame    lineOp = ' '
	lineDel     lineOp = '-'
	lineIns     lineOp = '+'
	lineElision lineOp = '@' // Text holds how many unchanged lines were left out
)

type diffLine struct {
	Op   lineOp
	Text string // without its line break
	Skip int    // for lineElision
}

// lineDiff diffs two texts line by line, in go-diff's line mode. Both texts
// are given a final line break first, so a last line that merely gained a
// successor is not reported as changed; callers say separately when the
// final line breaks differ (finalNewlineNote).
func lineDiff(old, new string) []diffLine {
	if !strings.HasSuffix(old, "\n") {
		old += "\n"
	}
	if !strings.HasSuffix(new, "\n") {
		new += "\n"
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = textDiffTimeout
	a, b, lines := dmp.DiffLinesToChars(old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var out []diffLine
	for _, d := range diffs {
		op := lineSame
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = lineDel
		case diffmatchpatch.DiffInsert:
			op = lineIns
		}
		for _, l := range splitLines(d.Text) {
			out = append(out, diffLine{Op: op, Text: l})
		}
	}
	return out
}

// splitLines splits after each "\n", dropping the breaks; a trailing break
// does not start an empty line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// withContext keeps changed lines and up to n unchanged lines around each,
// replacing longer unchanged runs with one elision.
func withContext(lines []diffLine, n int) []diffLine {
	var out []diffLine
	for i := 0; i < len(lines); {
		if lines[i].Op != lineSame {
			out = append(out, lines[i])
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].Op == lineSame {
			j++
		}
		head, tail := n, n
		if i == 0 {
			head = 0
		}
		if j == len(lines) {
			tail = 0
		}
		if head+tail+1 >= j-i {
			out = append(out, lines[i:j]...)
		} else {
			out = append(out, lines[i:i+head]...)
			out = append(out, diffLine{Op: lineElision, Skip: j - i - head - tail})
			out = append(out, lines[j-tail:j]...)
		}
		i = j
	}
	return out
}

type wordOp struct {
	Op   diffmatchpatch.Operation
	Text string
}

// wordDiff diffs two single-line texts word by word: words, whitespace runs
// and single punctuation characters become tokens, tokens become runes, and
// go-diff compares the runes, so a change is never reported inside a word.
func wordDiff(old, new string) []wordOp {
	tokenOf := make(map[string]rune)
	var tokens []string
	encode := func(s string) []rune {
		var rs []rune
		for _, t := range tokenize(s) {
			r, ok := tokenOf[t]
			if !ok {
				r = tokenRune(len(tokens) + 1)
				if r < 0 {
					return nil
				}
				tokenOf[t] = r
				tokens = append(tokens, t)
			}
			rs = append(rs, r)
		}
		return rs
	}
	a, b := encode(old), encode(new)
	if (a == nil && old != "") || (b == nil && new != "") {
		return []wordOp{{diffmatchpatch.DiffDelete, old}, {diffmatchpatch.DiffInsert, new}}
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = textDiffTimeout
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(a, b, false))
	out := make([]wordOp, 0, len(diffs))
	for _, d := range diffs {
		var sb strings.Builder
		for _, r := range d.Text {
			n := int(r)
			if r >= 0xd800 {
				n -= 0x800
			}
			sb.WriteString(tokens[n-1])
		}
		out = append(out, wordOp{d.Type, sb.String()})
	}
	return out
}

func tokenize(s string) []string {
	var out []string
	class := func(r rune) int {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			return 1
		case unicode.IsSpace(r):
			return 2
		}
		return 0
	}
	start := 0
	for i, r := range s {
		if i == start {
			continue
		}
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if c := class(r); c == 0 || c != class(prev) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// finalNewlineNote says which side lacks the final line break the other
// has, or "" when they agree.
func finalNewlineNote(old, new string) string {
	oldNL, newNL := strings.HasSuffix(old, "\n"), strings.HasSuffix(new, "\n")
	switch {
	case oldNL == newNL:
		return ""
	case oldNL:
		return "no newline at end of new text"
	default:
		return "no newline at end of old text"
	}
}
