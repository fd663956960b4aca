package objects

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCanonicalLayout(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty object", `{}`, "{}\n"},
		{"empty array", ` [ ] `, "[]\n"},
		{"scalar root", `"x"`, "\"x\"\n"},
		{"null root", `null`, "null\n"},
		{"sorted keys, two-space indent", `{"b":1,"a":{"d":[true,false,null],"c":{}}}`,
			"{\n  \"a\": {\n    \"c\": {},\n    \"d\": [\n      true,\n      false,\n      null\n    ]\n  },\n  \"b\": 1\n}\n"},
		{"keys sorted by bytes, not by letters", `{"a":1,"B":2,"_":3,"é":4}`,
			"{\n  \"B\": 2,\n  \"_\": 3,\n  \"a\": 1,\n  \"é\": 4\n}\n"},
		{"numbers keep their literal", `[1.0,1e3,12345678901234567890,-0,1E+2,0.000001]`,
			"[\n  1.0,\n  1e3,\n  12345678901234567890,\n  -0,\n  1E+2,\n  0.000001\n]\n"},
		{"no HTML escaping", `{"h":"<a href=\"x\">&amp;</a>"}`, "{\n  \"h\": \"<a href=\\\"x\\\">&amp;</a>\"\n}\n"},
		{"escapes decoded to their characters", `"\u00e9\/\ud83d\ude00\u2028"`, "\"é/😀\u2028\"\n"},
		{"control characters", `"\u0000\u001f\b\f\n\r\t\u0008"`, "\"\\u0000\\u001f\\b\\f\\n\\r\\t\\b\"\n"},
		{"DEL stays literal", "\"\x7f\"", "\"\x7f\"\n"},
		{"escaped keys sort by their decoded value", `{"\n":1,"\"":2}`, "{\n  \"\\n\": 1,\n  \"\\\"\": 2\n}\n"},
		{"nested empty containers", `[[],{},[[]]]`, "[\n  [],\n  {},\n  [\n    []\n  ]\n]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical([]byte(tt.in))
			if err != nil {
				t.Fatalf("Canonical: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("Canonical(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if !isCanonical(got) {
				t.Errorf("output %q not recognized as canonical", got)
			}
			again, err := Canonical(got)
			if err != nil || string(again) != tt.want {
				t.Errorf("Canonical not idempotent: %q, %v", again, err)
			}
		})
	}
}

func TestCanonicalFastPathReturnsInput(t *testing.T) {
	in := []byte("{\n  \"a\": [\n    1\n  ]\n}\n")
	out, err := Canonical(in)
	if err != nil {
		t.Fatal(err)
	}
	if &out[0] != &in[0] {
		t.Error("canonical input was copied instead of returned")
	}
	if n := testing.AllocsPerRun(100, func() { Canonical(in) }); n != 0 {
		t.Errorf("Canonical of canonical input allocates %v times", n)
	}
}

// Near misses must not pass the fast path: each differs from canonical form
// in one detail, and Canonical must rewrite it.
func TestCanonicalRejectsNearMisses(t *testing.T) {
	for _, in := range []string{
		"{\n  \"a\": 1\n}",                // no final newline
		"{\n  \"a\": 1\n}\n\n",            // extra newline
		"{\n  \"b\": 1,\n  \"a\": 2\n}\n", // unsorted
		"{\n   \"a\": 1\n}\n",             // three-space indent
		"{\n  \"a\":1\n}\n",               // no space after colon
		"[\n  1, 2\n]\n",                  // two scalars on a line
		"{ }\n",                           // spaced empty object
		"\"\\/\"\n",                       // needless escape
		"\"\\u0041\"\n",                   // needless \u escape
		"\"\\u000a\"\n",                   // \u where \n is canonical
		"\"\\u001F\"\n",                   // upper-case hex
		"\"\\u007f\"\n",                   // DEL is written literally
		" 1\n",                            // leading space
		"\t1\n",
		"1\r\n",
	} {
		if isCanonical([]byte(in)) {
			t.Errorf("isCanonical(%q) = true", in)
		}
		out, err := Canonical([]byte(in))
		if err != nil {
			t.Errorf("Canonical(%q): %v", in, err)
			continue
		}
		if string(out) == in {
			t.Errorf("Canonical(%q) returned it unchanged", in)
		}
	}
	// Laid out canonically but invalid: the fast path must not let them in.
	for _, in := range []string{
		"{\n  a\": 1\n}\n",                // key without its opening quote
		"{\n  \"a\": 1,\n  \"a\": 1\n}\n", // duplicate key
		"\"\xff\"\n",                      // invalid UTF-8
		"[\n  01\n]\n",                    // bad number
	} {
		if _, err := Canonical([]byte(in)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("Canonical(%q) error = %v, want ErrInvalidJSON", in, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		in        string
		line, col int
		msg       string
	}{
		{"", 1, 1, "empty input"},
		{"  \n ", 2, 2, "empty input"},
		{`{"a":1,"a":2}`, 1, 8, `duplicate object key "a"`},
		{"{\n  \"x\": {\"k\": 1, \"k\": 1}\n}", 2, 17, `duplicate object key "k"`},
		{`{"a":1} x`, 1, 9, "trailing data"},
		{`1 2`, 1, 3, "trailing data"},
		{"\"a\xffb\"", 1, 3, "invalid UTF-8"},
		{"{\"\xc3\":1}", 1, 3, "invalid UTF-8"},
		{`"\ud800"`, 1, 2, "lone surrogate"},
		{`"\udc00\ud800"`, 1, 2, "lone surrogate"},
		{`"\ud800\u0041"`, 1, 2, "lone surrogate"},
		{"\"a\tb\"", 1, 3, "control character"},
		{`"\x"`, 1, 2, "invalid escape"},
		{`"\u12"`, 1, 2, `invalid \u escape`},
		{`"abc`, 1, 5, "unexpected end of input in string"},
		{`01`, 1, 2, "trailing data"},
		{`1.`, 1, 3, "digit after the decimal point"},
		{`1e`, 1, 3, "digit in the exponent"},
		{`-`, 1, 2, "unexpected end of input in number"},
		{`+1`, 1, 1, "invalid character '+'"},
		{`.5`, 1, 1, "invalid character '.'"},
		{`NaN`, 1, 1, "invalid character 'N'"},
		{`tru`, 1, 4, "unexpected end of input in literal true"},
		{`nul1`, 1, 4, "in literal null"},
		{`[1,]`, 1, 4, "expecting a value"},
		{`[1 2]`, 1, 4, "expecting ',' or ']'"},
		{`{"a" 1}`, 1, 6, "expecting ':'"},
		{`{"a":1,}`, 1, 8, "expecting an object key"},
		{`{a:1}`, 1, 2, "expecting an object key"},
		{"\ufeff{}", 1, 1, "invalid character byte 0xef"},
		{"// c\n{}", 1, 1, "invalid character '/'"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), 1, maxDepth + 1, "nesting deeper"},
	}
	for _, tt := range tests {
		_, err := Decode([]byte(tt.in))
		if err == nil {
			t.Errorf("Decode(%.40q) succeeded", tt.in)
			continue
		}
		if !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("Decode(%.40q) error %v does not wrap ErrInvalidJSON", tt.in, err)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Decode(%.40q) error %T is not a *SyntaxError", tt.in, err)
			continue
		}
		if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Decode(%.40q) = %v; want line %d, column %d, containing %q", tt.in, err, tt.line, tt.col, tt.msg)
		}
	}
}

