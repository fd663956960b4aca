package memory

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWriteMarkdown(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	exp := at.Add(time.Hour)
	recs := []Record{
		{Key: Key{Namespace: "long_term", Kind: "fact", ID: "f1"}, Payload: json.RawMessage(`{"topic":"auth","n":1}`), CreatedAt: at, UpdatedAt: at},
		{Key: Key{Namespace: "long_term", Kind: "note", ID: "n_1"}, Payload: json.RawMessage(`"uses ` + "```" + ` fences"`), CreatedAt: at, UpdatedAt: at},
		{Key: Key{Namespace: "session", Kind: "ctx", ID: "c1"}, Payload: json.RawMessage(`[1]`), CreatedAt: at, UpdatedAt: at, ExpiresAt: &exp},
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, recs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# Memory\n", "\n## long\\_term\n", "\n### fact/f1\n", "- created: 2026-03-01T12:00:00Z\n",
		"```json\n{\n  \"topic\": \"auth\",\n  \"n\": 1\n}\n```\n",
		"\n### note/n\\_1\n", "````text\nuses ``` fences\n````\n",
		"\n## session\n", "- expires: 2026-03-01T13:00:00Z\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n## ") != 2 {
		t.Errorf("one section per namespace:\n%s", out)
	}
	b.Reset()
	WriteMarkdown(&b, nil)
	if b.String() != "# Memory\n\nNo records.\n" {
		t.Errorf("empty: %q", b.String())
	}
}
