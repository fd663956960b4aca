package objects

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// isCanonical reports whether data is exactly what Encode would write for
// its content. It validates as strictly as Decode and allocates nothing
// unless two keys hold escapes, so Canonical can skip decoding entirely.
func isCanonical(data []byte) bool {
	c := checker{data: data}
	return c.value(0) && c.pos == len(data)-1 && data[c.pos] == '\n'
}

type checker struct {
	data []byte
	pos  int
}

func (c *checker) value(depth int) bool {
	if c.pos >= len(c.data) {
		return false
	}
	switch c.data[c.pos] {
	case '{':
		return c.object(depth)
	case '[':
		return c.array(depth)
	case '"':
		_, ok := c.str()
		return ok
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	default:
		end, msg := scanNumber(c.data, c.pos)
		c.pos = end
		return msg == ""
	}
}

func (c *checker) literal(word string) bool {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return false
	}
	c.pos += len(word)
	return true
}

// newline consumes "\n" and the indent of depth.
func (c *checker) newline(depth int) bool {
	n := 2 * depth
	if c.pos+1+n > len(c.data) || c.data[c.pos] != '\n' {
		return false
	}
	c.pos++
	const spaces = "                                " // 32
	for n > 0 {
		k := min(n, len(spaces))
		if string(c.data[c.pos:c.pos+k]) != spaces[:k] {
			return false
		}
		c.pos += k
		n -= k
	}
	return true
}

func (c *checker) object(depth int) bool {
	c.pos++ // '{'
	if c.pos < len(c.data) && c.data[c.pos] == '}' {
		c.pos++
		return true
	}
	if depth+1 >= maxDepth {
		return false // let Decode decide and explain
	}
	prevStart, prevEnd, prevEsc := -1, -1, false
	for {
		if !c.newline(depth + 1) {
			return false
		}
		start := c.pos
		if start >= len(c.data) || c.data[start] != '"' {
			return false
		}
		esc, ok := c.str()
		if !ok {
			return false
		}
		end := c.pos
		if prevStart >= 0 && !c.keyLess(prevStart, prevEnd, prevEsc, start, end, esc) {
			return false
		}
		prevStart, prevEnd, prevEsc = start, end, esc
		if c.pos+2 > len(c.data) || c.data[c.pos] != ':' || c.data[c.pos+1] != ' ' {
			return false
		}
		c.pos += 2
		if !c.value(depth + 1) {
			return false
		}
		if c.pos < len(c.data) && c.data[c.pos] == ',' {
			c.pos++
			continue
		}
		break
	}
	if !c.newline(depth) || c.pos >= len(c.data) || c.data[c.pos] != '}' {
		return false
	}
	c.pos++
	return true
}

func (c *checker) array(depth int) bool {
	c.pos++ // '['
	if c.pos < len(c.data) && c.data[c.pos] == ']' {
		c.pos++
		return true
	}
	if depth+1 >= maxDepth {
		return false
	}
	for {
		if !c.newline(depth+1) || !c.value(depth+1) {
			return false
		}
		if c.pos < len(c.data) && c.data[c.pos] == ',' {
			c.pos++
			continue
		}
		break
	}
	if !c.newline(depth) || c.pos >= len(c.data) || c.data[c.pos] != ']' {
		return false
	}
	c.pos++
	return true
}

// str checks a string is valid and escaped exactly as Encode escapes it, and
// reports whether it holds an escape.
func (c *checker) str() (escaped, ok bool) {
	data := c.data
	start := c.pos + 1
	nonASCII := false
	for i := start; i < len(data); i++ {
		b := data[i]
		if b-0x20 < 0x60 && b != '"' && b != '\\' { // plain printable ASCII
			continue
		}
		switch {
		case b == '"':
			if nonASCII && !utf8.Valid(data[start:i]) {
				return false, false
			}
			c.pos = i + 1
			return escaped, true
		case b < 0x20:
			return false, false
		case b >= 0x80:
			nonASCII = true
			continue
		}
		if i+1 >= len(data) {
			return false, false
		}
		escaped = true
		switch data[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			// Encode writes \u00xx only for control characters that have
			// no short escape.
			if i+5 >= len(data) || data[i+2] != '0' || data[i+3] != '0' ||
				(data[i+4] != '0' && data[i+4] != '1') || !isLowerHex(data[i+5]) {
				return false, false
			}
			switch (data[i+4]-'0')<<4 | hexValue(data[i+5]) {
			case '\b', '\f', '\n', '\r', '\t':
				return false, false
			}
			i += 5
		default:
			return false, false
		}
	}
	return false, false
}

func isLowerHex(b byte) bool { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') }

func hexValue(b byte) byte {
	if b >= 'a' {
		return b - 'a' + 10
	}
	return b - '0'
}

// keyLess reports whether the key at data[as:ae] sorts strictly before the
// key at data[bs:be] (both quoted), comparing decoded strings by bytes.
func (c *checker) keyLess(as, ae int, aesc bool, bs, be int, besc bool) bool {
	a, b := c.data[as+1:ae-1], c.data[bs+1:be-1]
	if !aesc && !besc {
		return bytes.Compare(a, b) < 0
	}
	return strings.Compare(unescapeCanonical(a), unescapeCanonical(b)) < 0
}

// unescapeCanonical decodes the inside of a string already checked to be
// canonical.
func unescapeCanonical(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			b.WriteByte(hexValue(s[i+3])<<4 | hexValue(s[i+4]))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
