package jsonschema

import (
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// Formats asserted, as patterns of their grammars (RFC 3339 for dates,
// times and durations, RFC 4122 for UUIDs, RFC 1123 for host names,
// RFC 6901 for JSON pointers). Other formats are annotations, as JSON
// Schema 2020-12 makes every format by default.
var formatPatterns = func() map[string]string {
	const (
		leap   = `(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)`
		date   = `(?:\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))|` + leap + `-02-29)`
		time   = `(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)`
		durT   = `T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)`
		durD   = `(?:\d+D|\d+M(?:\d+D)?|\d+Y(?:\d+M(?:\d+D)?)?)(?:` + durT + `)?`
		octet  = `(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`
		label  = `[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?`
		host   = label + `(?:\.` + label + `)*`
		atom   = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
		hexes4 = `[0-9a-fA-F]{4}`
	)
	return map[string]string{
		"date-time":             `^` + date + `[Tt]` + time + `$`,
		"date":                  `^` + date + `$`,
		"time":                  `^` + time + `$`,
		"duration":              `^P(?:` + durD + `|` + durT + `|\d+W)$`,
		"uuid":                  `^` + hexes4 + hexes4 + `-` + hexes4 + `-` + hexes4 + `-` + hexes4 + `-` + hexes4 + hexes4 + hexes4 + `$`,
		"ipv4":                  `^` + octet + `(?:\.` + octet + `){3}$`,
		"hostname":              `^` + host + `\.?$`,
		"email":                 `^` + atom + `(?:\.` + atom + `)*@` + host + `$`,
		"json-pointer":          `^(?:/(?:[^~/]|~[01])*)*$`,
		"relative-json-pointer": `^(?:0|[1-9]\d*)(?:#|(?:/(?:[^~/]|~[01])*)*)$`,
	}
}()

// addFormats adds to each subschema of s with a format it asserts an
// allOf member holding the format's pattern; the explanation of a failure
// reads it back as the format (formatOf).
func addFormats(s *jsonschema.Schema) {
	if p, ok := formatPatterns[s.Format]; ok {
		s.AllOf = append(s.AllOf, &jsonschema.Schema{Pattern: p})
	}
	eachChild(s, func(c *jsonschema.Schema, _ ...string) bool {
		addFormats(c)
		return true
	})
}

// formatOf is the format a subschema added by addFormats asserts, given
// the schema it was added to.
func formatOf(parent, s *jsonschema.Schema) (string, bool) {
	p, ok := formatPatterns[parent.Format]
	if !ok || s.Pattern != p {
		return "", false
	}
	return parent.Format, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
