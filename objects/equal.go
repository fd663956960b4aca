package objects

import (
	"encoding/json"
	"strconv"
)

// Equal reports whether a and b are the same JSON value, which is exactly
// when they have the same canonical encoding. Numbers are therefore equal
// when their literals are: 1 and 1.0 differ, as do 1e3 and 1000. The store
// keeps literals byte-exact, so a change of literal is a change of content
// that a diff must show and a merge must not drop. A float64, int or int64
// equals the json.Number that Encode would write for it.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	x, ok := numberLiteral(a)
	if !ok {
		return false
	}
	y, ok := numberLiteral(b)
	return ok && x == y
}

func numberLiteral(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		var e encoder
		if e.float(x) != nil {
			return "", false
		}
		return string(e.buf), true
	}
	return "", false
}
