package verbiage

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidKey is wrapped by every *KeyError: an object key that is not a
// verbiage key and cannot be normalized into one. Callers map it to the usage
// exit code (the state document specification: 2).
var ErrInvalidKey = errors.New("invalid key")

// keyRule is appended to character errors so that the message alone tells a
// user how to fix the key.
const keyRule = "(keys are A-Z words joined by dashes)"

// KeyError reports one offending object key: the key as given, the path of
// the object that holds it (empty for the document root or a lone key), and
// why it was refused.
type KeyError struct {
	Key    string
	Path   Path
	Reason string
}

func (e *KeyError) Error() string {
	var b strings.Builder
	b.WriteString("invalid key ")
	b.WriteString(quoteShort(e.Key))
	if len(e.Path) > 0 {
		b.WriteString(" at ")
		b.WriteString(e.Path.String())
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap lets errors.Is(err, ErrInvalidKey) see through the detail.
func (e *KeyError) Unwrap() error { return ErrInvalidKey }

// ValidKey reports whether s matches ^[A-Z]+(-[A-Z]+)*$.
func ValidKey(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
		case c == '-':
			if s[i-1] == '-' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// NormalizeKey turns user input into a verbiage key: surrounding white space
// is trimmed, ASCII letters are upper-cased, and every run of spaces, tabs and
// dashes between words becomes one dash ("my  goal" and "My-- Goal" both give
// MY-GOAL). Anything else is refused rather than dropped, because a silently
// altered key would address a different value than the user meant. The result
// always satisfies ValidKey, and NormalizeKey(NormalizeKey(s)) is the same key.
func NormalizeKey(s string) (string, error) {
	if ValidKey(s) {
		return s, nil
	}
	if !utf8.ValidString(s) {
		return "", &KeyError{Key: s, Reason: "key is not valid UTF-8"}
	}
	// Positions in messages count runes of the key as given, so the leading
	// white space that is trimmed still counts.
	pos := utf8.RuneCountInString(s) - utf8.RuneCountInString(strings.TrimLeftFunc(s, unicode.IsSpace))
	t := strings.TrimSpace(s)
	if t == "" {
		return "", &KeyError{Key: s, Reason: "key is empty"}
	}
	var (
		b       strings.Builder
		sep     bool // a separator run is pending
		sepPos  int  // where that run started
		started bool
	)
	b.Grow(len(t))
	for _, r := range t {
		switch {
		case r == ' ' || r == '\t' || r == '-':
			if !started {
				return "", &KeyError{Key: s, Reason: fmt.Sprintf("key starts with a dash at position %d %s", pos, keyRule)}
			}
			if !sep {
				sep, sepPos = true, pos
			}
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			if sep {
				b.WriteByte('-')
				sep = false
			}
			b.WriteByte(byte(unicode.ToUpper(r)))
			started = true
		default:
			return "", &KeyError{Key: s, Reason: charProblem(r, pos)}
		}
		pos++
	}
	if sep {
		return "", &KeyError{Key: s, Reason: fmt.Sprintf("key ends with a dash at position %d %s", sepPos, keyRule)}
	}
	return b.String(), nil
}

// charProblem names a character that no key may hold.
func charProblem(r rune, pos int) string {
	var what string
	switch {
	case r == '_':
		what = "underscore"
	case r >= '0' && r <= '9':
		what = "digit"
	case unicode.IsSpace(r):
		what = "white space"
	case unicode.IsControl(r):
		what = "control character"
	case unicode.IsLetter(r):
		what = "non-ASCII letter"
	default:
		what = "character"
	}
	return fmt.Sprintf("%s %q at position %d is not allowed %s", what, r, pos, keyRule)
}

// strictProblem explains why s, which is not a valid key, is refused by the
// strict check; stored documents must already hold normalized keys.
func strictProblem(s string) string {
	if s == "" {
		return "key is empty"
	}
	if !utf8.ValidString(s) {
		return "key is not valid UTF-8"
	}
	pos := 0
	prevDash := false
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			prevDash = false
		case r == '-':
			switch {
			case pos == 0:
				return fmt.Sprintf("key starts with a dash %s", keyRule)
			case prevDash:
				return fmt.Sprintf("repeated dash at position %d %s", pos, keyRule)
			}
			prevDash = true
		case r >= 'a' && r <= 'z':
			return fmt.Sprintf("lowercase letter %q at position %d is not allowed %s", r, pos, keyRule)
		default:
			return charProblem(r, pos)
		}
		pos++
	}
	return fmt.Sprintf("key ends with a dash %s", keyRule)
}

// NormalizeKeys returns a copy of a decoded JSON value in which every object
// key, at any depth, is normalized with NormalizeKey. Two keys of one object
// that normalize to the same key are refused, since keeping either would
// silently lose the other's value. The input is not modified. Error paths
// name keys as the input spelled them, so the user can find them.
func NormalizeKeys(v any) (any, error) {
	return walkKeys(v, nil, true)
}

// ValidateKeys checks, without normalizing, that every object key at any
// depth is a verbiage key. Keys are visited in sorted order, so the error
// always names the same first offending key.
func ValidateKeys(v any) error {
	// Stored documents are nearly always valid: check without sorting or
	// building paths first, and walk in order only to report an error.
	if keysValid(v) {
		return nil
	}
	_, err := walkKeys(v, nil, false)
	return err
}

// keysValid reports whether every key in v is valid and every container is
// one of decoded JSON's, in any order and without allocating.
func keysValid(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !ValidKey(k) || !keysValid(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !keysValid(e) {
				return false
			}
		}
	case nil, string, bool, json.Number, float64:
	default:
		return false
	}
	return true
}

