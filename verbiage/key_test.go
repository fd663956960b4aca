package verbiage

import (
	"encoding/json"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

func TestValidKey(t *testing.T) {
	for _, c := range []struct {
		key  string
		want bool
	}{
		{"A", true},
		{"GOALS", true},
		{"SUB-GOALS", true},
		{"LAST-SEEN-IDX", true},
		{"", false},
		{"goals", false},
		{"Goals", false},
		{"-A", false},
		{"A-", false},
		{"-", false},
		{"A--B", false},
		{"A_B", false},
		{"A1", false},
		{"A B", false},
		{"É", false},
		{" A", false},
	} {
		if got := ValidKey(c.key); got != c.want {
			t.Errorf("ValidKey(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}

func TestNormalizeKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"goals", "GOALS"},
		{"GOALS", "GOALS"},
		{"  my goal  ", "MY-GOAL"},
		{"my\t\tgoal", "MY-GOAL"},
		{"My-- Goal", "MY-GOAL"},
		{"a - b", "A-B"},
		{"sub-goals", "SUB-GOALS"},
		{"x", "X"},
		{"\u00a0last seen idx\n", "LAST-SEEN-IDX"},
	} {
		got, err := NormalizeKey(c.in)
		if err != nil || got != c.want {
			t.Errorf("NormalizeKey(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestNormalizeKeyRefuses(t *testing.T) {
	for _, c := range []struct{ in, reason string }{
		{"goal_1", "underscore '_' at position 4 is not allowed (keys are A-Z words joined by dashes)"},
		{"goal1", "digit '1' at position 4 is not allowed"},
		{"a.b", "character '.' at position 1 is not allowed"},
		{"café", "non-ASCII letter 'é' at position 3 is not allowed"},
		{"  a.b", "character '.' at position 3"}, // positions count the trimmed spaces
		{"", "key is empty"},
		{" \t ", "key is empty"},
		{"-a", "starts with a dash"},
		{"a -", "ends with a dash at position 1"},
		{"a\nb", `white space '\n' at position 1`},
		{"a\u00a0b", `white space '\u00a0' at position 1`},
		{"a\x00", `control character '\x00' at position 1`},
		{"\xffa", "not valid UTF-8"},
	} {
		got, err := NormalizeKey(c.in)
		var ke *KeyError
		if !errors.As(err, &ke) || !errors.Is(err, ErrInvalidKey) {
			t.Errorf("NormalizeKey(%q) = %q, %v; want a *KeyError wrapping ErrInvalidKey", c.in, got, err)
			continue
		}
		if ke.Key != c.in || !strings.Contains(ke.Reason, c.reason) {
			t.Errorf("NormalizeKey(%q): key %q, reason %q; want reason with %q", c.in, ke.Key, ke.Reason, c.reason)
		}
	}
}

func TestKeyErrorMessage(t *testing.T) {
	_, err := NormalizePath(MustParsePath("GOALS.goal_1"))
	want := `invalid key "goal_1" at GOALS: underscore '_' at position 4 is not allowed (keys are A-Z words joined by dashes)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	_, err = NormalizeKey("x_1")
	if want := `invalid key "x_1": underscore`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error without a path = %v, want prefix %s", err, want)
	}
	long := strings.Repeat("a", 500) + "_"
	_, err = NormalizeKey(long)
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("error for a 501-byte key is %d bytes long: %v", len(err.Error()), err)
	}
}

// keyAlphabet weights the characters NormalizeKey treats specially, so random
// strings reach every branch.
const keyAlphabet = "aZm -\t-_1.é\n"

func randomKey(intn func(int) int) string {
	runes := []rune(keyAlphabet)
	b := make([]rune, intn(10))
	for i := range b {
		b[i] = runes[intn(len(runes))]
	}
	return string(b)
}

// TestNormalizeKeyProperties: the output is always a valid key, a second
// normalization changes nothing, and a refusal is always a *KeyError for the
// key as given.
func TestNormalizeKeyProperties(t *testing.T) {
	prop := func(s string) bool {
		out, err := NormalizeKey(s)
		if err != nil {
			var ke *KeyError
			return errors.As(err, &ke) && ke.Key == s && out == ""
		}
		again, err := NormalizeKey(out)
		return ValidKey(out) && err == nil && again == out
	}
	// Arbitrary strings, as testing/quick generates them...
	if err := quick.Check(prop, &quick.Config{MaxCount: 5000}); err != nil {
		t.Error(err)
	}
	// ...and strings built from the characters that matter, which quick's
	// uniform runes almost never produce.
	err := quick.Check(prop, &quick.Config{
		MaxCount: 20000,
		Values: func(args []reflect.Value, rng *rand.Rand) {
			args[0] = reflect.ValueOf(randomKey(rng.Intn))
		},
	})
	if err != nil {
		t.Error(err)
	}
}

func TestNormalizeKeys(t *testing.T) {
	in := testutil.DecodeJSON(t, `{"active project": {"title": null, "project-id": 12.50},
		"goals": {"my goal": {"notes": ["keep me", {"sub goal": true}]}}, "items": []}`)
	before := testutil.DecodeJSON(t, `{"active project": {"title": null, "project-id": 12.50},
		"goals": {"my goal": {"notes": ["keep me", {"sub goal": true}]}}, "items": []}`)
	got, err := NormalizeKeys(in)
	if err != nil {
		t.Fatal(err)
	}
	want := testutil.DecodeJSON(t, `{"ACTIVE-PROJECT": {"TITLE": null, "PROJECT-ID": 12.50},
		"GOALS": {"MY-GOAL": {"NOTES": ["keep me", {"SUB-GOAL": true}]}}, "ITEMS": []}`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NormalizeKeys = %v\nwant %v", got, want)
	}
	if !reflect.DeepEqual(in, before) {
		t.Errorf("NormalizeKeys modified its input: %v", in)
	}
	if err := ValidateKeys(got); err != nil {
		t.Errorf("ValidateKeys(NormalizeKeys(v)) = %v", err)
	}
	for _, scalar := range []any{nil, "a", true, json.Number("1e400"), 1.5} {
		if got, err := NormalizeKeys(scalar); err != nil || got != scalar {
			t.Errorf("NormalizeKeys(%#v) = %#v, %v", scalar, got, err)
		}
	}
}

func TestNormalizeKeysRefuses(t *testing.T) {
	for _, c := range []struct {
		doc, key, path, reason string
	}{
		{`{"my goal": 1, "MY-GOAL": 2}`, "my goal", "", `keys "MY-GOAL" and "my goal" both normalize to "MY-GOAL"`},
		{`{"items": {"projects": [{"a b": 1, "A--B": 2}]}}`, "a b", "items.projects.0", `both normalize to "A-B"`},
		{`{"goals": {"goal 2": {}, "goal_1": {}}}`, "goal 2", "goals", "digit '2' at position 5"},
		{`[{"ok": {"bad.key": 1}}]`, "bad.key", "0.ok", "character '.'"},
	} {
		_, err := NormalizeKeys(testutil.DecodeJSON(t, c.doc))
		var ke *KeyError
		if !errors.As(err, &ke) || !errors.Is(err, ErrInvalidKey) {
			t.Errorf("NormalizeKeys(%s) = %v, want a *KeyError", c.doc, err)
			continue
		}
		if ke.Key != c.key || ke.Path.String() != c.path || !strings.Contains(ke.Reason, c.reason) {
			t.Errorf("NormalizeKeys(%s): key %q at %q: %s\nwant key %q at %q: ...%s", c.doc, ke.Key, ke.Path, ke.Reason, c.key, c.path, c.reason)
		}
	}
}

func TestValidateKeys(t *testing.T) {
	ok := testutil.DecodeJSON(t, `{"ACTIVE-PROJECT": {"TITLE": null}, "GOALS": {}, "ITEMS": {"GLOBAL": {"META": {}, "CONTENT": {}}, "PROJECTS": [{"CHATS": []}]}, "NOTES": ["free text, any keys: a_b"]}`)
	if err := ValidateKeys(ok); err != nil {
		t.Errorf("ValidateKeys(valid document) = %v", err)
	}
	for _, c := range []struct {
		doc, key, path, reason string
	}{
		// Sorted visit: "a_key" is reported before "b_key".
		{`{"GOALS": {"b_key": 1, "a_key": 2}}`, "a_key", "GOALS", "lowercase letter 'a' at position 0"},
		{`{"ITEMS": {"PROJECTS": [{"OK": 1}, {"NOT OK": 1}]}}`, "NOT OK", "ITEMS.PROJECTS.1", "white space ' ' at position 3"},
		{`{"A--B": 1}`, "A--B", "", "repeated dash at position 2"},
		{`{"-A": 1}`, "-A", "", "starts with a dash"},
		{`{"A-": 1}`, "A-", "", "ends with a dash"},
		{`{"": 1}`, "", "", "key is empty"},
		{`{"A": {"B": {"C1": 1}}}`, "C1", "A.B", "digit '1'"},
		{`{"A": {"x.y": {"C1": 1}}}`, "x.y", "A", "lowercase letter"},
		{`{"OK": {"A\u00e9": 1}}`, "Aé", "OK", "non-ASCII letter 'é' at position 1"},
	} {
		err := ValidateKeys(testutil.DecodeJSON(t, c.doc))
		var ke *KeyError
		if !errors.As(err, &ke) || !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKeys(%s) = %v, want a *KeyError", c.doc, err)
			continue
		}
		if ke.Key != c.key || ke.Path.String() != c.path || !strings.Contains(ke.Reason, c.reason) {
			t.Errorf("ValidateKeys(%s): key %q at %q: %s\nwant key %q at %q: ...%s", c.doc, ke.Key, ke.Path, ke.Reason, c.key, c.path, c.reason)
		}
	}
}

func TestWalkRefusesForeignContainers(t *testing.T) {
	for _, v := range []any{
		map[string]string{"bad_key": "x"},
		map[string]any{"A": []string{"x"}},
		map[string]any{"A": struct{ B int }{1}},
	} {
		err := ValidateKeys(v)
		if err == nil || errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "unsupported value") {
			t.Errorf("ValidateKeys(%#v) = %v, want an unsupported-value error", v, err)
		}
		if _, err := NormalizeKeys(v); err == nil {
			t.Errorf("NormalizeKeys(%#v) accepted a foreign container", v)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"goals.my goal.notes.0", "GOALS.MY-GOAL.NOTES.0"},
		{"items/projects/-", "ITEMS.PROJECTS.-"},
		{"goals.*.status", "GOALS.*.STATUS"},
		{"", ""},
		{"a.10.b", "A.10.B"},
	} {
		got, err := NormalizePath(MustParsePath(c.in))
		if err != nil || got.String() != c.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	in := MustParsePath("goals.x")
	if _, err := NormalizePath(in); err != nil || in[0].Key != "goals" {
		t.Errorf("NormalizePath modified its input: %v", in)
	}
	for _, c := range []struct{ in, key, at string }{
		{`goals.\*`, "*", "goals"},      // an escaped star is a key, and not a valid one
		{"goals.007.x", "007", "goals"}, // not an index: leading zeros
		{"a.b_c.d", "b_c", "a"},
	} {
		_, err := NormalizePath(MustParsePath(c.in))
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != c.key || ke.Path.String() != c.at {
			t.Errorf("NormalizePath(%q) = %v, want key %q at %q", c.in, err, c.key, c.at)
		}
	}
}

func BenchmarkValidateKeys(b *testing.B) {
	goals := map[string]any{}
	for i := range 200 {
		goals["GOAL-"+strings.Repeat("X", i%20+1)+"-"+string(rune('A'+i%26))] = map[string]any{
			"TITLE": "t", "STATUS": "open", "NOTES": []any{"a", "b"},
			"SUB-GOALS": map[string]any{"ONE": map[string]any{"IN-FLIGHT": false, "LAST-SEEN-IDX": json.Number("-1")}},
		}
	}
	doc := map[string]any{"GOALS": goals}
	for b.Loop() {
		if err := ValidateKeys(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalizeKey(b *testing.B) {
	for _, in := range []string{"LAST-SEEN-IDX", "  last seen   idx "} {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				if _, err := NormalizeKey(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
