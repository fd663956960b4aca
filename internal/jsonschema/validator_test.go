package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/objects"
)

// compileDocs compiles the first of these schema documents, the others
// loadable by their URIs.
func compileDocs(t testing.TB, root string, docs map[string]string) *Validator {
	t.Helper()
	v, err := NewValidator(root, func(uri string) ([]byte, error) {
		if d, ok := docs[uri]; ok {
			return []byte(d), nil
		}
		return nil, fmt.Errorf("%s: no such schema", uri)
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestValidatorNamesTheField: the field at fault is found through every
// applicator that leads to members (properties, patternProperties,
// additionalProperties, items, prefixItems) or to the same value ($ref
// in the document and to another, allOf, if/then/else, dependentSchemas),
// and the first in document order wins, array indexes counted as numbers.
func TestValidatorNamesTheField(t *testing.T) {
	v := compileDocs(t, "mem:///root.json", map[string]string{
		"mem:///root.json": `{
		  "$defs": {
		    "task": {"type": "object", "required": ["id"], "properties": {
		      "id": {"type": "string", "pattern": "^t-"},
		      "due": {"type": "string", "format": "date"}}}
		  },
		  "type": "object",
		  "properties": {
		    "tasks": {"type": "array", "items": {"$ref": "#/$defs/task"}},
		    "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false},
		    "owner": {"$ref": "other.json#/$defs/person"},
		    "kind": {"enum": ["a", "b"]},
		    "limits": {"type": "object", "patternProperties": {"^max_": {"type": "integer", "minimum": 0}}, "additionalProperties": false},
		    "mode": {"allOf": [{"type": "string"}, {"maxLength": 3}]}
		  },
		  "if": {"properties": {"kind": {"const": "b"}}, "required": ["kind"]},
		  "then": {"required": ["owner"]},
		  "dependentSchemas": {"pair": {"properties": {"kind": {"const": "a"}}}}
		}`,
		"mem:///other.json": `{"$defs": {"person": {"type": "object", "properties": {"age": {"type": "integer", "exclusiveMinimum": 0}}}}}`,
	})
	for doc, want := range map[string]string{
		`{}`: "",
		`{"tasks": [{"id": "t-1"}, {"id": "x"}]}`:         `field tasks.1.id: 'x' does not match pattern '^t-'`,
		`{"tasks": [{"id": "t-1"}, {}]}`:                  "field tasks.1.id: is required",
		`{"tasks": [{"id": "t-1", "due": "2026-02-30"}]}`: "field tasks.0.due: '2026-02-30' is not a valid date",
		`{"tasks": [{"id": "t-1", "due": "2024-02-29"}]}`: "",
		`{"pair": [1, 2]}`:                                "field pair.1: got number, want string",
		`{"pair": [1, "x", 3]}`:                           "field pair.2: is not allowed",
		`{"owner": {"age": 0}}`:                           "field owner.age: exclusiveMinimum: got 0, want 0",
		`{"owner": {"age": 1.5}}`:                         "field owner.age: got number, want integer",
		`{"kind": "b"}`:                                   "field owner: is required",
		`{"kind": "c"}`:                                   "field kind: value must be one of 'a', 'b'",
		`{"kind": "b", "pair": [1, "x"], "owner": {}}`:    "field kind: value must be 'a'",
		`{"limits": {"max_a": -1}}`:                       "field limits.max_a: minimum: got -1, want 0",
		`{"limits": {"other": 1}}`:                        "field limits.other: is not allowed",
		`{"mode": "long"}`:                                "field mode: maxLength: got 4, want 3",
		`{"mode": 7}`:                                     "field mode: got number, want string",
		`{"tasks": [{"id": "t-1"}, {"id": "t-2"}, {}, {}, {}, {}, {}, {}, {}, {}, {}]}`:                                                                                                     "field tasks.2.id: is required",
		`{"tasks": [{"id": "t-1"}, {"id": "t-2"}, {"id": "t-3"}, {"id": "t-4"}, {"id": "t-5"}, {"id": "t-6"}, {"id": "t-7"}, {"id": "t-8"}, {"id": "t-9"}, {"id": "t-10"}, {}], "mode": 7}`: "field mode: got number, want string",
		`[]`: "got array, want object",
	} {
		got := ""
		err := v.Validate(testutil.DecodeJSON(t, doc))
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("%s: not a ValidationError: %v", doc, err)
			}
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", doc, got, want)
		}
	}
}

// TestValidatorWords: what each kind of failure says, and where.
func TestValidatorWords(t *testing.T) {
	for _, c := range []struct{ schema, doc, want string }{
		{`{"properties":{"a":true},"allOf":[{"properties":{"b":true}}],"unevaluatedProperties":false}`, `{"a":1,"b":2,"c":3}`, "field c: is not allowed (unevaluatedProperties)"},
		{`{"propertyNames":{"maxLength":2}}`, `{"ok":1,"long":1}`, "field long: is not an allowed name: maxLength: got 4, want 2"},
		{`{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, "field b: is required with a"},
		{`{"contains":{"type":"string"}}`, `[1]`, "no item matches contains"},
		{`{"const":{"a":1}}`, `{"a":2}`, `value must be {"a":1}`},
		{`{"enum":["x"]}`, `"y"`, "value must be 'x'"},
		{`{"items":{"$ref":"#y"},"$defs":{"x":{"$anchor":"y","type":"string"}}}`, `[1]`, "field 0: got number, want string"},
		{`{"$anchor":"r","type":"object","properties":{"n":{"$ref":"#r"}},"required":["k"]}`, `{"k":1,"n":{"k":1,"n":{}}}`, "field n.n.k: is required"},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{}`, "matches none of anyOf"},
		{`{"oneOf":[{"type":"integer"},{"minimum":0}]}`, `5`, "matches more than one of oneOf"},
		{`{"not":{"type":"string"}}`, `"x"`, "matches what not forbids"},
		{`{"multipleOf":3,"minimum":0}`, `7`, "multipleOf: got 7, want 3"},
		{`{"type":["string","null"]}`, `1`, "got number, want string or null"},
		{`{"minItems":2}`, `[1]`, "minItems: got 1, want 2"},
		{`{"maxProperties":1}`, `{"a":1,"b":2}`, "maxProperties: got 2, want 1"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"integer"}],"additionalItems":{"type":"string"}}`, `[1,2]`, "field 1: got number, want string"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/s","type":"integer"}},"definitions":{"s":{"type":"string"}}}`, `{"a":1}`, "field a: got number, want string"},
	} {
		v := compileDocs(t, "mem:///s.json", map[string]string{"mem:///s.json": c.schema})
		if err := v.Validate(testutil.DecodeJSON(t, c.doc)); err == nil || err.Error() != c.want {
			t.Errorf("%s against %s: %v, want %q", c.doc, c.schema, err, c.want)
		}
	}
}

