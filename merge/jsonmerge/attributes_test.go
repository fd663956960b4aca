package jsonmerge

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

const sampleAttributes = `# comment
*.json                  merge=aiwg-merge-objects
**/variables/*.json     merge=aiwg-last-write-wins
state/**                merge=aiwg-merge-objects aiwg-keys=EVENTS:merge-arrays,SEEN:max aiwg-fallback=last-write-wins
logs/*.json             merge=aiwg-merge-arrays
raw/*.json              -merge
text/*.json             merge=text
!ignored.json           merge=aiwg-max
"quoted dir/*.json"     merge=aiwg-max
docs/*.json             aiwg-fallback=first-write-wins
`

func TestAttributesLookup(t *testing.T) {
	a, err := ParseAttributes([]byte(sampleAttributes))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path     string
		strategy Strategy
		ok       bool
		fallback Strategy
		keys     string
	}{
		{"plan.json", MergeObjects, true, "", ""},
		{"global/variables/x.json", LastWriteWins, true, "", ""},
		{"sessions/s1/variables/y.json", LastWriteWins, true, "", ""},
		{"state/state.json", MergeObjects, true, LastWriteWins, "EVENTS:merge-arrays SEEN:max"},
		{"logs/a.json", MergeArrays, true, "", ""},
		{"raw/a.json", "", false, "", ""},
		{"text/a.json", "", false, "", ""},
		{"ignored.json", MergeObjects, true, "", ""},
		{"quoted dir/a.json", Max, true, "", ""},
		{"docs/a.json", MergeObjects, true, FirstWriteWins, ""},
		{"notes.txt", "", false, "", ""},
	}
	for _, c := range cases {
		o, ok := a.Lookup(c.path)
		var keys []string
		for _, k := range []string{"EVENTS", "SEEN"} {
			if s, found := o.Keys[k]; found {
				keys = append(keys, k+":"+string(s))
			}
		}
		if o.Strategy != c.strategy || ok != c.ok || o.Fallback != c.fallback || strings.Join(keys, " ") != c.keys {
			t.Errorf("Lookup(%q) = %+v %v, want %s %v fallback %q keys %q", c.path, o, ok, c.strategy, c.ok, c.fallback, c.keys)
		}
	}
}

// TestAttributesAgreeWithGit: for every path, the merge attribute we read
// is the one git check-attr reports, so git's drivers and our merge pick
// the same strategy.
func TestAttributesAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	testutil.Git{}.Run(t, "init", "-q", dir)
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte(sampleAttributes), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ParseAttributes([]byte(sampleAttributes))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"plan.json", "global/variables/x.json", "a/b/variables/c.json", "state/x/y.json", "logs/a.json",
		"logs/deep/a.json", "raw/a.json", "text/a.json", "ignored.json", "quoted dir/a.json", "docs/a.json", "x.txt", "variables/v.json"}
	out := testutil.Git{Dir: dir}.Output(t, append([]string{"check-attr", "merge", "--"}, paths...)...)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		i := strings.LastIndex(line, ": merge: ")
		if i < 0 {
			continue // git's warning about the negative pattern
		}
		path, value := line[:i], line[i+len(": merge: "):]
		path = strings.Trim(path, `"`)
		o, ok := a.Lookup(path)
		want, isOurs := strings.CutPrefix(value, DriverPrefix)
		if ok != isOurs || (ok && string(o.Strategy) != want) {
			t.Errorf("%s: git says merge=%s, we say %q (%v)", path, value, o.Strategy, ok)
		}
	}
}

func TestParseAttributesRefuses(t *testing.T) {
	for _, bad := range []string{
		"*.json merge=aiwg-lww",
		"*.json aiwg-keys=EVENTS",
		"*.json aiwg-keys=EVENTS:nope",
		"*.json aiwg-fallback",
		"*.json aiwg-fallback=bogus",
	} {
		if _, err := ParseAttributes([]byte(bad)); !errors.Is(err, ErrInvalidAttributes) {
			t.Errorf("ParseAttributes(%q) = %v", bad, err)
		}
	}
	if _, err := ParseAttributes([]byte("*.json merge=aiwg-lww")); !errors.Is(err, ErrUnknownStrategy) {
		t.Error("an unknown driver does not wrap ErrUnknownStrategy")
	}
	// What git ignores, we ignore.
	for _, ok := range []string{"", "# x", "[attr]binary -diff -merge", "a[ merge=aiwg-max", "*.json merge=other-driver", `"unterminated merge=aiwg-max`} {
		if _, err := ParseAttributes([]byte(ok)); err != nil {
			t.Errorf("ParseAttributes(%q) = %v", ok, err)
		}
	}
}

func FuzzParseAttributes(f *testing.F) {
	f.Add([]byte(sampleAttributes), "state/a.json")
	f.Add([]byte("\"a\\\"b\" merge=aiwg-max\n"), `a"b`)
	f.Add([]byte("* -aiwg-keys !aiwg-fallback merge\n"), "x")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		a, err := ParseAttributes(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidAttributes) {
				t.Fatalf("error %v does not wrap ErrInvalidAttributes", err)
			}
			return
		}
		o, ok := a.Lookup(path)
		if ok && !o.Strategy.valid() {
			t.Fatalf("Lookup(%q) gave an invalid strategy %q", path, o.Strategy)
		}
		for k, s := range o.Keys {
			if k == "" || !s.valid() {
				t.Fatalf("Lookup(%q) keys %v", path, o.Keys)
			}
		}
	})
}
