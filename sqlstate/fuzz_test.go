package sqlstate

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzLex: the lexer never panics; a trailing semicolon never makes a
// second statement; a statement appended after one makes two (unless the
// text left a quote or a comment open); the first keyword is what SQLite
// would read first.
func FuzzLex(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "SELECT 1; SELECT 2", "select ';' from x", `SELECT "a;b" FROM [c;d] WHERE e = 'it''s;'`,
		"-- c; x\nSELECT 1", "/* ; */ DELETE FROM t", "SELECT 1 /* open", "SELECT 'open", "  ;  ; ", "WITH x AS (SELECT 1) SELECT * FROM x;",
		"CREATE TRIGGER t AFTER INSERT ON n BEGIN DELETE FROM n; END", "`a;b`", "SELECT 1;\n-- trailing\n", "\xff;SELECT",
		"PRAGMA table_info(memory)", "ATTACH 'x' AS y; SELECT 1", "SELECT $a, :b, @c, ?1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := lex(s)
		if st.Keyword != strings.ToUpper(st.Keyword) {
			t.Fatalf("lex(%q).Keyword = %q, not upper-case", s, st.Keyword)
		}
		if st.Unterminated || st.Multiple {
			return
		}
		if again := lex(s + ";"); again.Multiple || again.Keyword != st.Keyword {
			t.Fatalf("lex(%q + \";\") = %+v, lex(%q) = %+v", s, again, s, st)
		}
		if st.Keyword != "" && !strings.Contains(s, "/*") {
			if two := lex(s + "\n;\nSELECT 1"); !two.Multiple {
				t.Fatalf("lex(%q + a second statement) = %+v: not multiple", s, two)
			}
		}
	})
}

// FuzzRows: a schema that parses turns a row document into column values
// and back into a document that gives the same values again.
func FuzzRows(f *testing.F) {
	f.Add(`{"columns":[{"name":"title","type":"text"},{"name":"n","type":"integer"}]}`, `{"title":"x","n":3}`)
	f.Add(`{"columns":[{"name":"r","type":"real"},{"name":"b","type":"boolean"},{"name":"j","type":"json"}]}`, `{"r":0.1,"b":true,"j":{"a":[1,"2",null]}}`)
	f.Add(`{"columns":[{"name":"r","type":"real"}]}`, `{"r":1e400}`)
	f.Add(`{"columns":[{"name":"id","type":"text"}]}`, `{}`)
	f.Add(`{"columns":[{"name":"n","type":"integer"}],"extra":1}`, `{"n":-9223372036854775808}`)
	f.Fuzz(func(t *testing.T, schema, row string) {
		sc, err := ParseSchema("t", []byte(schema))
		if err != nil {
			return
		}
		vals, problems, err := sc.rowValues("r1", []byte(row))
		if err != nil || len(problems) > 0 {
			return
		}
		doc, err := sc.rowDocument(vals[1:])
		if err != nil {
			t.Fatalf("rowDocument(%v) of %s: %v", vals, row, err)
		}
		again, problems, err := sc.rowValues("r1", doc)
		if err != nil || len(problems) > 0 || !reflect.DeepEqual(again, vals) {
			t.Fatalf("row %s -> %v -> %s -> %v (%v %v)", row, vals, doc, again, problems, err)
		}
	})
}
