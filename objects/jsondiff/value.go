package jsondiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is the JSON type of a decoded value. A change of kind at a path is
// reported as one Changed there, never as a recursion into the halves.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func kindOf(v any) kind {
	switch v.(type) {
	case map[string]any:
		return kindObject
	case []any:
		return kindArray
	case string:
		return kindString
	case json.Number:
		return kindNumber
	case bool:
		return kindBool
	default:
		return kindNull
	}
}

// normalize brings a value into the UseNumber form the rest of the package
// assumes. Values already in that form are returned as they are (no copy);
// anything else (float64, typed maps, structs) goes through encoding/json
// once, so callers that decoded without UseNumber still get a sound diff.
func normalize(v any) any {
	n, _ := normalized(v)
	return n
}

// normalized is normalize reporting whether it had to rewrite anything, so
// containers are copied only on the path to a rewritten value.
func normalized(v any) (any, bool) {
	switch t := v.(type) {
	case nil, string, json.Number, bool:
		return v, false
	case map[string]any:
		var out map[string]any
		for k, child := range t {
			n, changed := normalized(child)
			if changed && out == nil {
				out = make(map[string]any, len(t))
				for k2, c2 := range t {
					out[k2] = c2
				}
			}
			if changed {
				out[k] = n
			}
		}
		if out == nil {
			return v, false // not t: boxing a slice again would allocate
		}
		return out, true
	case []any:
		var out []any
		for i, child := range t {
			n, changed := normalized(child)
			if changed && out == nil {
				out = make([]any, len(t))
				copy(out, t)
			}
			if changed {
				out[i] = n
			}
		}
		if out == nil {
			return v, false // not t: boxing a slice again would allocate
		}
		return out, true
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v), true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return fmt.Sprint(v), true
	}
	return out, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// canonical is the compact JSON text of a value with sorted keys: the
// identity of array elements and of moved subtrees.
func canonical(v any) string {
	var b strings.Builder
	writeJSON(&b, v, "", 0)
	return b.String()
}

// pretty is the indented JSON text of a value, for full values shown in a
// review.
func pretty(v any) string {
	var b strings.Builder
	writeJSON(&b, v, "  ", 0)
	return b.String()
}

// writeJSON writes v as JSON with sorted keys, indented when indent is not
// empty. It is encoding/json without HTML escaping and without errors, and
// it escapes every character that could act on a terminal or hide text from
// a reviewer (C0/C1 controls, DEL, bidirectional overrides): the output is
// still JSON for the same value.
func writeJSON(b *strings.Builder, v any, indent string, level int) {
	newline := func(l int) {
		if indent == "" {
			return
		}
		b.WriteByte('\n')
		for range l {
			b.WriteString(indent)
		}
	}
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range sortedKeys(t) {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			writeString(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeJSON(b, t[k], indent, level+1)
		}
		newline(level)
		b.WriteByte('}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			writeJSON(b, e, indent, level+1)
		}
		newline(level)
		b.WriteByte(']')
	case string:
		writeString(b, t)
	case json.Number:
		if t == "" {
			b.WriteString("0")
			return
		}
		b.WriteString(string(t))
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		writeJSON(b, normalize(v), indent, level)
	}
}

const hexDigits = "0123456789abcdef"

func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case unsafeRune(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// unsafeRune reports characters that must not reach a terminal or a review
// page raw: controls (ANSI escapes start with one), line and paragraph
// separators, and bidirectional controls that reorder what a reader sees.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 ||
		unicode.Is(unicode.Bidi_Control, r)
}

// sanitize makes free text (key paths, lines of a text diff) safe to print:
// unsafe characters are written as \u escapes; tabs survive.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if (unsafeRune(r) && r != '\t') || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case unsafeRune(r) && r != '\t':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
