package sqlstate

import (
	"strings"
)

// statement is what the lexer tells of a SQL text before SQLite sees it:
// its first keyword and whether anything but space and comments follows
// its first top-level semicolon. It is a first gate only, for clear
// messages; SQLite's authorizer decides what a statement may do.
type statement struct {
	// Keyword is the first word, upper-cased ("" for a text of comments
	// and space only).
	Keyword string
	// Multiple: a second statement follows the first.
	Multiple bool
	// Unterminated: a quoted string, identifier or block comment is not
	// closed (SQLite refuses it too, with its own message).
	Unterminated bool
}

// lex scans a SQL text as SQLite's tokenizer does for what matters here:
// 'strings' (with ” inside), "identifiers", `identifiers`, [identifiers],
// -- line comments and /* block comments */.
func lex(sql string) statement {
	var st statement
	i, n := 0, len(sql)
	ended := false // a top-level ';' was seen
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j + 1
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				// SQLite accepts an unclosed block comment at the end.
				i = n
			} else {
				i += 2 + j + 2
			}
		case c == ';':
			ended = true
			i++
		default:
			if ended {
				st.Multiple = true
				return st
			}
			var closing byte
			switch c {
			case '\'', '"', '`':
				closing = c
			case '[':
				closing = ']'
			}
			if closing != 0 {
				j := i + 1
				for {
					k := strings.IndexByte(sql[j:], closing)
					if k < 0 {
						st.Unterminated = true
						return st
					}
					j += k + 1
					// A doubled quote is the quote itself; ']' has no escape.
					if closing != ']' && j < n && sql[j] == closing {
						j++
						continue
					}
					break
				}
				i = j
				continue
			}
			if isWordByte(c) {
				j := i
				for j < n && isWordByte(sql[j]) {
					j++
				}
				if st.Keyword == "" {
					st.Keyword = strings.ToUpper(sql[i:j])
				}
				i = j
				continue
			}
			if st.Keyword == "" {
				// A statement starting with punctuation: no keyword SQLite
				// knows; it will refuse it.
				st.Keyword = string(c)
			}
			i++
		}
	}
	return st
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}
