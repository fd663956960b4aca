package jsonschema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// checkCycles refuses a schema whose subschemas apply one another to the
// same value in a cycle ({"$ref": "#"}, or an anyOf that refers back to
// its schema): jsonschema-go would recurse on it until the stack
// overflows, which ends the process. A cycle through a member's
// subschema (properties, items) ends with the document and is allowed.
func (v *Validator) checkCycles() error {
	x := &explainer{v: v, probes: map[string]*jsonschema.Resolved{}, res: map[string]*regexp.Regexp{}}
	const visiting, done = 1, 2
	state := map[string]int{}
	var visit func(p place) error
	visit = func(p place) error {
		key := p.doc + "#" + p.ptr
		switch state[key] {
		case visiting:
			return fmt.Errorf("%s: the schema applies itself to the same value without end (a $ref cycle)", strings.TrimSuffix(key, "#"))
		case done:
			return nil
		}
		state[key] = visiting
		for _, c := range x.applied(p) {
			if err := visit(c); err != nil {
				return err
			}
		}
		state[key] = done
		return nil
	}
	var all func(p place) error
	all = func(p place) error {
		if err := visit(p); err != nil {
			return err
		}
		var err error
		eachChild(p.s, func(c *jsonschema.Schema, seg ...string) bool {
			err = all(x.child(p, c, seg...))
			return err == nil
		})
		return err
	}
	for _, doc := range sortedKeys(v.docs) {
		p, err := x.place(doc, "", nil)
		if err != nil {
			return err
		}
		if err := all(p); err != nil {
			return err
		}
	}
	return nil
}

// applied lists the subschemas that p applies to the value it applies to,
// whatever they decide: every applicator but those of members. A
// $dynamicRef may land on any $dynamicAnchor of its name.
func (x *explainer) applied(p place) []place {
	s := p.s
	var out []place
	if s.Ref != "" {
		if c, err := x.place(s.Ref, p.base, s); err == nil {
			out = append(out, c)
		}
	}
	if s.DynamicRef != "" {
		if c, err := x.place(s.DynamicRef, p.base, s); err == nil {
			out = append(out, c)
		}
		if _, name, ok := strings.Cut(s.DynamicRef, "#"); ok && name != "" && !strings.HasPrefix(name, "/") {
			for _, doc := range sortedKeys(x.v.docs) {
				x.dynamicAnchors(place{doc: doc, base: doc, s: x.v.docs[doc]}, name, &out)
			}
		}
	}
	list := func(cs []*jsonschema.Schema, kw string) {
		for i, c := range cs {
			out = append(out, x.child(p, c, kw, strconv.Itoa(i)))
		}
	}
	list(s.AllOf, "allOf")
	list(s.AnyOf, "anyOf")
	list(s.OneOf, "oneOf")
	for _, c := range []struct {
		s  *jsonschema.Schema
		kw string
	}{{s.Not, "not"}, {s.If, "if"}, {s.Then, "then"}, {s.Else, "else"}} {
		if c.s != nil {
			out = append(out, x.child(p, c.s, c.kw))
		}
	}
	for _, k := range sortedKeys(s.DependentSchemas) {
		out = append(out, x.child(p, s.DependentSchemas[k], "dependentSchemas", k))
	}
	for _, k := range sortedKeys(s.DependencySchemas) {
		out = append(out, x.child(p, s.DependencySchemas[k], "dependencies", k))
	}
	return out
}

// dynamicAnchors adds to out the subschemas under p with the
// $dynamicAnchor name.
func (x *explainer) dynamicAnchors(p place, name string, out *[]place) {
	if p.s.DynamicAnchor == name {
		*out = append(*out, p)
	}
	eachChild(p.s, func(c *jsonschema.Schema, seg ...string) bool {
		x.dynamicAnchors(x.child(p, c, seg...), name, out)
		return true
	})
}
