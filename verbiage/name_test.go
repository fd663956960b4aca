package verbiage

import (
	"errors"
	"strings"
	"testing"
)

func TestValidIdentifier(t *testing.T) {
	for _, name := range []string{"Final", "prompt", "doc_summary", "_private", "x", "riskCount", "a1", strings.Repeat("n", MaxIdentifierLen)} {
		if err := ValidIdentifier(name); err != nil {
			t.Errorf("ValidIdentifier(%q) = %v", name, err)
		}
	}
	for _, c := range []struct{ name, why string }{
		{"", "name is empty"},
		{"1st", "starts with a digit"},
		{"risk-count", `character '-' at position 4 is not allowed`},
		{"risk count", `character ' ' at position 4`},
		{"café", `character 'é' at position 3`},
		{"a\xffb", "byte 0xff (invalid UTF-8) at position 1"},
		{"a.b", `character '.'`},
		{strings.Repeat("n", MaxIdentifierLen+1), "129 bytes long, at most 128"},
	} {
		err := ValidIdentifier(c.name)
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidIdentifier(%q) = %v, want ErrInvalidName", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("ValidIdentifier(%q) = %q, want it to say %q", c.name, err, c.why)
		}
	}
}

func TestNamingAdvice(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string // one substring per expected piece of advice, in order
	}{
		{"doc_summary", nil},
		{"api_endpoints", nil},
		{"security_score", nil},
		{"error_count", nil},
		{"Final", nil},
		{"prompt", nil},
		{"api_v2", nil},
		{"sha256", nil},
		{"url", nil},
		{"age", nil},
		{"bad-name", nil}, // invalid: the error says it, not advice
		{"x", []string{`"x" is not descriptive`}},
		{"_", []string{`"_" is not descriptive`}},
		{"ds", []string{`"ds" may be an unclear abbreviation`}},
		{"cfg", []string{"unclear abbreviation"}},
		{"data1", []string{`"data1" looks like a numbered variable`}},
		{"result_2", []string{"numbered variable"}},
		{"riskCount", []string{`"riskCount" is not snake_case: prefer "risk_count"`}},
		{"HTTPServer", []string{`prefer "http_server"`}},
		{"RISK_COUNT", []string{`prefer "risk_count"`}},
		{"risk__count", []string{`prefer "risk_count"`}},
		{"dataSet2", []string{"numbered variable", `prefer "data_set2"`}},
		{"DS", []string{"unclear abbreviation", `prefer "ds"`}},
	} {
		got := NamingAdvice(c.name)
		if len(got) != len(c.want) {
			t.Errorf("NamingAdvice(%q) = %q, want %d pieces of advice", c.name, got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("NamingAdvice(%q)[%d] = %q, want it to say %q", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func TestValidID(t *testing.T) {
	for _, c := range []struct {
		prefix, id string
		want       bool
	}{
		{PrefixState, "state-a1b2c3d4", true},
		{PrefixMutation, "mut-00000000", true},
		{PrefixCheckpoint, "ckpt-deadbeef", true},
		{PrefixTrajectory, "traj-0123abcd", true},
		{PrefixTree, "tree-ffffffff", true},
		{PrefixState, "state-A1B2C3D4", false}, // uppercase hex
		{PrefixState, "state-a1b2c3d", false},
		{PrefixState, "state-a1b2c3d4e", false},
		{PrefixState, "state_a1b2c3d4", false},
		{PrefixState, "statea1b2c3d4x", false},
		{PrefixState, "mut-a1b2c3d4", false},
		{PrefixTree, "tree-12345g78", false},
		{PrefixTree, "tree-report001", false}, // an example in the specification that breaks its own pattern
		{"", "-a1b2c3d4", false},
	} {
		if got := ValidID(c.prefix, c.id); got != c.want {
			t.Errorf("ValidID(%q, %q) = %v, want %v", c.prefix, c.id, got, c.want)
		}
	}
}
