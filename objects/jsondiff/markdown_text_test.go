package jsondiff

import (
	"strings"
	"testing"
)

// TestMarkdownTextIsLiteral: agent-written text keeps no Markdown or HTML
// meaning: every character that would start markup is escaped, and
// control characters cannot start a new line.
func TestMarkdownTextIsLiteral(t *testing.T) {
	for _, in := range []string{
		"<script>alert(1)</script>",
		`"><img src=x onerror=alert(1)>`,
		"[click](javascript:alert(1))",
		"# heading\n| a | b |",
		"**bold** _it_ `code` ~~x~~",
	} {
		got := MarkdownText(in)
		for _, c := range "<>[]`*_|~&" {
			if strings.Count(got, string(c)) != strings.Count(got, `\`+string(c)) {
				t.Errorf("MarkdownText(%q) = %q: %c unescaped", in, got, c)
			}
		}
		if strings.Contains(got, "\n") {
			t.Errorf("MarkdownText(%q) = %q: a line break", in, got)
		}
	}
	if got := MarkdownCode("a`b|c\n"); got != "``a`b\\|c\\u000a``" {
		t.Errorf("MarkdownCode = %q", got)
	}
}