func TestDecodeAcceptsDeepNestingUpToTheLimit(t *testing.T) {
	in := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := Decode([]byte(in)); err != nil {
		t.Fatalf("depth %d: %v", maxDepth, err)
	}
	if !json.Valid([]byte(in)) {
		t.Fatal("encoding/json disagrees on the depth limit")
	}
}

func TestDecodeValues(t *testing.T) {
	v, err := Decode([]byte(`{"n":1.50,"s":"x","t":true,"z":null,"a":[{}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": json.Number("1.50"), "s": "x", "t": true, "z": nil, "a": []any{map[string]any{}}}
	if !Equal(v, want) {
		t.Fatalf("Decode = %#v", v)
	}
	if _, ok := v.(map[string]any)["n"].(json.Number); !ok {
		t.Error("numbers must decode to json.Number")
	}
}

func TestEncodeGoValues(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"int", 42, "42\n"},
		{"int64", int64(-7), "-7\n"},
		{"float whole", 3.0, "3\n"},
		{"float fraction", 0.1, "0.1\n"},
		{"float small", 1e-7, "1e-7\n"},
		{"float big", 1e21, "1e+21\n"},
		{"float below e-notation", 1e20, "100000000000000000000\n"},
		{"negative zero", math.Copysign(0, -1), "-0\n"},
		{"json.Number", json.Number("1.0e+3"), "1.0e+3\n"},
		{"mixed", map[string]any{"b": []any{1, "x"}, "a": nil}, "{\n  \"a\": null,\n  \"b\": [\n    1,\n    \"x\"\n  ]\n}\n"},
	}
	for _, tt := range tests {
		got, err := Encode(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s: Encode = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"unsupported type", map[string]any{"a": []any{1, struct{}{}}}, `at key path "a.1": unsupported type struct {}`},
		{"int32", int32(1), "unsupported type int32"},
		{"typed map", map[string]int{"a": 1}, "unsupported type map[string]int"},
		{"NaN", map[string]any{"x.y": math.NaN()}, `at key path "x\\.y": unsupported number NaN`},
		{"infinity", math.Inf(1), "unsupported number +Inf"},
		{"bad number", json.Number("1."), `invalid number literal "1."`},
		{"empty number", json.Number(""), `invalid number literal ""`},
		{"invalid UTF-8 value", "a\xff", "invalid UTF-8"},
		{"invalid UTF-8 key", map[string]any{"\xff": 1}, "key: invalid UTF-8"},
		{"cycle", cyclic, "nesting deeper"},
	}
	for _, tt := range tests {
		_, err := Encode(tt.in)
		if !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Encode error = %v, want ErrInvalidJSON containing %q", tt.name, err, tt.want)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{json.Number("1"), json.Number("1"), true},
		{json.Number("1"), json.Number("1.0"), false},
		{json.Number("1e3"), json.Number("1000"), false},
		{json.Number("1"), 1, true},
		{json.Number("1"), int64(1), true},
		{json.Number("0.5"), 0.5, true},
		{json.Number("1"), 1.0, true},
		{1.0, 1, true},
		{json.Number("1"), "1", false},
		{nil, nil, true},
		{nil, false, false},
		{true, true, true},
		{map[string]any{"a": []any{}}, map[string]any{"a": []any{}}, true},
		{map[string]any{"a": []any{}}, map[string]any{"a": map[string]any{}}, false},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{map[string]any{"a": nil}, map[string]any{}, false},
		{[]any{1, 2}, []any{2, 1}, false},
		{struct{}{}, struct{}{}, false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v", tt.a, tt.b, got)
		}
		if got := Equal(tt.b, tt.a); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v (reversed)", tt.b, tt.a, got)
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID("mut")
		if len(id) != len("mut-")+8 || !strings.HasPrefix(id, "mut-") {
			t.Fatalf("NewID = %q", id)
		}
		for _, c := range id[4:] {
			if !strings.ContainsRune("0123456789abcdef", c) {
				t.Fatalf("NewID = %q: not lowercase hex", id)
			}
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q in 100 calls", id)
		}
		seen[id] = true
	}
}
