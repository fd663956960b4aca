package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Draft2020 is the $schema of JSON Schema 2020-12, the draft of a schema
// that names none.
const Draft2020 = "https://json-schema.org/draft/2020-12/schema"

// drafts are the $schema values the validator implements, spelled as
// jsonschema-go requires.
var drafts = map[string]bool{
	Draft2020: true,
	"http://json-schema.org/draft-07/schema#":  true,
	"https://json-schema.org/draft-07/schema#": true,
}

// Validator is a compiled JSON Schema that names the first field a
// document breaks it at. github.com/google/jsonschema-go resolves and
// validates; this file adds what it leaves out: asserting "format",
// validating documents decoded with json.Number, refusing schemas it would
// accept unchecked, and (explain.go) locating a failure.
type Validator struct {
	root string                        // the schema's URI, with a fragment for a subschema
	docs map[string]*jsonschema.Schema // every schema document it was compiled from, by URI
	ids  map[string]idTarget           // where each $id is, by its URI
	rs   *jsonschema.Resolved
}

// idTarget is the subschema an $id names: its document's URI and the
// JSON pointer to it.
type idTarget struct{ doc, ptr string }

// NewValidator compiles the schema at uri (a fragment, as
// uri#/$defs/Item, names a subschema). load reads a schema document by its
// URI, without fragment: the root's and those its $refs name; it decides
// which may be read. A schema that names no $schema is 2020-12.
func NewValidator(uri string, load func(uri string) ([]byte, error)) (*Validator, error) {
	v := &Validator{root: uri, docs: map[string]*jsonschema.Schema{}, ids: map[string]idTarget{}}
	loadDoc := func(u string) (*jsonschema.Schema, error) {
		data, err := load(u)
		if err != nil {
			return nil, err
		}
		s, err := parseSchema(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		if err := checkSchema(s, ""); err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		v.docs[u] = s
		v.indexIDs(u, s, u, "")
		return s, nil
	}
	// The root document is read first for its draft, which jsonschema-go
	// takes from the schema it resolves: the one referring to it.
	docURI, _, _ := strings.Cut(uri, "#")
	first, err := loadDoc(docURI)
	if err != nil {
		return nil, err
	}
	rs, err := v.resolve(uri, first.Schema, func(u string) (*jsonschema.Schema, error) {
		if u == docURI && first != nil {
			s := first
			first = nil
			return s, nil
		}
		return loadDoc(u)
	})
	if err != nil {
		return nil, err
	}
	if err := v.checkCycles(); err != nil {
		return nil, err
	}
	v.rs = rs
	return v, nil
}

// indexIDs records where the $ids of s, at ptr in the document doc, are.
func (v *Validator) indexIDs(doc string, s *jsonschema.Schema, base, ptr string) {
	if s.ID != "" {
		base = resolveRef(base, s.ID)
		v.ids[base] = idTarget{doc: doc, ptr: ptr}
	}
	eachChild(s, func(c *jsonschema.Schema, seg ...string) bool {
		v.indexIDs(doc, c, base, ptr+pointerOf(seg))
		return true
	})
}

// resolve resolves the schema at uri, of the draft named, through a root
// that only refers to it, so that every document comes through load.
func (v *Validator) resolve(uri, draft string, load func(string) (*jsonschema.Schema, error)) (*jsonschema.Resolved, error) {
	wrapper := &jsonschema.Schema{Schema: draft, Ref: uri}
	return wrapper.Resolve(&jsonschema.ResolveOptions{
		Loader: func(u *url.URL) (*jsonschema.Schema, error) { return load(u.String()) },
	})
}

// doc is a document the validator was compiled from. Documents are
// shared by every resolution (explain.go), which only reads them.
func (v *Validator) doc(uri string) (*jsonschema.Schema, error) {
	s, ok := v.docs[uri]
	if !ok {
		return nil, fmt.Errorf("%s: not a schema this one was compiled from", uri)
	}
	return s, nil
}

// Validate checks a decoded document (as objects.Decode or encoding/json
// decode it); the error is a *ValidationError naming the first field, in
// document order, that breaks the schema.
func (v *Validator) Validate(doc any) error {
	doc = plain(doc)
	if err := v.rs.Validate(doc); err != nil {
		return v.explain(doc, err)
	}
	return nil
}

// parseSchema reads a schema document, with each "format" it can assert
// added as a pattern (formats.go): jsonschema-go reads "format" as an
// annotation only.
func parseSchema(data []byte) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Schema == "" {
		// Set rather than inherited: jsonschema-go would write the
		// referring schema's into a loaded one, and documents are shared
		// by resolutions that may run at once.
		s.Schema = Draft2020
	}
	addFormats(&s)
	return &s, nil
}

