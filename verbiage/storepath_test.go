package verbiage

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanStorePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"state/state.json", "state/state.json"},
		{"./state/state.json", "state/state.json"},
		{".gitattributes", ".gitattributes"},
		{".aiwg/store.json", ".aiwg/store.json"},
		{"docs/.gitkeep", "docs/.gitkeep"},
		{"docs/.github/x.json", "docs/.github/x.json"},
		{"docs/git~2", "docs/git~2"},
		{"docs/a..b.json", "docs/a..b.json"},
		{"docs/...", "docs/..."},
		{"états/ünïcode.json", "états/ünïcode.json"},
		{"a b/c d.json", "a b/c d.json"},
		{strings.Repeat("a", MaxStoreSegmentLen), strings.Repeat("a", MaxStoreSegmentLen)},
		{strings.Repeat("d/", MaxStoreDepth-1) + "f.json", strings.Repeat("d/", MaxStoreDepth-1) + "f.json"},
	} {
		got, err := CleanStorePath(c.in)
		if err != nil || got != c.want {
			t.Errorf("CleanStorePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestCleanStorePathRefuses(t *testing.T) {
	long := strings.Repeat(strings.Repeat("a", 99)+"/", 41) + "a.json"
	for _, c := range []struct{ in, why string }{
		{"", "path is empty"},
		{"./", "path is empty"},
		{"/etc/passwd", "absolute"},
		{"a//b", "empty segment"},
		{"a/./b", `segment "."`},
		{"././a", `segment "."`},
		{"../a", `segment ".."`},
		{"a/../../b", `segment ".."`},
		{"a/..", `segment ".."`},
		{".git/config", `segment ".git"`},
		{"a/.GIT/x", `segment ".GIT"`},
		{".Git", `segment ".Git"`},
		{".GIT.", `segment ".GIT."`},
		{".git. . ", "names git's own directory"},
		{"git~1/config", `segment "git~1"`},
		{"a/GIT~1", `segment "GIT~1"`},
		{".git::$INDEX_ALLOCATION/x", "names git's own directory"},
		{".g\u200cit/x", "names git's own directory"},
		{"\ufeff.git", "names git's own directory"},
		{`a\b`, "backslash at byte 1"},
		{"a\x00b", `control character '\x00' at byte 1`},
		{"a/b\nc", `control character '\n' at byte 3`},
		{"a\x7f", "control character"},
		{"a\u0085", "control character"},
		{"a/", "ends with a slash"},
		{"a\xffb", "not valid UTF-8"},
		{long, "at most 4096"},
		{strings.Repeat("a", MaxStoreSegmentLen+1), "segment of 256 bytes"},
		{strings.Repeat("d/", MaxStoreDepth) + "f.json", "65 segments, at most 64"},
	} {
		got, err := CleanStorePath(c.in)
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("CleanStorePath(%q) = %q, %v; want ErrInvalidPath", c.in, got, err)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("CleanStorePath(%q) = %v, want it to say %q", c.in, err, c.why)
		}
		if len(err.Error()) > 300 {
			t.Errorf("CleanStorePath(%d bytes): message of %d bytes", len(c.in), len(err.Error()))
		}
	}
}

func TestCleanStoreDir(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{".", ""},
		{"./", ""},
		{"states", "states"},
		{"states/", "states"},
		{"./states/abc/", "states/abc"},
	} {
		got, err := CleanStoreDir(c.in)
		if err != nil || got != c.want {
			t.Errorf("CleanStoreDir(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"/", "/states", "states//", "../x", ".git", ".git/", "a/.GIT ", "a\\b"} {
		if got, err := CleanStoreDir(in); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("CleanStoreDir(%q) = %q, %v; want ErrInvalidPath", in, got, err)
		}
	}
}

// FuzzSameOnCheckout: the clash test is symmetric, never true of a name
// and itself, and agrees with FoldName, which the bulk check keys a map
// by: two names that clash have one key.
func FuzzSameOnCheckout(f *testing.F) {
	for _, p := range [][2]string{
		{"caf\u00e9.json", "cafe\u0301.json"}, {"Cafe", "cafe"}, {"s", "\u017f"},
		{"K", "\u212a"}, {"\u00c5", "A\u030a"}, {"\u212b", "\u00e5"}, {"a", "b"}, {"", ""},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		same := SameOnCheckout(a, b)
		if same != SameOnCheckout(b, a) {
			t.Fatalf("SameOnCheckout(%q, %q) is not symmetric", a, b)
		}
		if SameOnCheckout(a, a) {
			t.Fatalf("SameOnCheckout(%q, itself)", a)
		}
		if same && FoldName(a) != FoldName(b) {
			t.Fatalf("%q and %q clash but fold to %q and %q", a, b, FoldName(a), FoldName(b))
		}
	})
}
