package verbiage

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPath is returned for a key path, store path or name that does not
// parse or breaks a naming rule. Callers map it to the usage exit code.
var ErrInvalidPath = errors.New("invalid path")

// Segment is one step of a key path: an object key, or an array index when
// the container it is applied to is an array. Whether "0" means key "0" or
// index 0 is decided by the document, not by the parser, so one path syntax
// serves objects and arrays alike.
type Segment struct {
	Key      string
	Wildcard bool // an unescaped "*": every member of the container
}

// Index reports the segment as an array index: a decimal number without
// leading zeros. "-" (RFC 6901's "past the end") is reported by Append.
func (s Segment) Index() (int, bool) {
	if s.Wildcard || s.Key == "" || len(s.Key) > 9 || (len(s.Key) > 1 && s.Key[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s.Key); i++ {
		c := s.Key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Append reports whether the segment is "-", which appends to an array.
func (s Segment) Append() bool { return !s.Wildcard && s.Key == "-" }

// Path is a parsed key path. The empty path addresses the document root.
type Path []Segment

// ParsePath parses the dot form (a.b.0.c) or the slash form (a/b/0/c; a
// leading slash is allowed). The form is the slash form exactly when the text
// holds an unescaped '/'. A backslash escapes the next character, so a key
// holding a dot, slash, star or backslash is written a\.b, a\/b, \*, a\\b.
// The empty string is the root; empty segments are refused.
func ParsePath(s string) (Path, error) {
	if s == "" || s == "/" || s == "." {
		return Path{}, nil
	}
	sep := byte('.')
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '/' {
			sep = '/'
			break
		}
	}
	if sep == '/' && s[0] == '/' {
		s = s[1:]
	}
	var (
		p       Path
		cur     strings.Builder
		escaped bool // cur holds an escaped character, so "*" is literal
	)
	flush := func(end int) error {
		k := cur.String()
		if k == "" {
			return fmt.Errorf("%w: empty key at offset %d", ErrInvalidPath, end)
		}
		p = append(p, Segment{Key: k, Wildcard: k == "*" && !escaped})
		cur.Reset()
		escaped = false
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("%w: trailing backslash in %q", ErrInvalidPath, s)
			}
			i++
			cur.WriteByte(s[i])
			escaped = true
		case c == sep:
			if err := flush(i); err != nil {
				return nil, err
			}
		default:
			cur.WriteByte(c)
		}
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	return p, nil
}

// MustParsePath is ParsePath for literals in code and tests.
func MustParsePath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String renders the path in dot form with escapes; ParsePath reads it back.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		if s.Wildcard {
			b.WriteByte('*')
			continue
		}
		for j := 0; j < len(s.Key); j++ {
			switch c := s.Key[j]; c {
			case '.', '/', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '*':
				if len(s.Key) == 1 {
					b.WriteByte('\\')
				}
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// Pointer renders the path as an RFC 6901 JSON Pointer ("" for the root).
func (p Path) Pointer() string {
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		k := strings.ReplaceAll(s.Key, "~", "~0")
		b.WriteString(strings.ReplaceAll(k, "/", "~1"))
	}
	return b.String()
}

// Keys returns the path's segments as plain strings.
func (p Path) Keys() []string {
	out := make([]string, len(p))
	for i, s := range p {
		out[i] = s.Key
	}
	return out
}

// Child returns a new path with key appended; p is not modified.
func (p Path) Child(key string) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, Segment{Key: key})
}

// HasPrefix reports whether q is p or an ancestor of p.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}
