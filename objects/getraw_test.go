package objects

import (
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Keys gjson would read as syntax: each must be found as a literal key.
var awkwardKeys = []string{
	"a.b", "*", "a*", "?", "a?b", "#", "#.x", "@this", "@reverse", "a|b", "!true",
	"[x]", "{x}", "a=b", "a==1", "<", ">", "%", "\\", "a\\.b", "..", "-", "0", "01",
	"é", "日本", "😀", " ", "a b", "\"", "\n", "\t", "\u2028", "\x7f", ":", "()",
	"#(x==1)", "a.#", "@", "~", "/", "a/b",
}

func TestGetRawAwkwardKeys(t *testing.T) {
	doc := map[string]any{}
	for i, k := range awkwardKeys {
		doc[k] = map[string]any{k: []any{i, map[string]any{"v": k}}}
	}
	data, err := Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range awkwardKeys {
		for _, p := range []verbiage.Path{
			{{Key: k}},
			{{Key: k}, {Key: k}},
			{{Key: k}, {Key: k}, {Key: "1"}, {Key: "v"}},
		} {
			want, _ := Encode(mustGet(t, doc, p))
			got, err := GetRaw(data, p)
			if err != nil || string(got) != string(want) {
				t.Errorf("GetRaw(%q) = %q, %v; want %q", p.String(), got, err, want)
			}
		}
	}
}

func mustGet(t *testing.T, doc any, p verbiage.Path) any {
	t.Helper()
	v, err := Get(doc, p)
	if err != nil {
		t.Fatalf("Get(%q): %v", p.String(), err)
	}
	return v
}

func TestGetRaw(t *testing.T) {
	canonical, err := Canonical([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	doc := mustDecode(t, sample)
	for _, data := range [][]byte{canonical, []byte(sample)} {
		for _, path := range []string{
			"", "a", "a.b", "a.b.0", "a.b.1", "a.b.1.c", "a.b.2", "a.n", `dot\.key`, `dot\.key.0`,
			`dot\.key.-`, "list", "a.b.3", "a.b.-", "a.b.01", "a.b.+1", "a.b.#", "a.missing", "a.s.x",
			"a.n.x", "a.b.0.x", "list.0", "a.*",
		} {
			p := verbiage.MustParsePath(path)
			got, gerr := GetRaw(data, p)
			v, verr := Get(doc, p)
			if sentinelName(gerr) != sentinelName(verr) {
				t.Errorf("GetRaw(%q) error %v, Get error %v", path, gerr, verr)
				continue
			}
			if verr != nil {
				if gerr.Error() != verr.Error() {
					t.Errorf("GetRaw(%q) error %q, Get says %q", path, gerr, verr)
				}
				continue
			}
			if want := mustEncode(t, v); string(got) != want {
				t.Errorf("GetRaw(%q) = %q, want %q", path, got, want)
			}
		}
	}
}

func TestGetRawInvalidData(t *testing.T) {
	_, err := GetRaw([]byte(`{"a":1,"a":2}`), verbiage.MustParsePath("a"))
	if !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("GetRaw on duplicate keys: %v", err)
	}
	_, err = GetRaw(nil, verbiage.MustParsePath("a"))
	if !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("GetRaw on empty data: %v", err)
	}
}

func TestGetRawEmptyKey(t *testing.T) {
	data := []byte("{\n  \"\": {\n    \"x\": 1\n  }\n}\n")
	got, err := GetRaw(data, verbiage.Path{{Key: ""}, {Key: "x"}})
	if err != nil || string(got) != "1\n" {
		t.Errorf("GetRaw of an empty key = %q, %v", got, err)
	}
}
