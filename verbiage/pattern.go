package verbiage

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPattern is wrapped by CompilePattern's errors: a path pattern that
// git would ignore or could never match.
var ErrInvalidPattern = errors.New("invalid pattern")

// MaxPatternLen bounds a pattern. Git ignores .gitattributes lines of 2048
// bytes or more; the bound leaves room for the attributes on the same line.
const MaxPatternLen = 1024

// Pattern is a compiled gitattributes(5) path pattern. The store picks merge
// strategies, ruled documents and access policy by path with the same
// patterns git reads from .gitattributes, so the matching must be git's to the
// byte, quirks included: a pattern and git check-attr never disagree.
//
// The zero Pattern matches nothing.
type Pattern struct {
	text string
	// basename patterns (no '/' but a trailing one) match the last segment
	// of a path at any depth; the others match the whole path from the root.
	basename bool
	// dirOnly patterns (a trailing '/') match directories only, written as
	// paths ending in '/'; a file path never matches them.
	dirOnly bool
	// prefix is the literal text before the first wildcard, compared
	// directly as git does. It matters beyond speed: a "**" right after it
	// counts as the start of a pattern (git's match_pathname), which is
	// why "a/foo**" matches a/foo/x/y.
	prefix string
	// glob is the rest of the pattern; empty when the pattern is literal.
	glob []token
	// suffix is set for the common "*.json": a basename pattern that is a
	// star and a literal, which is a suffix test (git has the same shortcut).
	suffix   string
	isSuffix bool
}

type tokenKind uint8

const (
	tokByte tokenKind = iota // one byte out of set
	tokStar                  // any run of bytes, '/' only when cross
)

type token struct {
	kind tokenKind
	set  *[256]bool // tokByte: the bytes it matches
	// cross: the star matches '/' too ("**" between slashes, or any star in
	// a basename pattern).
	cross bool
	// skipSlash: "**/" may also match nothing at all, the slash included,
	// so a/**/b matches a/b. The '/' is the next token.
	skipSlash bool
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.text }

