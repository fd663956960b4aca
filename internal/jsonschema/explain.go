package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonschema-go says that a document breaks a schema, and why, but not
// where in the document: its error is the first failure its walk met, in
// its own order. explain finds the first field in document order that
// breaks the schema by following the schema down the document: at each
// subschema it asks the validator whether the subschema's own keywords
// fail (the subschema with its applicators removed), which of the
// subschemas that apply to the same value fail ($ref, allOf, then/else,
// dependentSchemas), and which of the values' members fail the subschemas
// that apply to them (properties, patternProperties,
// additionalProperties, prefixItems, items), and goes down those. A
// subschema is checked alone by resolving a schema that only refers to it
// (uri#/json/pointer). This runs only for a document already refused.

// place is a subschema: where it is, for checking it alone, and what it
// says, for going down.
type place struct {
	doc    string             // URI of its document
	ptr    string             // JSON pointer from the document's root
	base   string             // base URI its $ref resolves against
	s      *jsonschema.Schema // it
	parent *jsonschema.Schema // the subschema holding it, if any
}

// violation is where a document breaks a schema, and why.
type violation struct {
	at     []pathSeg // where it sorts: a missing field sorts at its object
	loc    []string  // the field at fault
	reason string
}

// pathSeg is a step into a document, an array index or an object key:
// indexes sort as numbers.
type pathSeg struct {
	key   string
	index int // -1 for a key
}

// maxExplainDepth bounds the walk down subschemas that apply to one value
// ($ref cycles).
const maxExplainDepth = 64

type explainer struct {
	v      *Validator
	probes map[string]*jsonschema.Resolved // by subschema URI, and " bare"
	res    map[string]*regexp.Regexp
}

// explain turns the validator's error for doc into a *ValidationError
// naming the first field at fault.
func (v *Validator) explain(doc any, verr error) error {
	x := &explainer{v: v, probes: map[string]*jsonschema.Resolved{}, res: map[string]*regexp.Regexp{}}
	p, err := x.place(v.root, "", nil)
	if err == nil {
		if vi, ok := x.walk(p, doc, nil, nil, 0); ok {
			return &ValidationError{Loc: vi.loc, Field: JoinField(vi.loc), Reason: vi.reason}
		}
	}
	return &ValidationError{Reason: innermost(verr).Error()}
}

// place finds the subschema a reference names, resolved against base.
func (x *explainer) place(ref, base string, parent *jsonschema.Schema) (place, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return place{}, err
	}
	if base != "" {
		b, err := url.Parse(base)
		if err != nil {
			return place{}, err
		}
		u = b.ResolveReference(u)
	}
	frag := u.Fragment
	u.Fragment = ""
	doc, start := u.String(), ""
	resBase := doc // the base of the resource the reference lands in
	if t, ok := x.v.ids[doc]; ok {
		doc, start = t.doc, t.ptr
	}
	var root *jsonschema.Schema
	if root, err = x.v.doc(doc); err != nil {
		return place{}, err
	}
	node := nodeAt(root, start)
	if node == nil {
		return place{}, fmt.Errorf("%s: no subschema at %s", ref, start)
	}
	if node.ID != "" {
		resBase = resolveRef(resBase, node.ID)
	}
	segs := pointerSegs(frag)
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if segs = anchorSegs(node, frag); segs == nil {
			return place{}, fmt.Errorf("%s: no anchor %s", ref, frag)
		}
	}
	p := place{doc: doc, ptr: start, base: resBase, s: node, parent: parent}
	if !follow(node, segs, func(c *jsonschema.Schema, seg []string) { p = x.child(p, c, seg...) }) {
		return place{}, fmt.Errorf("%s: no subschema at %s", ref, frag)
	}
	return p, nil
}

// child is the place of c, a subschema of p.s at the pointer segments seg.
func (x *explainer) child(p place, c *jsonschema.Schema, seg ...string) place {
	ptr := p.ptr + pointerOf(seg)
	base := p.base
	if c.ID != "" {
		base = resolveRef(base, c.ID)
	}
	return place{doc: p.doc, ptr: ptr, base: base, s: c, parent: p.s}
}

// errProbe: a subschema could not be checked alone (an anchor defined
// in a part bare removed); walk then learns nothing from it.
var errProbe = errors.New("cannot check the subschema alone")

// fails is the validator's error if inst breaks the subschema at p alone
// (bare: its own keywords only, its applicators removed), nil if it does
// not or cannot tell.
func (x *explainer) fails(p place, bare bool, inst any) error {
	if err := x.check(p, bare, inst); err != nil && !errors.Is(err, errProbe) {
		return err
	}
	return nil
}

