package jsonmerge

import (
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
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
		ka := identities([]any{testutil.DecodeJSON(t, tc.a)})[0]
		kb := identities([]any{testutil.DecodeJSON(t, tc.b)})[0]
		if (ka == kb) != tc.sameThing {
			t.Errorf("%s: identities %q and %q, want same=%v", tc.name, ka, kb, tc.sameThing)
		}
	}
}

// TestSum: increments made on both sides are both kept, exactly, in
// decimal; what is not a number on every side present is a conflict.
func TestSum(t *testing.T) {
	for _, tc := range []struct {
		base, ours, theirs string // "" = absent
		want               string
		conflict           bool
	}{
		{`5`, `6`, `6`, `7`, false},         // the same increment twice
		{`5`, `6`, `8`, `9`, false},         // +1 and +3
		{`1`, `2`, `3`, `4`, false},         // the review's failed-task counter
		{`5`, `5`, `5`, `5`, false},         // nobody changed it
		{``, `2`, `3`, `5`, false},          // created on both sides: from 0
		{`0.1`, `0.2`, `0.3`, `0.4`, false}, // exact decimals
		{`1.50`, `2.25`, `1.50`, `2.25`, false},
		{`1e2`, `101`, `1.02e2`, `103`, false}, // exponents read, written plainly
		{`-1`, `-3`, `2`, `0`, false},
		{`5`, `6`, `"six"`, ``, true},
		{`5`, `6`, ``, ``, true}, // deleted on one side, changed on the other
	} {
		side := func(s string) Side {
			if s == "" {
				return Side{Value: testutil.DecodeJSON(t, `{}`)} // the key absent
			}
			return Side{Value: testutil.DecodeJSON(t, `{"n":`+s+`}`)}
		}
		got, missing, cs := Values(side(tc.base), side(tc.ours), side(tc.theirs), Options{Keys: map[string]Strategy{"n": Sum}})
		if tc.conflict {
			if len(cs) != 1 {
				t.Errorf("%s/%s/%s: %v, want a conflict", tc.base, tc.ours, tc.theirs, got)
			}
			continue
		}
		if missing || len(cs) != 0 || canon(got) != `{"n":`+tc.want+`}` {
			t.Errorf("%s/%s/%s: %s %v, want %s", tc.base, tc.ours, tc.theirs, canon(got), cs, tc.want)
		}
	}
}

// TestSumOfIdenticalFiles: two agents that each made the same increment
// wrote byte-identical files; under sum that is still two increments.
func TestSumOfIdenticalFiles(t *testing.T) {
	f := func(s string) File { return File{Data: []byte(s)} }
	for _, opts := range []Options{{Strategy: Sum}, {Strategy: MergeObjects, Keys: map[string]Strategy{"n": Sum}}} {
		r := MergeFile("m.json", f(`{"n": 5, "s": "a"}`), f(`{"n": 6, "s": "b"}`), f(`{"n": 6, "s": "b"}`), opts)
		if !r.Clean() || !strings.Contains(string(r.Data), `"n": 7`) || !strings.Contains(string(r.Data), `"s": "b"`) {
			t.Errorf("%+v: %s %+v", opts, r.Data, r.Conflicts)
		}
	}
	res, err := Trees([]TreeFile{{Path: "m.json", Base: "b", Ours: "o", Theirs: "o"}}, TreeOptions{
		Override: Options{Strategy: Sum},
		Load: func(id string) ([]byte, error) {
			return map[string][]byte{"b": []byte(`{"n": 5}`), "o": []byte(`{"n": 6}`)}[id], nil
		},
	})
	if err != nil || len(res.Files) != 1 || !strings.Contains(string(res.Files[0].Data), `"n": 7`) {
		t.Errorf("Trees: %+v %v", res, err)
	}
}

// TestSumRefusesHugeExponents: 1e999999 written out exactly is a million
// digits; sum leaves such numbers as a conflict at once.
func TestSumRefusesHugeExponents(t *testing.T) {
	_, _, cs := Values(Side{Value: testutil.DecodeJSON(t, `{"n": 1}`)}, Side{Value: testutil.DecodeJSON(t, `{"n": 1e999999}`)}, Side{Value: testutil.DecodeJSON(t, `{"n": 1e-999999}`)}, Options{Strategy: Sum})
	if len(cs) != 1 {
		t.Errorf("conflicts %+v, want one", cs)
	}
}
