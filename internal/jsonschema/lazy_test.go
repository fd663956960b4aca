package jsonschema

import (
	"errors"
	"strings"
	"testing"
)

// The copy's one change must not lose metaschema validation: a schema that
// breaks its draft's metaschema is still refused, in a process that has not
// compiled anything before.
func TestSchemasStillCheckedAgainstTheirMetaschema(t *testing.T) {
	for _, tc := range []struct {
		draft  *Draft
		schema string
	}{
		{Draft2020, `{"type": 5}`},
		{Draft7, `{"minLength": "three"}`},
		{Draft4, `{"required": []}`},
	} {
		c := NewCompiler()
		c.DefaultDraft(tc.draft)
		doc, err := UnmarshalJSON(strings.NewReader(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("mem://s.json", doc); err != nil {
			t.Fatal(err)
		}
		_, err = c.Compile("mem://s.json")
		var sve *SchemaValidationError
		if !errors.As(err, &sve) {
			t.Errorf("draft %d: %s compiled (err %v); want a metaschema error", tc.draft.version, tc.schema, err)
		}
	}
	c := NewCompiler()
	sch, err := c.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(map[string]any{"type": "string"}); err != nil {
		t.Errorf("a valid schema fails the 2020-12 metaschema: %v", err)
	}
}