func (x *explainer) check(p place, bare bool, inst any) error {
	u, err := url.Parse(p.doc)
	if err != nil {
		return fmt.Errorf("%w: %v", errProbe, err)
	}
	u.Fragment = p.ptr
	key := u.String()
	if bare {
		key += " bare"
	}
	rs, ok := x.probes[key]
	if !ok {
		rs, err = x.v.resolve(u.String(), x.v.docs[p.doc].Schema, func(d string) (*jsonschema.Schema, error) {
			s, err := x.v.doc(d)
			if err == nil && bare && d == p.doc {
				s = bareAt(s, pointerSegs(p.ptr))
			}
			return s, err
		})
		if err != nil {
			return fmt.Errorf("%w: %v", errProbe, err)
		}
		x.probes[key] = rs
	}
	return rs.Validate(inst)
}

// bareAt returns the schema s with the subschema at the pointer
// segments segs stripped of the keywords that apply subschemas to its
// value or its members, which walk follows; what it shares with s is
// unchanged.
func bareAt(s *jsonschema.Schema, segs []string) *jsonschema.Schema {
	c := *s
	if len(segs) == 0 {
		c.Ref = ""
		c.AllOf = nil
		c.If, c.Then, c.Else = nil, nil, nil
		c.DependentSchemas, c.DependencySchemas = nil, nil
		c.Properties, c.PatternProperties, c.AdditionalProperties = nil, nil, nil
		c.PrefixItems, c.Items, c.ItemsArray, c.AdditionalItems = nil, nil, nil, nil
		c.UnevaluatedItems, c.UnevaluatedProperties = nil, nil
		return &c
	}
	var next *jsonschema.Schema
	var seg []string
	eachChild(s, func(ch *jsonschema.Schema, sg ...string) bool {
		if len(sg) <= len(segs) && slicesEqual(sg, segs[:len(sg)]) {
			next, seg = ch, sg
			return false
		}
		return true
	})
	if next == nil {
		return s
	}
	setChild(&c, bareAt(next, segs[len(seg):]), seg)
	return &c
}

// setChild puts c at the pointer segments seg of s, a copy: the map or
// slice it changes is copied too.
func setChild(s *jsonschema.Schema, c *jsonschema.Schema, seg []string) {
	inMap := func(m map[string]*jsonschema.Schema) map[string]*jsonschema.Schema {
		out := make(map[string]*jsonschema.Schema, len(m))
		for k, v := range m {
			out[k] = v
		}
		out[seg[1]] = c
		return out
	}
	inList := func(l []*jsonschema.Schema) []*jsonschema.Schema {
		out := append([]*jsonschema.Schema(nil), l...)
		if i, err := strconv.Atoi(seg[1]); err == nil && i >= 0 && i < len(out) {
			out[i] = c
		}
		return out
	}
	if len(seg) == 1 {
		for _, f := range []struct {
			kw string
			p  **jsonschema.Schema
		}{{"not", &s.Not}, {"if", &s.If}, {"then", &s.Then}, {"else", &s.Else}, {"items", &s.Items}, {"additionalItems", &s.AdditionalItems}, {"contains", &s.Contains}, {"unevaluatedItems", &s.UnevaluatedItems}, {"additionalProperties", &s.AdditionalProperties}, {"propertyNames", &s.PropertyNames}, {"unevaluatedProperties", &s.UnevaluatedProperties}, {"contentSchema", &s.ContentSchema}} {
			if f.kw == seg[0] {
				*f.p = c
			}
		}
		return
	}
	switch seg[0] {
	case "allOf":
		s.AllOf = inList(s.AllOf)
	case "anyOf":
		s.AnyOf = inList(s.AnyOf)
	case "oneOf":
		s.OneOf = inList(s.OneOf)
	case "prefixItems":
		s.PrefixItems = inList(s.PrefixItems)
	case "items":
		s.ItemsArray = inList(s.ItemsArray)
	case "properties":
		s.Properties = inMap(s.Properties)
	case "patternProperties":
		s.PatternProperties = inMap(s.PatternProperties)
	case "dependentSchemas":
		s.DependentSchemas = inMap(s.DependentSchemas)
	case "dependencies":
		s.DependencySchemas = inMap(s.DependencySchemas)
	case "$defs":
		s.Defs = inMap(s.Defs)
	case "definitions":
		s.Definitions = inMap(s.Definitions)
	}
}

