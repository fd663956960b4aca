package verbiage

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"", "/", ".", "a.b.0.c", "/a/b/-", `a\.b`, `\*`, "*", "a/*/b", `a\`, "a..b", `\/`, `\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		_ = p.Pointer()
		q, err := ParsePath(p.String())
		if err != nil {
			t.Fatalf("ParsePath(%q) = %#v, but its String %q does not parse: %v", s, p, p.String(), err)
		}
		if !samePath(p, q) {
			t.Fatalf("ParsePath(%q) = %#v; String %q parses to %#v", s, p, p.String(), q)
		}
	})
}

// samePath compares segment by segment; the root may be nil or empty.
func samePath(p, q Path) bool {
	return len(p) == len(q) && (len(p) == 0 || p.HasPrefix(q))
}

func FuzzNormalizeKey(f *testing.F) {
	for _, s := range []string{"", "goals", " my  goal ", "a--b", "-a", "a-", "goal_1", "café", "\t\tx\t", "A\u00a0B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := NormalizeKey(s)
		if err != nil {
			if out != "" {
				t.Fatalf("NormalizeKey(%q) returned %q with error %v", s, out, err)
			}
			_ = err.Error()
			return
		}
		if !ValidKey(out) {
			t.Fatalf("NormalizeKey(%q) = %q, not a valid key", s, out)
		}
		if again, err := NormalizeKey(out); err != nil || again != out {
			t.Fatalf("NormalizeKey not idempotent: %q -> %q -> %q, %v", s, out, again, err)
		}
		if ValidKey(s) && out != s {
			t.Fatalf("NormalizeKey changed the valid key %q to %q", s, out)
		}
	})
}

func FuzzCleanStorePath(f *testing.F) {
	for _, s := range []string{"a.json", "./a/b.json", "", "/a", "a//b", "../a", ".git/x", ".GIT./x", "git~1", "a\\b", "a/", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(name string, clean func(string) (string, error), out string) {
			if again, err := clean(out); err != nil || again != out {
				t.Fatalf("%s(%q) = %q, but a second clean gives %q, %v", name, s, out, again, err)
			}
			if !utf8.ValidString(out) || len(out) > MaxStorePathLen {
				t.Fatalf("%s(%q) = %q: invalid UTF-8 or too long", name, s, out)
			}
			if out == "" {
				return
			}
			for _, seg := range strings.Split(out, "/") {
				if seg == "" || seg == "." || seg == ".." || IsDotGit(seg) || strings.EqualFold(seg, ".git") {
					t.Fatalf("%s(%q) = %q holds the segment %q", name, s, out, seg)
				}
			}
		}
		if out, err := CleanStorePath(s); err == nil {
			if out == "" {
				t.Fatalf("CleanStorePath(%q) accepted the empty path", s)
			}
			check("CleanStorePath", CleanStorePath, out)
		}
		if out, err := CleanStoreDir(s); err == nil {
			check("CleanStoreDir", CleanStoreDir, out)
		}
	})
}

func FuzzPattern(f *testing.F) {
	for _, c := range [][2]string{
		{"*.json", "a/b.json"}, {"a/**/b", "a/x/b"}, {"[!a-c]x", "dx"}, {"[[:alpha:]]", "q"},
		{"a[", "a["}, {`a\`, "a"}, {"**/", "a/"}, {"foo**/bar", "fooX/Y/bar"}, {"[]-]", "]"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if p, err := CompilePattern(pattern); err == nil {
			_ = p.Match(path)
		}
		// Any clean path, written as an escaped anchored literal, matches
		// itself, and its escaped file name matches it at any depth.
		clean, err := CleanStorePath(path)
		if err != nil || len(clean) >= MaxPatternLen {
			return
		}
		anchored := "/" + escapeGlob(clean)
		if p, err := CompilePattern(anchored); err != nil || !p.Match(clean) {
			t.Fatalf("pattern %q (%v) does not match %q", anchored, err, clean)
		}
		base := escapeGlob(clean[strings.LastIndexByte(clean, '/')+1:])
		if p, err := CompilePattern(base); err != nil || !p.Match(clean) || !p.Match("x/"+clean) {
			t.Fatalf("pattern %q (%v) does not match %q at any depth", base, err, clean)
		}
	})
}

// escapeGlob makes every byte of s literal in a pattern.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\!`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
