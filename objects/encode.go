package objects

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Encode returns the canonical JSON encoding of v:
//
//   - UTF-8; object keys sorted by byte order;
//   - two-space indent, every array element and object member on its own
//     line, "key": value with one space after the colon;
//   - {} and [] for empty containers; a final newline;
//   - strings escape only '"', '\\' and control characters (as \b \f \n \r
//     \t, else \u00xx); '<', '>', '&', '/' and all other characters stay
//     literal;
//   - numbers are written exactly as their literal.
//
// v must be built from map[string]any, []any, string, bool, nil,
// json.Number, float64, int or int64. Strings must be valid UTF-8, floats
// finite and json.Number a valid literal; anything else is an error wrapping
// [ErrInvalidJSON] that names the key path of the offending value.
func Encode(v any) ([]byte, error) {
	return encodeHint(v, 256)
}

func encodeHint(v any, size int) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, size)}
	if err := e.value(v, 0); err != nil {
		return nil, err.finish()
	}
	return append(e.buf, '\n'), nil
}

// Canonical returns the canonical encoding of the JSON in data, which must be
// valid by [Decode]'s rules. When data is already canonical it is returned as
// is, without copying: the store canonicalizes every write, and most writes
// are already canonical.
func Canonical(data []byte) ([]byte, error) {
	if isCanonical(data) {
		return data, nil
	}
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return encodeHint(v, len(data)+len(data)/2)
}

type encoder struct {
	buf  []byte
	keys []string // scratch stack for sorting each object's keys
}

// encodeError collects the key path while the encoder unwinds, so the cost
// of naming the path is paid only on error.
type encodeError struct {
	rev []string // path segments, innermost first
	msg string
}

func (e *encodeError) at(key string) *encodeError {
	e.rev = append(e.rev, key)
	return e
}

func (e *encodeError) finish() error {
	if len(e.rev) == 0 {
		return fmt.Errorf("%w: at the root: %s", ErrInvalidJSON, e.msg)
	}
	p := make(verbiage.Path, 0, len(e.rev))
	for i := len(e.rev) - 1; i >= 0; i-- {
		p = append(p, verbiage.Segment{Key: e.rev[i]})
	}
	return fmt.Errorf("%w: at key path %q: %s", ErrInvalidJSON, p.String(), e.msg)
}

func (e *encoder) indent(depth int) {
	const spaces = "                                " // 32
	for n := 2 * depth; n > 0; {
		k := min(n, len(spaces))
		e.buf = append(e.buf, spaces[:k]...)
		n -= k
	}
}

func (e *encoder) value(v any, depth int) *encodeError {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case string:
		return e.str(x)
	case json.Number:
		if !validNumber(string(x)) {
			return &encodeError{msg: fmt.Sprintf("invalid number literal %q", string(x))}
		}
		e.buf = append(e.buf, x...)
	case float64:
		return e.float(x)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case map[string]any:
		if len(x) == 0 {
			e.buf = append(e.buf, "{}"...)
			return nil
		}
		if depth >= maxDepth {
			return &encodeError{msg: fmt.Sprintf("nesting deeper than %d (a cycle?)", maxDepth)}
		}
		base := len(e.keys)
		for k := range x {
			e.keys = append(e.keys, k)
		}
		// keys stays valid if a nested object grows e.keys into a new array:
		// the old array still holds this object's keys.
		keys := e.keys[base:]
		slices.Sort(keys)
		e.buf = append(e.buf, '{', '\n')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',', '\n')
			}
			e.indent(depth + 1)
			if err := e.str(k); err != nil {
				err.msg = "key: " + err.msg
				return err
			}
			e.buf = append(e.buf, ':', ' ')
			if err := e.value(x[k], depth+1); err != nil {
				return err.at(k)
			}
		}
		e.keys = e.keys[:base]
		e.buf = append(e.buf, '\n')
		e.indent(depth)
		e.buf = append(e.buf, '}')
	case []any:
		if len(x) == 0 {
			e.buf = append(e.buf, "[]"...)
			return nil
		}
		if depth >= maxDepth {
			return &encodeError{msg: fmt.Sprintf("nesting deeper than %d (a cycle?)", maxDepth)}
		}
		e.buf = append(e.buf, '[', '\n')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',', '\n')
			}
			e.indent(depth + 1)
			if err := e.value(el, depth+1); err != nil {
				return err.at(strconv.Itoa(i))
			}
		}
		e.buf = append(e.buf, '\n')
		e.indent(depth)
		e.buf = append(e.buf, ']')
	default:
		return &encodeError{msg: fmt.Sprintf("unsupported type %T", v)}
	}
	return nil
}

// float formats like encoding/json (the shortest representation, ES6
// style), so a float64 built in Go encodes as JavaScript would print it.
func (e *encoder) float(f float64) *encodeError {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &encodeError{msg: fmt.Sprintf("unsupported number %v", f)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, 64)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		n := len(e.buf)
		if n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
			e.buf[n-2] = e.buf[n-1]
			e.buf = e.buf[:n-1]
		}
	}
	return nil
}

const hexDigits = "0123456789abcdef"

func (e *encoder) str(s string) *encodeError {
	e.buf = append(e.buf, '"')
	nonASCII := false
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			nonASCII = true
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		e.buf = append(e.buf, s[start:i]...)
		switch c {
		case '"', '\\':
			e.buf = append(e.buf, '\\', c)
		case '\b':
			e.buf = append(e.buf, '\\', 'b')
		case '\f':
			e.buf = append(e.buf, '\\', 'f')
		case '\n':
			e.buf = append(e.buf, '\\', 'n')
		case '\r':
			e.buf = append(e.buf, '\\', 'r')
		case '\t':
			e.buf = append(e.buf, '\\', 't')
		default:
			e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	if nonASCII && !utf8.ValidString(s) {
		return &encodeError{msg: fmt.Sprintf("invalid UTF-8 in string %q", s)}
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
	return nil
}

func validNumber(s string) bool {
	if s == "" {
		return false
	}
	end, msg := scanNumber(s, 0)
	return msg == "" && end == len(s)
}