// jsonTypes are the names "type" may use.
var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}

// checkSchema refuses what jsonschema-go accepts without checking and
// would then apply wrongly or never: a draft it does not implement, a
// type no value has, a negative length or count. (It checks the shape of
// every keyword when it decodes a schema, and compiles the patterns.)
func checkSchema(s *jsonschema.Schema, at string) error {
	errorf := func(format string, a ...any) error {
		if at != "" {
			format = "#" + at + ": " + format
		}
		return fmt.Errorf(format, a...)
	}
	if s.Schema != "" && !drafts[s.Schema] {
		return errorf("$schema %q: only JSON Schema 2020-12 and draft-07 are supported", s.Schema)
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		if t != "" && !jsonTypes[t] {
			return errorf("type %q is not a JSON type", t)
		}
	}
	for name, n := range map[string]*int{"minLength": s.MinLength, "maxLength": s.MaxLength, "minItems": s.MinItems, "maxItems": s.MaxItems, "minProperties": s.MinProperties, "maxProperties": s.MaxProperties, "minContains": s.MinContains, "maxContains": s.MaxContains} {
		if n != nil && *n < 0 {
			return errorf("%s must not be negative", name)
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf <= 0 {
		return errorf("multipleOf must be greater than 0")
	}
	var err error
	eachChild(s, func(c *jsonschema.Schema, seg ...string) bool {
		err = checkSchema(c, at+pointerOf(seg))
		return err == nil
	})
	return err
}

// eachChild calls f with each subschema of s and the pointer segments from
// s to it (unescaped), until f returns false.
func eachChild(s *jsonschema.Schema, f func(c *jsonschema.Schema, seg ...string) bool) {
	one := func(c *jsonschema.Schema, seg ...string) bool { return c == nil || f(c, seg...) }
	list := func(cs []*jsonschema.Schema, kw string) bool {
		for i, c := range cs {
			if !one(c, kw, strconv.Itoa(i)) {
				return false
			}
		}
		return true
	}
	byName := func(m map[string]*jsonschema.Schema, kw string) bool {
		for _, k := range sortedKeys(m) {
			if !one(m[k], kw, k) {
				return false
			}
		}
		return true
	}
	_ = one(s.Not, "not") && one(s.If, "if") && one(s.Then, "then") && one(s.Else, "else") &&
		one(s.Items, "items") && one(s.AdditionalItems, "additionalItems") && one(s.Contains, "contains") &&
		one(s.UnevaluatedItems, "unevaluatedItems") && one(s.AdditionalProperties, "additionalProperties") &&
		one(s.PropertyNames, "propertyNames") && one(s.UnevaluatedProperties, "unevaluatedProperties") &&
		one(s.ContentSchema, "contentSchema") &&
		list(s.AllOf, "allOf") && list(s.AnyOf, "anyOf") && list(s.OneOf, "oneOf") &&
		list(s.PrefixItems, "prefixItems") && list(s.ItemsArray, "items") &&
		byName(s.Properties, "properties") && byName(s.PatternProperties, "patternProperties") &&
		byName(s.DependentSchemas, "dependentSchemas") && byName(s.DependencySchemas, "dependencies") &&
		byName(s.Defs, "$defs") && byName(s.Definitions, "definitions")
}

// plain is doc with its json.Numbers as int64 or float64: jsonschema-go
// reads a json.Number, a string type, as a string. Integers beyond int64
// become the nearest float64, and numbers beyond float64 its largest, so
// they keep their sign and type (number) though not their digits.
func plain(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && math.IsInf(f, 0) {
			f = math.Copysign(math.MaxFloat64, f)
		}
		return f
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plain(e)
		}
		return out
	}
	return v
}
