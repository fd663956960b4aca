package mcp

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// FuzzParseTokens: a tokens file parses or is refused with an error;
// every token parsed names its agent, and no agent holds a space.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte("planner aiwg_0123456789abcdef0123\n# a comment\n\nreviewer aiwg_fedcba9876543210fedc\n"))
	f.Add([]byte("planner short\n"))
	f.Add([]byte("a b c\n"))
	f.Add([]byte("x aaaaaaaaaaaaaaaaaaaa\nx aaaaaaaaaaaaaaaaaaaa\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := ParseTokens(data)
		if err != nil {
			return
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) == 2 && !strings.HasPrefix(fs[0], "#") {
				if got := tk.Agent(fs[1]); got != fs[0] {
					t.Fatalf("token of %q names %q", fs[0], got)
				}
			}
		}
		if tk.Agent("") != "" {
			t.Fatal("the empty token names an agent")
		}
	})
}

// FuzzParseURI: a document's URI splits into a revision and a path that
// DocumentURI puts back together to the same revision and path.
func FuzzParseURI(f *testing.F) {
	f.Add("aiwg://main/plan.json")
	f.Add("aiwg://agents%2Fplanner%2Fmain/a/b.json")
	f.Add("aiwg://HEAD~2/plan.json")
	f.Add("aiwg://%zz/plan.json")
	f.Add("http://main/plan.json")
	f.Fuzz(func(t *testing.T, uri string) {
		rev, file, err := parseURI(uri)
		if err != nil {
			return
		}
		if rev == "" || file == "" {
			t.Fatalf("%q: empty revision or path", uri)
		}
		rev2, file2, err := parseURI(DocumentURI(rev, file))
		if err != nil || rev2 != rev || file2 != file {
			t.Fatalf("%q: %q %q, again %q %q %v", uri, rev, file, rev2, file2, err)
		}
	})
}

// FuzzLineConn: whatever a host sends, each line becomes a message or
// a parse error, and reading ends at the input's end.
func FuzzLineConn(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + "garbage\n"))
	f.Add([]byte("\n\n{}\n[1,2]\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		conn, _ := (&LineTransport{In: bytes.NewReader(data), Out: &out}).Connect(t.Context())
		n := 0
		for {
			if _, err := conn.Read(t.Context()); err != nil {
				break
			}
			n++
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if errs := bytes.Count(out.Bytes(), []byte("\n")); n+errs != lines {
			t.Fatalf("%d lines: %d messages and %d parse errors", lines, n, errs)
		}
	})
}