// walk finds the first violation under p of inst at loc, which breaks p.
func (x *explainer) walk(p place, inst any, loc []string, at []pathSeg, depth int) (violation, bool) {
	var best violation
	found := false
	consider := func(vi violation) {
		if !found || lessPath(vi.at, best.at) {
			best, found = vi, true
		}
	}
	if depth > maxExplainDepth {
		return best, false
	}
	// The subschema's own keywords.
	if err := x.fails(p, true, inst); err != nil {
		consider(x.local(p, inst, loc, at, err))
	}
	// Subschemas that apply to the same value.
	for _, c := range x.sameValue(p, inst) {
		if x.fails(c, false, inst) != nil {
			if vi, ok := x.walk(c, inst, loc, at, depth+1); ok {
				consider(vi)
			}
		}
	}
	// Members, unless a violation at the value itself already sorts first.
	if !found || len(best.at) > len(at) {
		x.members(p, inst, func(c place, seg pathSeg, m any) {
			if x.fails(c, false, m) != nil {
				if vi, ok := x.walk(c, m, append(loc[:len(loc):len(loc)], seg.key), append(at[:len(at):len(at)], seg), 0); ok {
					consider(vi)
				}
			}
		})
	}
	if !found {
		if err := x.fails(p, false, inst); err != nil {
			vi := violation{at: at, loc: loc, reason: innermost(err).Error()}
			if k, ok := x.unevaluated(p, inst); ok {
				vi.loc, vi.reason = append(loc[:len(loc):len(loc)], k), "is not allowed (unevaluatedProperties)"
			}
			return vi, true
		}
	}
	return best, found
}

// unevaluated guesses the member of inst that p's unevaluatedProperties
// refuses, when nothing else explains its failure: the first that no
// properties or patternProperties of p or of the subschemas applying to
// the same value name. (Which members are evaluated depends on which
// subschemas pass; this reads the schema only.)
func (x *explainer) unevaluated(p place, inst any) (string, bool) {
	obj, ok := inst.(map[string]any)
	if !ok || p.s.UnevaluatedProperties == nil {
		return "", false
	}
	named := func(s *jsonschema.Schema, k string) bool {
		if _, ok := s.Properties[k]; ok || s.AdditionalProperties != nil {
			return true
		}
		for re := range s.PatternProperties {
			if x.re(re).MatchString(k) {
				return true
			}
		}
		return false
	}
	for _, k := range sortedKeys(obj) {
		ok := named(p.s, k)
		for _, c := range x.sameValue(p, inst) {
			ok = ok || named(c.s, k)
		}
		if !ok && x.fails(x.child(p, p.s.UnevaluatedProperties, "unevaluatedProperties"), false, obj[k]) != nil {
			return k, true
		}
	}
	return "", false
}

// sameValue lists the subschemas of p that apply to the value p applies to.
func (x *explainer) sameValue(p place, inst any) []place {
	var out []place
	s := p.s
	if s.Ref != "" {
		if c, err := x.place(s.Ref, p.base, s); err == nil {
			out = append(out, c)
		}
	}
	for i, c := range s.AllOf {
		out = append(out, x.child(p, c, "allOf", strconv.Itoa(i)))
	}
	if s.If != nil {
		switch err := x.check(x.child(p, s.If, "if"), false, inst); {
		case err == nil && s.Then != nil:
			out = append(out, x.child(p, s.Then, "then"))
		case err != nil && !errors.Is(err, errProbe) && s.Else != nil:
			out = append(out, x.child(p, s.Else, "else"))
		}
	}
	if obj, ok := inst.(map[string]any); ok {
		for _, k := range sortedKeys(s.DependentSchemas) {
			if _, ok := obj[k]; ok {
				out = append(out, x.child(p, s.DependentSchemas[k], "dependentSchemas", k))
			}
		}
		for _, k := range sortedKeys(s.DependencySchemas) {
			if _, ok := obj[k]; ok {
				out = append(out, x.child(p, s.DependencySchemas[k], "dependencies", k))
			}
		}
	}
	return out
}

