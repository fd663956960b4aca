package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func renderFixture(t *testing.T) []Change {
	t.Helper()
	read := func(name string) any {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return testutil.DecodeJSON(t, b)
	}
	return Diff(read("render_old.json"), read("render_new.json"), Options{})
}

func TestRenderGolden(t *testing.T) {
	changes := renderFixture(t)
	var text, color, md bytes.Buffer
	if err := WriteText(&text, "state/agent.json", changes, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&color, "state/agent.json", changes, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, "state/agent.json", changes); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(changes, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "render.txt.golden", text.Bytes())
	golden(t, "render.color.txt.golden", color.Bytes())
	golden(t, "render.md.golden", md.Bytes())
	golden(t, "render.json.golden", append(js, '\n'))
}

func TestRenderNoTerminalControl(t *testing.T) {
	// State is written by agents; what it holds must not reach the reader's
	// terminal as control sequences, in values, keys or text diffs.
	evil := "\x1b[2J\x1b]0;pwned\x07\u202e\u0085"
	old := map[string]any{"k" + evil: "a", "long": strings.Repeat("word ", 20) + evil + "\nsecond line", "v": "x"}
	new := map[string]any{"k" + evil: "b", "long": strings.Repeat("word ", 20) + "\nsecond line " + evil, "v": evil}
	changes := Diff(old, new, Options{})
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteText(&b, "f"+evil, changes, TextOptions{Color: color}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if color {
			out = stripANSI(out)
		}
		if strings.ContainsAny(out, "\x1b\x07\u202e\u0085") {
			t.Errorf("text output (color=%v) carries control characters: %q", color, out)
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, "f"+evil, changes); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(md.String(), "\x1b\x07\u202e\u0085") {
		t.Errorf("markdown carries control characters: %q", md.String())
	}
}

// stripANSI removes the colour codes this package writes, and only those.
func stripANSI(s string) string {
	for _, code := range []string{ansiReset, ansiBold, ansiRed, ansiGreen, ansiYellow, ansiCyan, ansiDim} {
		s = strings.ReplaceAll(s, code, "")
	}
	return s
}

func TestWriteText(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"changed", `{"risk":{"level":"low"}}`, `{"risk":{"level":"high"}}`, "~ risk.level: \"low\" → \"high\"\n"},
		{"added", `{"items":[1,2,3]}`, `{"items":[1,2,3,{"id":"t4"}]}`, "+ items.3: {\"id\":\"t4\"}\n"},
		{"removed", `{"owner":"alice"}`, `{}`, "- owner: \"alice\"\n"},
		{"moved", `{"a":{"b":[1]},"c":{}}`, `{"a":{},"c":{"d":[1]}}`, "→ a.b moved to c.d\n"},
		{"truncated", `{}`, `{"x":"` + strings.Repeat("y", 70) + `"}`, "+ x: \"" + strings.Repeat("y", 58) + "…\n"},
		{"word diff", `{"s":"` + strings.Repeat("same ", 16) + `old end"}`, `{"s":"` + strings.Repeat("same ", 16) + `new end"}`,
			"~ s:\n    " + strings.Repeat("same ", 16) + "[-old-]{+new+} end\n"},
		{"line diff with context", `{"s":"1\n2\n3\n4\n5\n6\n7\n8"}`, `{"s":"1\n2\n3\n4\nfive\n6\n7\n8"}`,
			"~ s:\n    ⋯ 2 unchanged lines\n      3\n      4\n    - 5\n    + five\n      6\n      7\n      8\n"},
		{"long unchanged tail elided", `{"s":"1\n2\n3\n4\n5"}`, `{"s":"one\n2\n3\n4\n5"}`,
			"~ s:\n    - 1\n    + one\n      2\n      3\n    ⋯ 2 unchanged lines\n"},
		{"missing final newline", `{"s":"a\nb\n"}`, `{"s":"a\nb"}`,
			"~ s:\n    ⋯ 2 unchanged lines\n    \\ no newline at end of new text\n"},
		{"root", `{"a":1}`, `[]`, "~ (root): {\"a\":1} → []\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			changes := Diff(testutil.DecodeJSON(t, []byte(tt.old)), testutil.DecodeJSON(t, []byte(tt.new)), Options{})
			if err := WriteText(&b, "", changes, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("WriteText\n got: %q\nwant: %q", b.String(), tt.want)
			}
		})
	}
}

func TestWriteTextNoChanges(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, "a.json", nil, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "a.json\n  (no changes)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWriteMarkdownCells(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string // a line the table must contain
	}{
		{"pipes escaped", `{"a":"x"}`, `{"a":"x|y"}`, "| `a` | changed | `\"x\"` | `\"x\\|y\"` |"},
		{"backticks in code span", `{}`, "{\"k`\":\"a``b\"}", "| `` k` `` | added |  | ```\"a``b\"``` |"},
		{"moved", `{"a":{"b":[1]},"c":{}}`, `{"a":{},"c":{"d":[1]}}`, "| `c.d` | moved from `a.b` |  |  |"},
		{"removed", `{"gone":null}`, `{}`, "| `gone` | removed | `null` |  |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			changes := Diff(testutil.DecodeJSON(t, []byte(tt.old)), testutil.DecodeJSON(t, []byte(tt.new)), Options{})
			if err := WriteMarkdown(&b, "f.json", changes); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want+"\n") {
				t.Errorf("markdown lacks %q:\n%s", tt.want, b.String())
			}
		})
	}
}

func TestWriteMarkdownFenceOutlastsBackticks(t *testing.T) {
	long := strings.Repeat("x", 70) + "```"
	changes := Diff(map[string]any{}, map[string]any{"k": map[string]any{"v": long}}, Options{})
	var b bytes.Buffer
	if err := WriteMarkdown(&b, "", changes); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n````json\n") || !strings.Contains(b.String(), "<details>") {
		t.Errorf("full value not fenced beyond its backticks:\n%s", b.String())
	}
}

type failingWriter struct{}

var errWrite = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestRenderersReportWriteErrors(t *testing.T) {
	changes := []Change{{Kind: Added, Path: nil, New: "x"}}
	if err := WriteText(failingWriter{}, "f", changes, TextOptions{}); !errors.Is(err, errWrite) {
		t.Errorf("WriteText error = %v", err)
	}
	if err := WriteMarkdown(failingWriter{}, "f", changes); !errors.Is(err, errWrite) {
		t.Errorf("WriteMarkdown error = %v", err)
	}
}
