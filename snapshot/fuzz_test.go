package snapshot_test

import (
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/snapshot"
)

// FuzzParseMessage: a tag message ParseMessage takes is one Message
// writes back byte for byte, so the hook and the store read one format.
func FuzzParseMessage(f *testing.F) {
	f.Add("s1", snapshot.Message("s1", "snap-0123abcd", "manual", "all green", []string{"plan.json", "tasks"}))
	f.Add("all", snapshot.Message("all", "snap-89abcdef", "scheduled", "", []string{"."}))
	f.Add("x", "snapshot x\n\nSnapshot: snap-0123abcd\nReason: manual\nScope: ../etc\n")
	f.Add("x", "snapshot x\n\nSnapshot: snap-0123abcd\nReason: manual\nScope: .aiwg/policy.json\n")
	f.Add("x", "snapshot x\n\nSnapshot: snap-0123abcd\nReason: manual\nScope: b\nScope: a\n")
	f.Fuzz(func(t *testing.T, name, msg string) {
		fl, err := snapshot.ParseMessage(name, msg)
		if err != nil {
			return
		}
		again := snapshot.Message(name, fl.ID, fl.Reason, fl.Description, fl.Scope)
		fl2, err := snapshot.ParseMessage(name, again)
		if err != nil {
			t.Fatalf("a message written from %+v does not read back: %v", fl, err)
		}
		if fl2.ID != fl.ID || fl2.Reason != fl.Reason || strings.Join(fl2.Scope, "\n") != strings.Join(fl.Scope, "\n") {
			t.Fatalf("%+v read back as %+v", fl, fl2)
		}
	})
}

// FuzzCleanScope: a scope CleanScope takes is clean already, and covers
// each path given.
func FuzzCleanScope(f *testing.F) {
	for _, s := range []string{"plan.json\ntasks/", ".", "a\na/b", ".aiwg/x", "../x", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, paths string) {
		in := strings.Split(paths, "\n")
		out, err := snapshot.CleanScope(in)
		if err != nil {
			return
		}
		if again, err := snapshot.CleanScope(out); err != nil || strings.Join(again, "\n") != strings.Join(out, "\n") {
			t.Fatalf("%q cleaned to %q, then %q %v", in, out, again, err)
		}
	})
}