// members calls f with each member of inst, in document order, and each
// subschema of p that applies to it.
func (x *explainer) members(p place, inst any, f func(c place, seg pathSeg, m any)) {
	s := p.s
	switch t := inst.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			seg := pathSeg{key: k, index: -1}
			matched := false
			if c, ok := s.Properties[k]; ok {
				matched = true
				f(x.child(p, c, "properties", k), seg, t[k])
			}
			for _, re := range sortedKeys(s.PatternProperties) {
				if x.re(re).MatchString(k) {
					matched = true
					f(x.child(p, s.PatternProperties[re], "patternProperties", re), seg, t[k])
				}
			}
			if !matched && s.AdditionalProperties != nil {
				f(x.child(p, s.AdditionalProperties, "additionalProperties"), seg, t[k])
			}
		}
	case []any:
		for i, m := range t {
			seg := pathSeg{key: strconv.Itoa(i), index: i}
			switch {
			case s.ItemsArray != nil && i < len(s.ItemsArray):
				f(x.child(p, s.ItemsArray[i], "items", seg.key), seg, m)
			case s.ItemsArray != nil && s.AdditionalItems != nil:
				f(x.child(p, s.AdditionalItems, "additionalItems"), seg, m)
			case i < len(s.PrefixItems):
				f(x.child(p, s.PrefixItems[i], "prefixItems", seg.key), seg, m)
			case s.Items != nil:
				f(x.child(p, s.Items, "items"), seg, m)
			}
		}
	}
}

func (x *explainer) re(expr string) *regexp.Regexp {
	re, ok := x.res[expr]
	if !ok {
		var err error
		if re, err = regexp.Compile(expr); err != nil {
			// The validator compiled it when resolving; should it not
			// compile here, it matches nothing.
			re = regexp.MustCompile(`[^\x00-\x{10FFFF}]`)
		}
		x.res[expr] = re
	}
	return re
}

// local is the violation of p's own keywords by inst; err is the
// validator's word on them.
func (x *explainer) local(p place, inst any, loc []string, at []pathSeg, err error) violation {
	msg := innermost(err).Error()
	vi := violation{at: at, loc: loc, reason: reason(p, inst, msg)}
	obj, _ := inst.(map[string]any)
	// A missing field is named itself, and sorts at its object: the
	// object's own faults come before its members'.
	missing := func(names []string, why string) bool {
		for _, r := range names {
			if _, ok := obj[r]; !ok {
				vi.loc, vi.reason = append(loc[:len(loc):len(loc)], r), why
				return true
			}
		}
		return false
	}
	switch {
	case obj == nil:
	case strings.HasPrefix(msg, "required:"):
		missing(p.s.Required, "is required")
	case strings.HasPrefix(msg, "dependentRequired"):
		for _, k := range sortedKeys(p.s.DependentRequired) {
			if _, ok := obj[k]; ok && missing(p.s.DependentRequired[k], "is required with "+k) {
				break
			}
		}
	case p.s.PropertyNames != nil:
		names := x.child(p, p.s.PropertyNames, "propertyNames")
		for _, k := range sortedKeys(obj) {
			if x.fails(names, false, k) != nil {
				vi.loc = append(loc[:len(loc):len(loc)], k)
				vi.reason = "is not an allowed name"
				if sub, ok := x.walk(names, k, nil, nil, 0); ok {
					vi.reason += ": " + sub.reason
				}
				break
			}
		}
	}
	return vi
}

// reason says why inst breaks the subschema p's own keywords, given the
// validator's message msg, in the store's words where it knows the
// keyword.
func reason(p place, inst any, msg string) string {
	s := p.s
	if p.parent != nil {
		if f, ok := formatOf(p.parent, s); ok {
			if str, ok := inst.(string); ok {
				return fmt.Sprintf("%s is not a valid %s", quote(str), f)
			}
		}
	}
	kw, _, _ := strings.Cut(msg, ":")
	num := func(name string, want *float64) string {
		if want == nil {
			return msg
		}
		return fmt.Sprintf("%s: got %s, want %s", name, display(inst), strconv.FormatFloat(*want, 'g', -1, 64))
	}
	count := func(name string, got int, want *int) string {
		if want == nil {
			return msg
		}
		return fmt.Sprintf("%s: got %d, want %d", name, got, *want)
	}
	str, _ := inst.(string)
	arr, _ := inst.([]any)
	obj, _ := inst.(map[string]any)
	switch kw {
	case "type":
		want := s.Types
		if s.Type != "" {
			want = []string{s.Type}
		}
		if len(want) == 0 {
			return msg
		}
		return fmt.Sprintf("got %s, want %s", typeOf(inst), strings.Join(want, " or "))
	case "enum":
		if len(s.Enum) == 0 {
			return msg
		}
		want := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			want[i] = display(e)
		}
		if len(want) == 1 {
			return "value must be " + want[0]
		}
		return "value must be one of " + strings.Join(want, ", ")
	case "const":
		if s.Const == nil {
			return msg
		}
		return "value must be " + display(*s.Const)
	case "minimum":
		return num(kw, s.Minimum)
	case "maximum":
		return num(kw, s.Maximum)
	case "exclusiveMinimum":
		return num(kw, s.ExclusiveMinimum)
	case "exclusiveMaximum":
		return num(kw, s.ExclusiveMaximum)
	case "multipleOf":
		return num(kw, s.MultipleOf)
	case "minLength":
		return count(kw, utf8.RuneCountInString(str), s.MinLength)
	case "maxLength":
		return count(kw, utf8.RuneCountInString(str), s.MaxLength)
	case "minItems":
		return count(kw, len(arr), s.MinItems)
	case "maxItems":
		return count(kw, len(arr), s.MaxItems)
	case "minProperties":
		return count(kw, len(obj), s.MinProperties)
	case "maxProperties":
		return count(kw, len(obj), s.MaxProperties)
	case "pattern":
		if s.Pattern == "" {
			return msg
		}
		return fmt.Sprintf("%s does not match pattern %s", quote(str), quote(s.Pattern))
	case "contains":
		return "no item matches contains"
	case "anyOf":
		return "matches none of anyOf"
	case "oneOf":
		if strings.Contains(msg, "validated against both") {
			return "matches more than one of oneOf"
		}
		return "matches none of oneOf"
	case "not":
		if reflect.DeepEqual(s, &jsonschema.Schema{Not: &jsonschema.Schema{}}) {
			return "is not allowed" // the false schema
		}
		return "matches what not forbids"
	}
	return msg
}

