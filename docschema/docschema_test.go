package docschema

import (
	"errors"
	"testing"

	"github.com/aiwg/aiwg-state/objects"
)

func TestRules(t *testing.T) {
	r, err := Parse([]byte(`{"rules":[{"paths":["agents/*.json"],"schema":".aiwg/schemas/agent.schema.json"},{"paths":["*.json"],"schema":".aiwg/schemas/any.schema.json"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"agents/pulse.json":  ".aiwg/schemas/agent.schema.json", // the first rule that matches
		"plan.json":          ".aiwg/schemas/any.schema.json",
		"agents/x/deep.json": ".aiwg/schemas/any.schema.json", // * stops at a slash; *.json is a basename pattern
		"notes.txt":          "",
		".aiwg/store.json":   "", // the store's own files are ruled by none
	} {
		if got, _ := r.SchemaFor(file); got != want {
			t.Errorf("SchemaFor(%s) = %q, want %q", file, got, want)
		}
	}
	for _, bad := range []string{
		`{"rules":[{"paths":[],"schema":"s.json"}]}`,
		`{"rules":[{"paths":["a"],"schema":"../s.json"}]}`,
		`{"rules":[{"paths":["a"],"schema":".aiwg/schemas/s.json","extra":1}]}`,
		`{"rules":[{"paths":["a"],"schema":".aiwg/schemas.json"}]}`,
		`{"rules":[{"paths":["a"],"schema":"elsewhere/s.json"}]}`,
		`{"rules":[{"paths":["[a"],"schema":"s.json"}]}`,
		`not json`,
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrRules) {
			t.Errorf("Parse(%s): %v", bad, err)
		}
	}
}

func TestValidateNamesTheFirstField(t *testing.T) {
	s, err := Compile(".aiwg/schemas/s.json", files(map[string]string{
		".aiwg/schemas/s.json":    `{"type":"object","required":["status"],"properties":{"status":{"enum":["idle","busy"]},"load":{"type":"number","maximum":1},"a.b":{"$ref":"text.json"}}}`,
		".aiwg/schemas/text.json": `{"type":"string"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		`{"status":"idle"}`:          "",
		`{}`:                         "field status: is required",
		`{"status":"gone"}`:          "field status: value must be one of 'idle', 'busy'",
		`{"status":"idle","load":2}`: "field load: maximum: got 2, want 1",
		`{"status":"idle","a.b":1}`:  `field a\.b: got number, want string`,
		`{"load":2}`:                 "field status: is required", // the document's own error first
		`[]`:                         "got array, want object",
	} {
		v, err := objects.Decode([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := s.Validate(v); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
	if s.Files[".aiwg/schemas/text.json"] == "" {
		t.Errorf("the schema does not know it was compiled from the file its $ref loads: %v", s.Files)
	}
	bad := files(map[string]string{
		"bad.json":     `{"type": 7}`,
		"host.json":    `{"$ref": "file:///etc/passwd"}`,
		"web.json":     `{"$ref": "https://example.com/s.json"}`,
		"missing.json": `{"$ref": "nowhere.json"}`,
	})
	for _, f := range []string{"bad.json", "host.json", "web.json", "missing.json"} {
		if _, err := Compile(f, bad); !errors.Is(err, ErrRules) {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// files is a store of these files, as Compile reads one.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if v, ok := m[p]; ok {
			return []byte(v), nil
		}
		return nil, errors.New("not found")
	}
}

// FuzzParse: any bytes parse to an error of kind ErrRules, or to rules
// that encode and parse again to the same rules.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"rules":[{"paths":["agents/*.json"],"schema":".aiwg/schemas/agent.schema.json"}]}`))
	f.Add([]byte(`{"rules":[]}`))
	f.Add([]byte(`{"rules":[{"paths":["!a","**/b/"],"schema":".aiwg/schemas/x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrRules) {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		b, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatalf("encoded rules do not parse: %v\n%s", err, b)
		}
		if b2, _ := back.Encode(); string(b2) != string(b) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		r.SchemaFor("agents/a.json")
	})
}
