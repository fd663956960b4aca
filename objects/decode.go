package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrInvalidJSON is returned for bytes that are not strict JSON and for
// values that cannot be encoded as JSON.
var ErrInvalidJSON = errors.New("invalid JSON")

// maxDepth bounds nesting, as encoding/json does, so a hostile document
// cannot exhaust the stack and both codecs agree on what is valid.
const maxDepth = 10000

// SyntaxError says where and why bytes are not strict JSON. It unwraps to
// [ErrInvalidJSON].
type SyntaxError struct {
	Offset int // byte offset of the problem
	Line   int // 1-based
	Column int // 1-based, in bytes
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: line %d, column %d: %s", ErrInvalidJSON, e.Line, e.Column, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return ErrInvalidJSON }

func newSyntaxError(data []byte, off int, msg string) *SyntaxError {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: msg}
}

// Decode parses data as strict JSON into the UseNumber form. Unlike
// encoding/json it refuses what would lose data or hide damage: duplicate
// object keys, invalid UTF-8 (including escaped lone surrogates, which have
// no UTF-8 form), trailing data and empty input.
//
// Decoded strings and numbers share one copy of data, so decoding allocates
// little; holding any of them keeps that copy alive.
func Decode(data []byte) (any, error) {
	d := decoder{data: data, stack: make([]member, 0, min(64, 4+len(data)/16))}
	d.skipSpace()
	if d.pos == len(data) {
		return nil, d.errorf(d.pos, "empty input")
	}
	d.src = string(data)
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(data) {
		return nil, d.errorf(d.pos, "trailing data after the value: %s", describeByte(data[d.pos]))
	}
	return v, nil
}

type decoder struct {
	data  []byte
	src   string // string(data): strings without escapes are slices of it
	pos   int
	depth int
	// Scratch stack of the members of the containers being decoded, so
	// maps and slices are allocated once at their final size.
	stack []member
}

type member struct {
	key  string // "" for array elements
	kpos int    // offset of the key, for errors
	val  any
}

func (d *decoder) errorf(off int, format string, args ...any) error {
	return newSyntaxError(d.data, off, fmt.Sprintf(format, args...))
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.errorf(d.pos, "unexpected end of input, expecting a value")
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return s, nil
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			end, msg := scanNumber(d.data, d.pos)
			if msg != "" {
				return nil, d.errorf(end, "%s", msg)
			}
			n := json.Number(d.src[d.pos:end])
			d.pos = end
			return n, nil
		}
		return nil, d.errorf(d.pos, "invalid character %s, expecting a value", describeByte(c))
	}
}

func (d *decoder) literal(word string) error {
	if !bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		i := 0
		for d.pos+i < len(d.data) && d.data[d.pos+i] == word[i] {
			i++
		}
		if d.pos+i == len(d.data) {
			return d.errorf(d.pos+i, "unexpected end of input in literal %s", word)
		}
		return d.errorf(d.pos+i, "invalid character %s in literal %s", describeByte(d.data[d.pos+i]), word)
	}
	d.pos += len(word)
	return nil
}

// scanNumber checks the JSON number grammar from data[i] and returns the end
// of the literal, or the offset of the problem and what it is.
func scanNumber[T string | []byte](data T, i int) (int, string) {
	if data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i >= len(data):
		return i, "unexpected end of input in number"
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		digits()
	default:
		return i, "invalid character " + describeByte(data[i]) + " in number"
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return i, "number needs a digit after the decimal point"
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, "number needs a digit in the exponent"
		}
	}
	return i, ""
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > maxDepth {
		return d.errorf(d.pos, "nesting deeper than %d", maxDepth)
	}
	return nil
}

