package policy

import (
	"strings"
	"testing"
)

// TestParseNamesTheFieldAtFault: a malformed policy is refused in the
// file's words: the field and the JSON it must be.
func TestParseNamesTheFieldAtFault(t *testing.T) {
	for doc, want := range map[string]string{
		`{"rules": 5}`:                       "rules: a number where an array was expected",
		`{"rules": [{"paths": "x"}]}`:        "rules.paths: a string where an array was expected",
		`{"default": 1, "rules": []}`:        "default: a number where a string was expected",
		`{"roles": {"r": "a"}, "rules": []}`: "roles: a string where an array was expected",
		`{"rules": [[]]}`:                    "rules: an array where an object was expected",
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", doc, err, want)
		}
	}
}
