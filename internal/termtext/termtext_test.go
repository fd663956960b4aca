package termtext

import "testing"

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode":        "plain text, ünïcode",
		"ok\x1b[1A\x1b[2K\rapproved": `ok\x1b[1A\x1b[2K\x0dapproved`,
		"a\nb\tc\x7f":                `a\nb\tc\x7f`,
		"\u009b31m red":              `\u009b31m red`,
		"\u0085\u009b":               `\u0085\u009b`,
		"\u2066x\u2069":              `\u2066x\u2069`,
		"\x00":                       `\x00`,
		"invoice \u202egnp.exe":      `invoice \u202egnp.exe`,
		"\x1b]0;title\x07":           `\x1b]0;title\x07`,
	} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSafe(f *testing.F) {
	f.Add("ok\x1b[2K\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Safe(s) {
			if unsafe(r) {
				t.Fatalf("Safe(%q) keeps %U", s, r)
			}
		}
	})
}
