package merge

import (
	"errors"
	"testing"
)

func TestParseStrategy(t *testing.T) {
	for _, s := range Strategies() {
		got, err := ParseStrategy(string(s))
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %q, %v", s, got, err)
		}
	}
	if Manual != "conflict" || LastWriteWins != "last-write-wins" || Max != "max" {
		t.Errorf("strategy names changed; they are written in .gitattributes of existing stores")
	}
	for _, s := range []string{"", "lww", "Last-Write-Wins", " max", "merge-object"} {
		if _, err := ParseStrategy(s); !errors.Is(err, ErrUnknownStrategy) {
			t.Errorf("ParseStrategy(%q) error = %v, want ErrUnknownStrategy", s, err)
		}
	}
}

func TestCompareNumbers(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "2", -1}, {"10", "9", 1}, {"1.0", "1", 0}, {"1e3", "999", 1}, {"-1", "-0.5", -1},
		{"0", "-0", 0}, {"0.0e10", "0", 0}, {"-2", "1", -1}, {"123456789012345678901234567890", "123456789012345678901234567891", -1},
		{"1e-400", "0", 1}, {"1e99999999999999999999", "1e400", 1}, {"0.001", "1e-3", 0}, {"-1e2", "-99", -1},
	}
	for _, tc := range tests {
		got, ok := compareNumbers(tc.a, tc.b)
		if !ok || got != tc.want {
			t.Errorf("compareNumbers(%s, %s) = %d, %v; want %d", tc.a, tc.b, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "-", "1.", ".5", "1e", "0x10", "NaN", "1e+"} {
		if _, ok := compareNumbers(bad, "1"); ok {
			t.Errorf("compareNumbers(%q, 1) accepted a non-number", bad)
		}
	}
}

func TestIdentity(t *testing.T) {
	tests := []struct {
		name      string
		a, b      string
		sameThing bool
	}{
		{"id field", `{"id": 1, "v": 1}`, `{"id": 1, "v": 2}`, true},
		{"ID field beats _id", `{"ID": "x", "agent_id": "a"}`, `{"ID": "x", "agent_id": "b"}`, true},
		{"first _id / -ID key in byte order", `{"PROJECT-ID": "p", "CHAT-ID": "c1"}`, `{"PROJECT-ID": "p", "CHAT-ID": "c2"}`, false},
		{"null id falls back to the value", `{"ID": null, "BODY": "a"}`, `{"ID": null, "BODY": "b"}`, false},
		{"scalars by value", `"x"`, `"x"`, true},
		{"number literal matters", `1`, `1.0`, false},
	}
	for _, tc := range tests {
		ka := identities([]any{decode(t, tc.a)})[0]
		kb := identities([]any{decode(t, tc.b)})[0]
		if (ka == kb) != tc.sameThing {
			t.Errorf("%s: identities %q and %q, want same=%v", tc.name, ka, kb, tc.sameThing)
		}
	}
}
