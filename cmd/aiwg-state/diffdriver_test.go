package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffDriverNamesTheKey: in a clone with the drivers installed, git
// diff and git log -p head each hunk with the key the change is in, as
// the store's .gitattributes assigns diff=aiwg-json to its documents.
func TestDiffDriverNamesTheKey(t *testing.T) {
	s := newStore(t)
	doc := map[string]any{
		"goal":  "ship it",
		"risk":  map[string]any{"level": "low", "owner": "ops", "notes": []any{"a", "b", "c", "d"}, "score": 3},
		"steps": []any{map[string]any{"id": 1, "done": false}, map[string]any{"id": 2, "done": false}},
		"zeta":  1,
	}
	b, _ := json.Marshal(doc)
	mustCLI(t, s, "", "put", "plan.json", string(b))
	mustCLI(t, s, "", "set", "plan.json", "risk.notes.3", `"changed"`)
	work := filepath.Join(t.TempDir(), "work")
	gitWork(t, filepath.Dir(work), nil, "clone", "-q", s, work)
	if out := gitWork(t, work, nil, "check-attr", "diff", "plan.json"); !strings.Contains(out, "diff: aiwg-json") {
		t.Fatalf("check-attr: %s", out)
	}
	// Before the driver: git's default heading (none, or the line
	// above), not the key.
	before := gitWork(t, work, nil, "diff", "HEAD~1", "HEAD")
	out, errOut, code := cliIn(t, "install-drivers", "--repo", work, "--bin", bin, "--json")
	if code != 0 {
		t.Fatalf("install-drivers: %d %s", code, errOut)
	}
	if !strings.Contains(out, `"driver":"aiwg-json","xfuncname"`) {
		t.Errorf("install-drivers --json: %s", out)
	}
	for _, args := range [][]string{{"diff", "HEAD~1", "HEAD"}, {"log", "-p", "-1"}} {
		got := gitWork(t, work, nil, args...)
		if !strings.Contains(got, `@@ "notes"`) {
			t.Errorf("git %v heads no hunk with the key:\n%s\n(before the driver:\n%s)", args, got, before)
		}
	}
	// Setting the strategy of *.json keeps the diff attribute's line.
	mustCLI(t, s, "", "strategy", "set", "*.json", "last-write-wins")
	mustCLI(t, s, "", "set", "plan.json", "steps.1.done", `true`)
	gitWork(t, work, nil, "pull", "-q")
	if out := gitWork(t, work, nil, "check-attr", "diff", "merge", "--", "plan.json"); !strings.Contains(out, "diff: aiwg-json") || !strings.Contains(out, "merge: aiwg-last-write-wins") {
		t.Fatalf("after strategy set: %s", out)
	}
	if got := gitWork(t, work, nil, "diff", "HEAD~1", "HEAD"); !strings.Contains(got, `@@ "steps"`) {
		t.Errorf("a change in an array of objects:\n%s", got)
	}
}
