package main

import (
	"fmt"
	"testing"
)

// FuzzBadFlagValue: reading the flag package's message never panics, and
// reads back what it was made from.
func FuzzBadFlagValue(f *testing.F) {
	f.Add(`invalid value "abc" for flag -n: parse error`)
	f.Add(`invalid value "\"x y\"" for flag -idle: parse error`)
	f.Add(`invalid value "for flag -a" for flag -b: x`)
	f.Add(`flag provided but not defined: -json`)
	f.Fuzz(func(t *testing.T, msg string) {
		value, name, ok := badFlagValue(msg)
		if !ok {
			return
		}
		again := fmt.Sprintf("invalid value %q for flag -%s: parse error", value, name)
		if v, n, ok := badFlagValue(again); !ok || v != value || n != name {
			t.Fatalf("%q read as (%q, %q), rendered %q, read back as (%q, %q, %v)", msg, value, name, again, v, n, ok)
		}
	})
}
