package verbiage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// gitOracle answers "does git match this path with this pattern?" by writing
// the pattern to .gitattributes in a scratch repository and asking
// git check-attr, so the tests hold Match to git's behaviour rather than to
// our reading of the manual.
type gitOracle struct {
	dir string
	env []string
}

func newGitOracle(t testing.TB) *gitOracle {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: no oracle")
	}
	dir := t.TempDir()
	home := t.TempDir()
	o := &gitOracle{dir: dir, env: []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"HOME=" + home, "XDG_CONFIG_HOME=" + home, "LC_ALL=C"}}
	o.run(t, nil, "init", "-q", ".")
	return o
}

func (o *gitOracle) run(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	g := testutil.Git{Dir: o.dir, Config: []string{"core.ignorecase=false"}, Env: o.env, Stdin: string(stdin)}
	return []byte(g.Output(t, args...))
}

// matches returns, for each path, whether git sets the attribute "test" on it
// from the single line "<pattern> test=set".
func (o *gitOracle) matches(t testing.TB, pattern string, paths []string) []bool {
	t.Helper()
	line := gitattributesPattern(pattern) + " test=set\n"
	if err := os.WriteFile(filepath.Join(o.dir, ".gitattributes"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out := o.run(t, in.Bytes(), "check-attr", "-z", "--stdin", "test")
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(fields) != 3*len(paths) {
		t.Fatalf("check-attr for %q: %d fields for %d paths: %q", pattern, len(fields), len(paths), out)
	}
	got := make([]bool, len(paths))
	for i := range paths {
		if fields[3*i] != paths[i] {
			t.Fatalf("check-attr answered for %q, asked %q", fields[3*i], paths[i])
		}
		got[i] = fields[3*i+2] == "set"
	}
	return got
}

// gitattributesPattern writes a pattern as a .gitattributes line must hold
// it: C-quoted when it holds white space or starts like a comment or quote.
func gitattributesPattern(p string) string {
	if !strings.ContainsAny(p, " \t\r") && p[0] != '"' && p[0] != '#' {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

type patternCase struct {
	pattern, path string
	want          bool
}

var patternCases = []patternCase{
	// No slash: the file name at any depth.
	{"*.json", "a.json", true},
	{"*.json", "states/x/a.json", true},
	{"*.json", "a.json.bak", false},
	{"*.json", "json", false},
	{"*.json", ".json", true},
	{"state.json", "states/abc/state.json", true},
	{"state.json", "states/abc/xstate.json", false},
	{"states", "states/abc/state.json", false}, // a directory's attributes are not inherited
	{"s?ate.json", "state.json", true},
	{"s?ate.json", "s/ate.json", false},
	{"a*", "b/abc", true},
	{"*", "a/b/c", true},
	{"**", "a/b/c", true},
	{"**a", "x/ba", true},

	// A slash anchors at the root.
	{"states/*.json", "states/a.json", true},
	{"states/*.json", "x/states/a.json", false},
	{"states/*.json", "states/x/a.json", false},
	{"/states/*.json", "states/a.json", true},
	{"/state.json", "state.json", true},
	{"/state.json", "a/state.json", false},
	{"a/b", "a/b", true},
	{"a/b", "a/b/c", false},
	{"a/b", "x/a/b", false},
	{"a/*", "a/b", true},
	{"a/*", "a/b/c", false},
	{"a/*/c", "a/b/c", true},
	{"a/*/c", "a/b/x/c", false},
	{"a/?", "a/b", true},
	{"a?b", "x/acb", true},
	{"a?b", "a/b", false}, // a basename pattern sees only "b"
	{"a/?/c", "a///c", false},

	// "**".
	{"**/state.json", "state.json", true},
	{"**/state.json", "states/abc/state.json", true},
	{"**/states/*.json", "x/y/states/a.json", true},
	{"**/states/*.json", "states/a.json", true},
	{"states/**", "states/a.json", true},
	{"states/**", "states/x/y/a.json", true},
	{"states/**", "states", false},
	{"states/**", "statesx/a", false},
	{"a/**/b", "a/b", true},
	{"a/**/b", "a/x/b", true},
	{"a/**/b", "a/x/y/b", true},
	{"a/**/b", "a/xb", false},
	{"a/**/b", "ab", false},
	{"a/**/**/b", "a/b", true},
	{"a/**b", "a/x/b", false}, // "**" not followed by '/' is a plain '*'
	{"a/**b", "a/xb", true},
	{"a**/b", "a/b", true},
	{"a**/b", "ax/y/b", true}, // git quirk: "**" right after the literal prefix acts as leading
	{"a/foo**", "a/foo/x/y", true},
	{"a/x**y/b", "a/x/q/y/b", false},
	{"a/\\**", "a/*", true},
	{"a/\\**", "a/*b/c", false},
	{"**/", "a/", true},
	{"/**", "a/b", true},

	// Character classes.
	{"[abc].json", "b.json", true},
	{"[abc].json", "d.json", false},
	{"[a-c].json", "b.json", true},
	{"[!a-c].json", "b.json", false},
	{"[!a-c].json", "d.json", true},
	{"[^a-c].json", "d.json", true},
	{"[]].json", "].json", true},
	{"[!]].json", "].json", false},
	{"[a-].json", "-.json", true},
	{"[-a].json", "-.json", true},
	{"[\\]].json", "].json", true},
	{"[[:digit:]].json", "7.json", true},
	{"[[:digit:]].json", "x.json", false},
	{"[[:upper:][:digit:]]x", "Qx", true},
	{"[[:space:]]", " ", true},
	{"[[:space:]]", "\v", false}, // git's own ctype has no \v in space
	{"[[:punct:]]", "$", true},
	{"[[:]x", ":x", true},
	{"[[:]x", "[x", true},
	{"a/[/]b", "a//b", false},
	{"a/[!x]b", "a//b", false},
	{"[a-c]-*", "b-x", true},

	// Escapes and special characters.
	{"\\*.json", "*.json", true},
	{"\\*.json", "a.json", false},
	{"\\!x", "!x", true},
	{"a\\/b", "a/b", true},
	{"a\\/b", "x/a/b", false},
	{"#x", "#x", true},
	{"a b", "a b", true},
	{"\"q\"", "\"q\"", true},
	{"é*", "été", true},
	{"?.json", "é.json", false}, // '?' is one byte, é is two

	// Directory patterns match directories only.
	{"dir/", "dir/", true},
	{"dir/", "dir", false},
	{"dir/", "a/dir/", true},
	{"dir/", "dir/x", false},
	{"a/dir/", "a/dir/", true},
	{"a/dir/", "x/a/dir/", false},
	{"d*/", "dx/", true},
}

func TestPatternMatch(t *testing.T) {
	var oracle *gitOracle
	if _, err := exec.LookPath("git"); err == nil {
		oracle = newGitOracle(t)
	}
	// One git run per pattern, for all of its rows.
	var order []string
	rows := map[string][]patternCase{}
	for _, c := range patternCases {
		if rows[c.pattern] == nil {
			order = append(order, c.pattern)
		}
		rows[c.pattern] = append(rows[c.pattern], c)
	}
	for _, pat := range order {
		p, err := CompilePattern(pat)
		if err != nil {
			t.Errorf("CompilePattern(%q): %v", pat, err)
			continue
		}
		paths := make([]string, len(rows[pat]))
		for i, c := range rows[pat] {
			paths[i] = c.path
			if got := p.Match(c.path); got != c.want {
				t.Errorf("CompilePattern(%q).Match(%q) = %v, want %v", pat, c.path, got, c.want)
			}
		}
		if oracle == nil {
			continue
		}
		for i, git := range oracle.matches(t, pat, paths) {
			if c := rows[pat][i]; git != c.want {
				t.Errorf("git check-attr with %q on %q: %v, the table says %v", pat, c.path, git, c.want)
			}
		}
	}
}

// TestPatternAgreesWithGit checks random patterns against git on random
// paths: the table above covers what we thought of, this covers the rest.
func TestPatternAgreesWithGit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git a few hundred times")
	}
	oracle := newGitOracle(t)
	rng := rand.New(rand.NewPCG(4, 2))
	pieces := []string{"a", "b", "a", "b", "/", "/", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "[]a]",
		"[[:alpha:]]", "[^b/]", "\\*", "\\/", "-", ".", "[", "]", "\\", "!",
		"[[:", ":]", "[a\\-c]", "\\[", "[\\]a]", "[!]", "[--]", "***", "/**/", "**/", "/**", "[*]",
		"[?]", "[/]", "[a-]", "[b-a]", "[[:punct:]]", "[[:x:]]", ":", "[:", "[!*]"}
	pathPieces := []string{"a", "b", "ab", "ba", "*", "-", ".", "]", "[", "!", "c"}
	randPath := func() string {
		segs := make([]string, 1+rng.IntN(4))
		for i := range segs {
			var s strings.Builder
			for n := 1 + rng.IntN(3); n > 0; n-- {
				s.WriteString(pathPieces[rng.IntN(len(pathPieces))])
			}
			segs[i] = s.String()
			if strings.Trim(segs[i], ".") == "" {
				segs[i] += "a" // git resolves "." and ".." before matching
			}
		}
		p := strings.Join(segs, "/")
		if rng.IntN(8) == 0 {
			p += "/"
		}
		return p
	}
	const patterns, pathsEach = 400, 40
	compiled, refused := 0, 0
	for range patterns {
		var b strings.Builder
		for n := 1 + rng.IntN(6); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		pat := b.String()
		paths := make([]string, pathsEach)
		for i := range paths {
			paths[i] = randPath()
		}
		git := oracle.matches(t, pat, paths)
		p, err := CompilePattern(pat)
		if err != nil {
			// A refused pattern must be one git never matches.
			refused++
			for i, m := range git {
				if m {
					t.Errorf("CompilePattern(%q) refused (%v), but git matches %q", pat, err, paths[i])
				}
			}
			continue
		}
		compiled++
		for i, path := range paths {
			if got := p.Match(path); got != git[i] {
				t.Errorf("pattern %q, path %q: Match = %v, git = %v", pat, path, got, git[i])
			}
		}
	}
	t.Logf("%d patterns compiled, %d refused, %d paths each", compiled, refused, pathsEach)
}

func TestCompilePatternErrors(t *testing.T) {
	for _, c := range []struct{ pattern, why string }{
		{"", "empty"},
		{"!*.json", "negative patterns"},
		{"[attr]binary", "macro"},
		{"a[bc", "not closed"},
		{"a[", "not closed"},
		{"[]", "not closed"},
		{"[[:alpha:]", "not closed"},
		{"[[:nope:]]", "unknown character class"},
		{"[[::]]", "unknown character class"},
		{"a\\", "lone backslash"},
		{"/", "names no path"},
		{"a\x00b", "NUL"},
		{strings.Repeat("a", MaxPatternLen+1), "at most"},
	} {
		_, err := CompilePattern(c.pattern)
		if !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("CompilePattern(%q) = %v, want ErrInvalidPattern", c.pattern, err)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("CompilePattern(%q) = %q, want it to say %q", c.pattern, err, c.why)
		}
	}
}

// TestRefusedPatternsNeverMatchInGit backs the claim that CompilePattern only
// refuses what git would ignore or never match.
func TestRefusedPatternsNeverMatchInGit(t *testing.T) {
	oracle := newGitOracle(t)
	paths := []string{"a", "ab", "abc", "a[bc", "a[", "x", "[]", "a\\", "binary", "x.json", "!x.json"}
	for _, pat := range []string{"a[bc", "a[", "[]", "[[:nope:]]", "a\\", "!*.json", "[attr]binary"} {
		for i, m := range oracle.matches(t, pat, paths) {
			if m {
				t.Errorf("git matches %q with %q, yet CompilePattern refuses it", paths[i], pat)
			}
		}
	}
}

func TestPatternString(t *testing.T) {
	p, err := CompilePattern("states/**/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if p.String() != "states/**/*.json" {
		t.Errorf("String() = %q", p.String())
	}
	var zero Pattern
	if zero.Match("a") || zero.Match("") {
		t.Error("the zero Pattern matched")
	}
}

func BenchmarkPatternMatch(b *testing.B) {
	for _, c := range []struct{ pattern, path string }{
		{"*.json", "states/state-a1b2c3d4/variables/risk_count.json"},
		{"states/**/variables/*.json", "states/state-a1b2c3d4/variables/risk_count.json"},
		{"trajectories/*/iterations/[0-9][0-9][0-9][0-9].json", "trajectories/traj-0badc0de/iterations/0042.json"},
	} {
		p, err := CompilePattern(c.pattern)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.pattern, func(b *testing.B) {
			for b.Loop() {
				if !p.Match(c.path) {
					b.Fatal("no match")
				}
			}
		})
	}
}