// TestFormats: the formats the validator asserts accept what their
// grammars allow and refuse the rest; others are annotations.
func TestFormats(t *testing.T) {
	for format, c := range map[string]struct{ good, bad []string }{
		"date-time": {
			[]string{"2026-02-09T10:00:00Z", "2024-02-29t23:59:60.123+05:30", "2000-02-29T00:00:00-00:00"},
			[]string{"yesterday", "2026-02-09", "2026-02-09T10:00:00", "2026-13-01T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-02-09T24:00:00Z", "2026-02-09 10:00:00Z"},
		},
		"date":                  {[]string{"2026-12-31", "2000-02-29"}, []string{"2026-1-1", "2100-02-29", "2026-12-32"}},
		"time":                  {[]string{"10:00:00Z", "23:59:59.5+01:00"}, []string{"10:00", "10:00:00", "25:00:00Z"}},
		"duration":              {[]string{"P1D", "PT1H30M", "P1Y2M3DT4H5M6S", "P2W", "PT0S"}, []string{"P", "PT", "1D", "P1H", "P1DT", "P1W1D"}},
		"uuid":                  {[]string{"123e4567-e89b-12d3-a456-426614174000"}, []string{"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g"}},
		"ipv4":                  {[]string{"127.0.0.1", "255.255.255.255"}, []string{"256.0.0.1", "1.2.3", "01.2.3.4"}},
		"hostname":              {[]string{"example.com", "a-b.c", "localhost"}, []string{"-a.com", "a..b", "a_b.com"}},
		"email":                 {[]string{"agent@example.com", "a.b+c@x.io"}, []string{"agent", "@example.com", "a@b@c", "a..b@x.io"}},
		"json-pointer":          {[]string{"", "/a/b~0~1", "/"}, []string{"a", "/a~2"}},
		"relative-json-pointer": {[]string{"0", "1/a", "2#"}, []string{"/a", "01", "-1"}},
		"no-such-format":        {[]string{"anything"}, nil},
	} {
		v := compileDocs(t, "mem:///f.json", map[string]string{"mem:///f.json": fmt.Sprintf(`{"properties": {"v": {"format": %q}}}`, format)})
		for _, s := range c.good {
			if err := v.Validate(map[string]any{"v": s}); err != nil {
				t.Errorf("%s: %q refused: %v", format, s, err)
			}
		}
		for _, s := range c.bad {
			err := v.Validate(map[string]any{"v": s})
			if err == nil || !strings.Contains(err.Error(), "field v: ") || !strings.Contains(err.Error(), "is not a valid "+format) {
				t.Errorf("%s: %q: %v", format, s, err)
			}
		}
		// A format only applies to strings.
		if err := v.Validate(map[string]any{"v": 7}); err != nil {
			t.Errorf("%s: a number: %v", format, err)
		}
	}
}

