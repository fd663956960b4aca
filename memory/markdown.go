package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteMarkdown writes records as a Markdown document for people to read
// (the tiered state specification's markdown bridge): a section per
// namespace, a heading per record (KIND/ID) with its times, and its
// payload, a text payload as a paragraph, anything else as a JSON block.
// Records come in the order given; List gives them sorted.
func WriteMarkdown(w io.Writer, recs []Record) error {
	var b bytes.Buffer
	b.WriteString("# Memory\n")
	if len(recs) == 0 {
		b.WriteString("\nNo records.\n")
	}
	ns := ""
	for i, r := range recs {
		if i == 0 || r.Namespace != ns {
			ns = r.Namespace
			fmt.Fprintf(&b, "\n## %s\n", mdText(ns))
		}
		fmt.Fprintf(&b, "\n### %s/%s\n\n", mdText(r.Kind), mdText(r.ID))
		fmt.Fprintf(&b, "- created: %s\n- updated: %s\n", r.CreatedAt.UTC().Format(time.RFC3339), r.UpdatedAt.UTC().Format(time.RFC3339))
		if r.ExpiresAt != nil {
			fmt.Fprintf(&b, "- expires: %s\n", r.ExpiresAt.UTC().Format(time.RFC3339))
		}
		b.WriteString("\n")
		var text string
		if json.Unmarshal(r.Payload, &text) == nil {
			fence := fenceFor(text)
			fmt.Fprintf(&b, "%stext\n%s\n%s\n", fence, text, fence)
			continue
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, r.Payload, "", "  "); err != nil {
			pretty.Reset()
			pretty.Write(r.Payload)
		}
		fence := fenceFor(pretty.String())
		fmt.Fprintf(&b, "%sjson\n%s\n%s\n", fence, pretty.String(), fence)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// fenceFor is a code fence longer than any run of backticks in s, so a
// payload cannot close its block and write Markdown of its own.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// mdText escapes what would make a heading's name Markdown.
func mdText(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune("\\`*_{}[]()#+-.!<>|", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
