package rlm

import (
	"testing"

	"github.com/aiwg/aiwg-state/objects"
)

// FuzzParseValue: any command-line value either fails cleanly or gives a
// value of the type it reports, which survives a store round trip.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"3", "Paris", `"quoted"`, `{"a":[1,2]}`, "null", "true", "file:a.md", "-1e400", "\xff", ""} {
		f.Add(s, "")
		f.Add(s, "text")
		f.Add(s, "json")
	}
	f.Fuzz(func(t *testing.T, arg, typ string) {
		v, got, err := ParseValue(arg, Type(typ))
		if err != nil {
			return
		}
		if err := CheckType(got, v); err != nil {
			t.Fatalf("ParseValue(%q, %q) = %v of type %s, which CheckType refuses: %v", arg, typ, v, got, err)
		}
		vr := &Variable{Name: "v", Value: v, Type: got}
		file, data, err := vr.Encode("d/v.data")
		if err != nil {
			return // e.g. a number literal the canonical codec refuses
		}
		back, err := DecodeVariable(file)
		if err != nil {
			t.Fatalf("decode of an encoded variable: %v", err)
		}
		if err := back.Load(data); err != nil {
			t.Fatal(err)
		}
		if !objects.Equal(back.Value, v) {
			t.Fatalf("round trip: %v -> %v", v, back.Value)
		}
	})
}