// TestNumbers: documents decoded with json.Number (as the store decodes
// them) validate as numbers, large ones too.
func TestNumbers(t *testing.T) {
	v := compileDocs(t, "mem:///n.json", map[string]string{"mem:///n.json": `{"properties": {"i": {"type": "integer"}, "n": {"type": "number", "maximum": 10}, "e": {"enum": [1, 2.5]}}}`})
	for doc, ok := range map[string]bool{
		`{"i": 1, "n": 2.5, "e": 1}`:            true,
		`{"i": 2.0}`:                            true,
		`{"i": 123456789012345678901234567890}`: true,
		`{"n": -1e400}`:                         true,
		`{"n": 1e400}`:                          false,
		`{"i": 1.5}`:                            false,
		`{"i": "1"}`:                            false,
		`{"e": 2.5}`:                            true,
		`{"e": 2}`:                              false,
		`{"n": 10.0001}`:                        false,
	} {
		if err := v.Validate(testutil.DecodeJSON(t, doc)); (err == nil) != ok {
			t.Errorf("%s: %v", doc, err)
		}
	}
	var std any
	json.Unmarshal([]byte(`{"i": 3}`), &std)
	if err := v.Validate(std); err != nil {
		t.Errorf("a document decoded by encoding/json: %v", err)
	}
}

// TestSchemasRefused: a schema the validator would apply wrongly or never
// is refused when it is compiled.
func TestSchemasRefused(t *testing.T) {
	for _, s := range []string{
		`{"$schema": "http://json-schema.org/draft-04/schema#"}`,
		`{"properties": {"a": {"$schema": "https://json-schema.org/draft/2019-09/schema"}}}`,
		`{"type": "strnig"}`,
		`{"type": ["string", 7]}`,
		`{"items": {"minLength": -1}}`,
		`{"multipleOf": 0}`,
		`{"pattern": "("}`,
		`{"patternProperties": {"(": {}}}`,
		`{"required": "a"}`,
		`{"$ref": "#/$defs/missing"}`,
		`{"$ref": "missing.json"}`,
		`not json`,
	} {
		_, err := NewValidator("mem:///s.json", func(uri string) ([]byte, error) {
			if uri == "mem:///s.json" {
				return []byte(s), nil
			}
			return nil, errors.New("no such schema")
		})
		if err == nil {
			t.Errorf("compiled %s", s)
		}
	}
}

