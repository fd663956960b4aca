// Package termtext makes text an agent wrote fit for a person's terminal.
// Control characters (C0, DEL, C1) in a commit subject, a key or a value
// could move the cursor, erase lines or set the window's title, and
// bidirectional overrides could reorder what a person reads, so that an
// audit shows what an agent wanted rather than what it wrote. The
// commands that print agents' text for people (log, show, blame, sql's
// tables) pass it through Safe; JSON output escapes it already.
package termtext

import (
	"fmt"
	"strings"
)

// Safe is s with each control character and bidirectional mark shown
// escaped, on one line: \n, \t, \x1b, \u202e.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if unsafe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional marks, embeddings, overrides and isolates
	}
	return false
}