// CompilePattern compiles a gitattributes pattern, as it stands in the file
// after unquoting. The rules are those of gitignore(5), minus negation:
//
//   - a pattern without a '/' (a trailing one aside) matches the file name
//     at any depth: *.json matches a.json and states/x/a.json;
//   - any other '/' anchors the pattern at the store's root: states/*.json
//     and /states/*.json match states/a.json only;
//   - '*' and '?' match within one segment, "**/" any number of leading
//     directories, "/**" everything inside, "/**/" zero or more directories;
//   - [a-z], [!x] and [^x] are character classes, [[:digit:]] and the other
//     POSIX classes included; a backslash makes the next character literal;
//   - a trailing '/' matches directories only (paths ending in '/'), never
//     files, so "dir/" selects no file; write "dir/**" for its contents.
//
// Matching is byte-wise and case-sensitive, as git's with core.ignoreCase off.
// Patterns git ignores ("!x", "[attr]x" macro lines) or that can never match
// (an unclosed '[', a trailing backslash, an unknown [:class:]) are refused
// with ErrInvalidPattern.
func CompilePattern(s string) (Pattern, error) {
	if err := checkPattern(s); err != nil {
		return Pattern{}, err
	}
	p := Pattern{text: s}
	body := s
	if len(body) > 1 && body[len(body)-1] == '/' {
		p.dirOnly = true
		body = body[:len(body)-1]
	}
	p.basename = !strings.Contains(body, "/")
	if !p.basename && body[0] == '/' {
		body = body[1:]
	}
	if body == "" {
		return Pattern{}, patternError(s, "pattern names no path")
	}
	n := strings.IndexAny(body, `*?[\`)
	if n < 0 {
		p.prefix = body
		return p, nil
	}
	p.prefix = body[:n]
	if p.basename && n == 0 && body[0] == '*' && !strings.ContainsAny(body[1:], `*?[\`) {
		p.suffix, p.isSuffix = body[1:], true
		return p, nil
	}
	glob, err := compileGlob(body[n:], !p.basename)
	if err != nil {
		return Pattern{}, patternError(s, err.Error())
	}
	p.glob = glob
	return p, nil
}

func checkPattern(s string) error {
	switch {
	case s == "":
		return patternError(s, "pattern is empty")
	case len(s) > MaxPatternLen:
		return patternError(s, fmt.Sprintf("pattern is %d bytes long, at most %d are allowed", len(s), MaxPatternLen))
	case s[0] == '!':
		return patternError(s, `negative patterns are ignored in git attributes (write \! for a literal '!')`)
	case len(s) > len("[attr]") && strings.HasPrefix(s, "[attr]"):
		return patternError(s, "a line starting with [attr] defines a macro, not a pattern")
	case strings.ContainsAny(s, "\x00\n"):
		return patternError(s, "pattern holds a NUL or newline, which no .gitattributes line can")
	}
	return nil
}

func patternError(s, why string) error {
	return fmt.Errorf("%w %s: %s", ErrInvalidPattern, quoteShort(s), why)
}

// compileGlob turns the wildcard part of a pattern into tokens. pathname is
// git's WM_PATHNAME: wildcards stop at '/' unless "**" stands between
// slashes. The start of g counts as a segment start (see Pattern.prefix).
func compileGlob(g string, pathname bool) ([]token, error) {
	var toks []token
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '\\':
			if i+1 == len(g) {
				return nil, errors.New("pattern ends in a lone backslash")
			}
			i++
			toks = append(toks, literal(g[i]))
		case '?':
			set := new([256]bool)
			for b := range set {
				set[b] = !pathname || b != '/'
			}
			toks = append(toks, token{kind: tokByte, set: set})
		case '[':
			set, end, err := compileClass(g, i+1)
			if err != nil {
				return nil, err
			}
			if pathname {
				set['/'] = false
			}
			toks = append(toks, token{kind: tokByte, set: set})
			i = end
		case '*':
			j := i
			for j < len(g) && g[j] == '*' {
				j++
			}
			t := token{kind: tokStar, cross: !pathname}
			if pathname && j-i >= 2 && (i == 0 || g[i-1] == '/') &&
				(j == len(g) || g[j] == '/' || strings.HasPrefix(g[j:], `\/`)) {
				t.cross = true
				t.skipSlash = j < len(g) && g[j] == '/'
			}
			toks = append(toks, t)
			i = j - 1
		default:
			toks = append(toks, literal(c))
		}
	}
	return toks, nil
}

func literal(c byte) token {
	set := new([256]bool)
	set[c] = true
	return token{kind: tokByte, set: set}
}

// compileClass reads a bracket expression whose body starts at g[i] and
// returns its byte set and the index of the closing ']'. The first member may
// be ']' itself; "a-z" is a range unless '-' comes first or last.
func compileClass(g string, i int) (*[256]bool, int, error) {
	set := new([256]bool)
	negated := false
	if i < len(g) && (g[i] == '!' || g[i] == '^') {
		negated = true
		i++
	}
	unclosed := errors.New("character class '[' is not closed")
	prev := -1 // the last single member, which can open a range
	for first := true; ; first = false {
		if i >= len(g) {
			return nil, 0, unclosed
		}
		c := g[i]
		switch {
		case c == ']' && !first:
			if negated {
				for b := range set {
					set[b] = !set[b]
				}
			}
			return set, i, nil
		case c == '\\':
			i++
			if i >= len(g) {
				return nil, 0, unclosed
			}
			set[g[i]] = true
			prev = int(g[i])
		case c == '-' && prev >= 0 && i+1 < len(g) && g[i+1] != ']':
			i++
			hi := g[i]
			if hi == '\\' {
				i++
				if i >= len(g) {
					return nil, 0, unclosed
				}
				hi = g[i]
			}
			for b := prev; b <= int(hi); b++ {
				set[b] = true
			}
			prev = -1
		case c == '[' && i+1 < len(g) && g[i+1] == ':':
			end := strings.IndexByte(g[i+2:], ']')
			if end < 0 {
				return nil, 0, unclosed
			}
			end += i + 2
			if end == i+2 || g[end-1] != ':' {
				// Not a [:name:]: the '[' is an ordinary member.
				set['['] = true
				prev = '['
				break
			}
			name := g[i+2 : end-1]
			in, ok := posixClass(name)
			if !ok {
				return nil, 0, fmt.Errorf("unknown character class [:%s:]", name)
			}
			for b := range set {
				if in(byte(b)) {
					set[b] = true
				}
			}
			prev = -1
			i = end
		default:
			set[c] = true
			prev = int(c)
		}
		i++
	}
}

// posixClass returns the members of a [:name:] class, ASCII only, as git's
// own ctype defines them (its space is " \t\n\r", without \v and \f).
func posixClass(name string) (func(byte) bool, bool) {
	alpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	graph := func(c byte) bool { return c > ' ' && c < 0x7f }
	switch name {
	case "alnum":
		return func(c byte) bool { return alpha(c) || digit(c) }, true
	case "alpha":
		return alpha, true
	case "blank":
		return func(c byte) bool { return c == ' ' || c == '\t' }, true
	case "cntrl":
		return func(c byte) bool { return c < ' ' || c == 0x7f }, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return func(c byte) bool { return c >= 'a' && c <= 'z' }, true
	case "print":
		return func(c byte) bool { return c >= ' ' && c < 0x7f }, true
	case "punct":
		return func(c byte) bool { return graph(c) && !alpha(c) && !digit(c) }, true
	case "space":
		return func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }, true
	case "upper":
		return func(c byte) bool { return c >= 'A' && c <= 'Z' }, true
	case "xdigit":
		return func(c byte) bool { return digit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }, true
	}
	return nil, false
}

// Match reports whether the pattern selects path, a clean store path (see
// CleanStorePath); a path ending in '/' names a directory.
func (p Pattern) Match(path string) bool {
	if p.text == "" {
		return false
	}
	isDir := len(path) > 0 && path[len(path)-1] == '/'
	if p.dirOnly && !isDir {
		return false
	}
	name := path
	if isDir {
		name = name[:len(name)-1]
	}
	if p.basename {
		name = name[strings.LastIndexByte(name, '/')+1:]
		if p.isSuffix {
			return strings.HasSuffix(name, p.suffix)
		}
	} else if name == "" {
		return false
	}
	rest, ok := strings.CutPrefix(name, p.prefix)
	if !ok {
		return false
	}
	if p.glob == nil {
		return rest == ""
	}
	return matchGlob(p.glob, rest)
}

// matchGlob runs the tokens as a nondeterministic automaton over the bytes
// of s: the state set holds every token position the text read so far can
// have reached, so no input backtracks and the cost stays linear in
// len(glob) * len(s).
func matchGlob(glob []token, s string) bool {
	n := len(glob)
	cur := make([]state, n+1)
	next := make([]state, n+1)
	cur[0] = entered
	closeOver(glob, cur)
	for i := 0; i < len(s); i++ {
		c := s[i]
		clear(next)
		alive := false
		for j := 0; j < n; j++ {
			if cur[j] == 0 {
				continue
			}
			t := &glob[j]
			switch t.kind {
			case tokByte:
				if t.set[c] {
					next[j+1] |= entered
					alive = true
				}
			case tokStar:
				if t.cross || c != '/' {
					next[j] |= consumed
					alive = true
				}
			}
		}
		if !alive {
			return false
		}
		closeOver(glob, next)
		cur, next = next, cur
	}
	return cur[n] != 0
}

// state records how the automaton stands at a token: a star remembers
// whether it has read bytes, since only an empty "**/" may drop its slash.
type state uint8

const (
	entered  state = 1 << iota // arrived from the token before
	consumed                   // a star that has read at least one byte
)

// closeOver adds the positions reachable without reading a byte: past a star
// (it may match nothing) and, for a "**/" that has read nothing, past its
// slash as well (a/**/b matches a/b, not a/xb). Those moves only go forward,
// so one pass in order suffices.
func closeOver(glob []token, set []state) {
	for j := range glob {
		if set[j] == 0 || glob[j].kind != tokStar {
			continue
		}
		set[j+1] |= entered
		if glob[j].skipSlash && set[j]&entered != 0 {
			set[j+2] |= entered
		}
	}
}