// TestRefCycles: a schema that would apply itself to the same value
// without end is refused when compiled (the validator would overflow the
// stack, which ends the process); recursion through members is allowed.
func TestRefCycles(t *testing.T) {
	compile := func(docs map[string]string) error {
		_, err := NewValidator("mem:///a.json", func(uri string) ([]byte, error) {
			if d, ok := docs[uri]; ok {
				return []byte(d), nil
			}
			return nil, errors.New("no such schema")
		})
		return err
	}
	for _, docs := range []map[string]string{
		{"mem:///a.json": `{"$ref": "#"}`},
		{"mem:///a.json": `{"anyOf": [{"type": "string"}, {"not": {"$ref": "#"}}]}`},
		{"mem:///a.json": `{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"if": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}`},
		{"mem:///a.json": `{"$ref": "b.json"}`, "mem:///b.json": `{"allOf": [{"$ref": "a.json"}]}`},
		{"mem:///a.json": `{"$defs": {"x": {"$id": "x.json", "oneOf": [{"$ref": "x.json"}]}}}`},
		{"mem:///a.json": `{"$defs": {"x": {"$anchor": "here", "dependentSchemas": {"k": {"$ref": "#here"}}}}}`},
		{"mem:///a.json": `{"$dynamicAnchor": "m", "allOf": [{"$dynamicRef": "#m"}]}`},
	} {
		if err := compile(docs); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("%v: %v", docs, err)
		}
	}
	for _, docs := range []map[string]string{
		{"mem:///a.json": `{"properties": {"next": {"$ref": "#"}}, "items": {"$ref": "#"}}`},
		{"mem:///a.json": `{"$ref": "b.json"}`, "mem:///b.json": `{"properties": {"a": {"$ref": "a.json"}}}`},
		{"mem:///a.json": `{"$defs": {"x": {"type": "string"}}, "allOf": [{"$ref": "#/$defs/x"}, {"$ref": "#/$defs/x"}]}`},
	} {
		if err := compile(docs); err != nil {
			t.Errorf("%v: %v", docs, err)
		}
	}
}

// TestValidateConcurrently: one compiled schema validates, and explains
// failures, from many goroutines at once (the server shares schemas).
func TestValidateConcurrently(t *testing.T) {
	v := compileDocs(t, "mem:///c.json", map[string]string{"mem:///c.json": `{"$defs": {"x": {"type": "integer"}}, "properties": {"a": {"type": "array", "items": {"$ref": "#/$defs/x"}}}}`})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				err := v.Validate(map[string]any{"a": []any{1, 2, fmt.Sprint(g, i)}})
				if err == nil || err.Error() != "field a.2: got string, want integer" {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// FuzzValidate: any schema compiles or is refused, and any document then
// validates or is refused with a ValidationError, without a panic.
func FuzzValidate(f *testing.F) {
	f.Add(`{"type":"object","required":["a"],"properties":{"a":{"enum":[1,"x"]}}}`, `{"a":2}`)
	f.Add(`{"$defs":{"t":{"items":{"$ref":"#"}}},"$ref":"#/$defs/t"}`, `[[[1]]]`)
	f.Add(`{"allOf":[{"if":{"const":1},"then":false}],"anyOf":[{"format":"date"}]}`, `"x"`)
	f.Add(`{"patternProperties":{"^a":{"type":"string"}},"additionalProperties":{"minimum":3}}`, `{"ab":1,"b":2}`)
	f.Fuzz(func(t *testing.T, schema, doc string) {
		v, err := NewValidator("mem:///s.json", func(uri string) ([]byte, error) {
			if uri == "mem:///s.json" {
				return []byte(schema), nil
			}
			return nil, errors.New("no such schema")
		})
		if err != nil {
			return
		}
		d, err := objects.Decode([]byte(doc))
		if err != nil {
			return
		}
		if err := v.Validate(d); err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("not a ValidationError: %v", err)
			}
		}
	})
}

// BenchmarkValidate: a valid document, and one refused (its field found
// by explain), against a schema with a $ref into its $defs.
func BenchmarkValidate(b *testing.B) {
	v := compileDocs(b, "mem:///b.json", map[string]string{"mem:///b.json": `{"$defs": {"item": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 0}, "at": {"type": "string", "format": "date-time"}}}}, "type": "object", "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}}}`})
	items := make([]any, 20)
	for i := range items {
		items[i] = map[string]any{"id": json.Number(fmt.Sprint(i)), "at": "2026-02-09T10:00:00Z"}
	}
	valid := map[string]any{"items": items}
	bad := map[string]any{"items": append(append([]any(nil), items...), map[string]any{"id": json.Number("-1")})}
	b.Run("valid", func(b *testing.B) {
		for range b.N {
			if err := v.Validate(valid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refused", func(b *testing.B) {
		for range b.N {
			if err := v.Validate(bad); err == nil || !strings.Contains(err.Error(), "items.20.id") {
				b.Fatal(err)
			}
		}
	})
}