func (d *decoder) object() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++ // '{'
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return map[string]any{}, nil
	}
	base := len(d.stack)
	for {
		if d.pos >= len(d.data) {
			return nil, d.errorf(d.pos, "unexpected end of input, expecting an object key")
		}
		if d.data[d.pos] != '"' {
			return nil, d.errorf(d.pos, "invalid character %s, expecting an object key", describeByte(d.data[d.pos]))
		}
		kpos := d.pos
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.unexpected("':' after object key")
		}
		d.pos++
		d.skipSpace()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		d.stack = append(d.stack, member{key: k, kpos: kpos, val: v})
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			d.skipSpace()
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			break
		}
		return nil, d.unexpected("',' or '}' after object member")
	}
	members := d.stack[base:]
	m := make(map[string]any, len(members))
	for j, mb := range members {
		m[mb.key] = mb.val
		if len(m) != j+1 {
			return nil, d.errorf(mb.kpos, "duplicate object key %q", mb.key)
		}
	}
	clear(members) // drop references the scratch stack would keep
	d.stack = d.stack[:base]
	d.depth--
	return m, nil
}

func (d *decoder) array() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return []any{}, nil
	}
	base := len(d.stack)
	for {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		d.stack = append(d.stack, member{val: v})
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			d.skipSpace()
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			break
		}
		return nil, d.unexpected("',' or ']' after array element")
	}
	out := make([]any, len(d.stack)-base)
	for j, mb := range d.stack[base:] {
		out[j] = mb.val
	}
	clear(d.stack[base:])
	d.stack = d.stack[:base]
	d.depth--
	return out, nil
}

func (d *decoder) unexpected(want string) error {
	if d.pos >= len(d.data) {
		return d.errorf(d.pos, "unexpected end of input, expecting %s", want)
	}
	return d.errorf(d.pos, "invalid character %s, expecting %s", describeByte(d.data[d.pos]), want)
}

// str decodes the string starting at the quote at d.pos.
func (d *decoder) str() (string, error) {
	data := d.data
	start := d.pos + 1
	nonASCII := false
	for i := start; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			if nonASCII && !utf8.Valid(data[start:i]) {
				return "", d.badUTF8(start)
			}
			d.pos = i + 1
			return d.src[start:i], nil
		case c == '\\':
			return d.strEscaped(start, i, nonASCII)
		case c < 0x20:
			return "", d.errorf(i, "control character %s in string", describeByte(c))
		case c >= 0x80:
			nonASCII = true
		}
	}
	return "", d.errorf(len(data), "unexpected end of input in string")
}

// badUTF8 reports the first invalid UTF-8 sequence at or after from.
func (d *decoder) badUTF8(from int) error {
	i := from
	for i < len(d.data) {
		r, size := utf8.DecodeRune(d.data[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	return d.errorf(i, "invalid UTF-8 in string")
}

// strEscaped decodes a string that holds an escape at data[esc]; the bytes
// from start to esc are plain, and nonASCII says whether any is.
func (d *decoder) strEscaped(start, esc int, nonASCII bool) (string, error) {
	data := d.data
	buf := make([]byte, 0, esc-start+16)
	buf = append(buf, data[start:esc]...)
	i := esc
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			if nonASCII && !utf8.Valid(buf) {
				return "", d.badUTF8(start)
			}
			d.pos = i + 1
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf(i, "control character %s in string", describeByte(c))
		case c != '\\':
			if c >= 0x80 {
				nonASCII = true
			}
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(data) {
			return "", d.errorf(len(data), "unexpected end of input in string escape")
		}
		switch e := data[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(data, i+2)
			if !ok {
				return "", d.errorf(i, "invalid \\u escape")
			}
			switch {
			case r >= 0xdc00 && r < 0xe000:
				return "", d.errorf(i, "invalid UTF-8 in string: lone surrogate \\u%04x", r)
			case r >= 0xd800 && r < 0xdc00:
				lo, ok := rune(0), false
				if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					lo, ok = hex4(data, i+8)
				}
				if !ok || lo < 0xdc00 || lo >= 0xe000 {
					return "", d.errorf(i, "invalid UTF-8 in string: lone surrogate \\u%04x", r)
				}
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
			i += 6
			continue
		default:
			return "", d.errorf(i, "invalid escape \\%s in string", describeByte(e))
		}
		i += 2
	}
	return "", d.errorf(len(data), "unexpected end of input in string")
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
