package testutil

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestGit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	Git{}.Run(t, "init", "-q", "--bare", dir)
	g := Git{GitDir: dir, Env: AgentEnv("alice"), Stdin: "hello\n"}
	blob := strings.TrimSpace(g.Output(t, "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(Git{GitDir: dir, Stdin: "100644 blob " + blob + "\tf\n"}.Run(t, "mktree"))
	c := strings.TrimSpace(Git{GitDir: dir, Env: AgentEnv("alice"), Config: []string{"core.fsync=none"}}.Run(t, "commit-tree", "-m", "one", tree))
	if got := RunGit(t, dir, "log", "-1", "--format=%an <%ae> %cn", c); got != "alice <alice@agents.invalid> alice\n" {
		t.Fatalf("identity: %q", got)
	}
	Fsck(t, dir)
	if _, err := (Git{GitDir: dir}).Try("rev-parse", "--verify", "-q", "missing"); err == nil {
		t.Fatal("Try: no error for a failing git")
	}
}

func TestDecodeJSON(t *testing.T) {
	v := DecodeJSON(t, ` {"a": [1.50, "x", null, true]} `)
	if n := v.(map[string]any)["a"].([]any)[0]; n != json.Number("1.50") {
		t.Fatalf("number: %#v", n)
	}
	for _, bad := range []string{``, `{`, `{} {}`, `1 x`, `[] ]`} {
		if _, err := TryDecodeJSON([]byte(bad)); err == nil {
			t.Errorf("%q: decoded", bad)
		}
	}
}
