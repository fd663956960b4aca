package audit

import (
	"testing"

	"github.com/aiwg/aiwg-state/objects"
)

func TestPredicates(t *testing.T) {
	doc, _ := objects.Decode([]byte(`{"risk":{"level":"high","score":7.5},"n":null,"tags":["a"]}`))
	cases := []struct {
		pred string
		want bool
	}{
		{`docs/plan.json#risk.level == "high"`, true},
		{`docs/plan.json#risk.level=="high"`, true},
		{`docs/plan.json#risk.level != "high"`, false},
		{`docs/plan.json#risk.level != "low"`, true},
		{`docs/plan.json#risk.owner != "low"`, false}, // missing key: false
		{`docs/plan.json#risk.score > 7`, true},
		{`docs/plan.json#risk.score < 7.5`, false},
		{`docs/plan.json#risk.score <= 7.5`, true},
		{`docs/plan.json#risk.score >= 1e1`, false},
		{`docs/plan.json#risk.level > 1`, false}, // not a number
		{`docs/plan.json#n == null`, true},
		{`docs/plan.json#tags.0 exists`, true},
		{`docs/plan.json#tags.1 exists`, false},
		{`! docs/plan.json#tags.1 exists`, true},
		{`docs/plan.json exists`, true},
	}
	for _, c := range cases {
		p, err := ParsePredicate(c.pred)
		if err != nil {
			t.Fatalf("%s: %v", c.pred, err)
		}
		if got := p.Eval(doc, true); got != c.want {
			t.Errorf("%s = %v, want %v", c.pred, got, c.want)
		}
		again, err := ParsePredicate(p.String())
		if err != nil || again.String() != p.String() {
			t.Errorf("%s: String %q does not read back: %v", c.pred, p.String(), err)
		}
	}
	if p, _ := ParsePredicate(`a.json exists`); p.Eval(nil, false) {
		t.Error("exists on a missing document")
	}
	for _, bad := range []string{``, `a.json`, `a.json#x ==`, `a.json#x == high`, `a.json#x < "a"`, `a.json#x ~ 1`, `../a.json#x == 1`, `a.json#* == 1`} {
		if _, err := ParsePredicate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParsePredicate(f *testing.F) {
	for _, s := range []string{`docs/plan.json#risk.level == "high"`, `a.json#x > 1e3`, `! a.json exists`, `a.json#a\.b != [1,{"x":null}]`, `a.json#x <= -0.5`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePredicate(s)
		if err != nil {
			return
		}
		again, err := ParsePredicate(p.String())
		if err != nil {
			t.Fatalf("%q -> %q does not parse: %v", s, p.String(), err)
		}
		if again.String() != p.String() {
			t.Fatalf("%q -> %q -> %q", s, p.String(), again.String())
		}
		p.Eval(map[string]any{"x": "1"}, true)
	})
}