// walkKeys is NormalizeKeys (normalize true, returns the copy) and
// ValidateKeys (normalize false, returns v unchanged).
func walkKeys(v any, at Path, normalize bool) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		var (
			out  map[string]any
			from map[string]string // normalized key -> key as given
		)
		if normalize {
			out = make(map[string]any, len(x))
			from = make(map[string]string, len(x))
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			nk := k
			if normalize {
				var err error
				if nk, err = NormalizeKey(k); err != nil {
					return nil, &KeyError{Key: k, Path: at, Reason: err.(*KeyError).Reason}
				}
				if prev, dup := from[nk]; dup {
					return nil, &KeyError{Key: k, Path: at, Reason: fmt.Sprintf(
						"keys %s and %s both normalize to %q", quoteShort(prev), quoteShort(k), nk)}
				}
				from[nk] = k
			} else if !ValidKey(k) {
				return nil, &KeyError{Key: k, Path: at, Reason: strictProblem(k)}
			}
			child, err := walkKeys(x[k], at.Child(k), normalize)
			if err != nil {
				return nil, err
			}
			if normalize {
				out[nk] = child
			}
		}
		if normalize {
			return out, nil
		}
		return v, nil
	case []any:
		var out []any
		if normalize {
			out = make([]any, len(x))
		}
		for i, e := range x {
			child, err := walkKeys(e, at.Child(strconv.Itoa(i)), normalize)
			if err != nil {
				return nil, err
			}
			if normalize {
				out[i] = child
			}
		}
		if normalize {
			return out, nil
		}
		return v, nil
	case nil, string, bool:
		return v, nil
	}
	// Scalars of any other type (json.Number, float64 without UseNumber)
	// pass. A container of another type is a caller's bug: walking past it
	// would let keys through unchecked, so say so instead.
	switch reflect.TypeOf(v).Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct, reflect.Pointer,
		reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return nil, fmt.Errorf("verbiage: unsupported value of type %T at %q: want decoded JSON", v, at.String())
	}
	return v, nil
}

// NormalizePath normalizes every segment of p that names an object key. Array
// indexes, "-" (append) and wildcards are kept as they are, so a path typed as
// goals.my goal.notes.0 addresses GOALS.MY-GOAL.NOTES.0.
func NormalizePath(p Path) (Path, error) {
	out := make(Path, len(p))
	for i, s := range p {
		if _, isIndex := s.Index(); isIndex || s.Wildcard || s.Append() {
			out[i] = s
			continue
		}
		k, err := NormalizeKey(s.Key)
		if err != nil {
			return nil, &KeyError{Key: s.Key, Path: slices.Clone(p[:i]), Reason: err.(*KeyError).Reason}
		}
		out[i] = Segment{Key: k}
	}
	return out, nil
}

// quoteShort quotes s for a message, eliding the middle of a very long value
// so that one bad input cannot flood a log line.
func quoteShort(s string) string {
	const max = 80
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max/2]) + fmt.Sprintf("...(%d bytes)", len(s))
}