// typeOf names the JSON type of a value; numbers are numbers, whole or not.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "number"
}

// display shows a value in a message: a string quoted, anything else as
// JSON, a long container by its type.
func display(v any) string {
	switch t := v.(type) {
	case string:
		return quote(t)
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil || len(b) > 80 {
			return "the " + typeOf(v) + " the schema gives"
		}
		return string(b)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// quote puts a string in single quotes, escaped as Go would.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}

// innermost is the error a chain of wrapped errors starts from: the
// validator wraps its reason in the subschemas it passed through.
func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func lessPath(a, b []pathSeg) bool {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if x.index >= 0 && y.index >= 0 {
			if x.index != y.index {
				return x.index < y.index
			}
			continue
		}
		if x.key != y.key {
			return x.key < y.key
		}
	}
	return len(a) < len(b)
}

func resolveRef(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return base
	}
	r, err := url.Parse(ref)
	if err != nil {
		return base
	}
	u := b.ResolveReference(r)
	u.Fragment = ""
	return u.String()
}

// pointerOf is the JSON pointer of unescaped segments.
func pointerOf(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString("/")
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
	}
	return b.String()
}

// pointerSegs are the unescaped segments of a JSON pointer.
func pointerSegs(ptr string) []string {
	if ptr == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i := range segs {
		segs[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(segs[i])
	}
	return segs
}

// follow goes down from s along pointer segments, calling step with each
// subschema it enters and the segments to it; false if one is missing.
func follow(s *jsonschema.Schema, segs []string, step func(c *jsonschema.Schema, seg []string)) bool {
	for len(segs) > 0 {
		found := false
		eachChild(s, func(c *jsonschema.Schema, seg ...string) bool {
			if len(seg) > len(segs) || !slicesEqual(seg, segs[:len(seg)]) {
				return true
			}
			step(c, seg)
			s, segs, found = c, segs[len(seg):], true
			return false
		})
		if !found {
			return false
		}
	}
	return true
}

// anchorSegs are the pointer segments to the subschema of s that
// declares the anchor name, or nil. (An anchor under a nested $id belongs
// to that resource; none is followed there.)
func anchorSegs(s *jsonschema.Schema, name string) []string {
	var found []string
	var search func(s *jsonschema.Schema, path []string) bool
	search = func(s *jsonschema.Schema, path []string) bool {
		if s.Anchor == name || s.DynamicAnchor == name {
			found = append([]string{}, path...)
			return false
		}
		cont := true
		eachChild(s, func(c *jsonschema.Schema, seg ...string) bool {
			if c.ID == "" {
				cont = search(c, append(path[:len(path):len(path)], seg...))
			}
			return cont
		})
		return cont
	}
	search(s, nil)
	return found
}

// nodeAt is the subschema of s at a JSON pointer, or nil.
func nodeAt(s *jsonschema.Schema, ptr string) *jsonschema.Schema {
	if !follow(s, pointerSegs(ptr), func(c *jsonschema.Schema, _ []string) { s = c }) {
		return nil
	}
	return s
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
