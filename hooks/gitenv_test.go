package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/internal/testutil"
)

// The checks read objects as they are written: a replace ref or a graft
// on the server changes nothing of what they see.
func TestChecksIgnoreReplaceRefsAndGrafts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s.git")
	testutil.Git{}.Run(t, "init", "-q", "--bare", dir)
	g := testutil.Git{GitDir: dir, Env: testutil.AgentEnv("a")}
	blob := g
	blob.Stdin = "{\"v\":1}\n"
	tree := g
	tree.Stdin = "100644 blob " + strings.TrimSpace(blob.Output(t, "hash-object", "-w", "--stdin")) + "\td.json\n"
	root := g
	root.Stdin = "a"
	a := strings.TrimSpace(root.Output(t, "commit-tree", strings.TrimSpace(tree.Output(t, "mktree"))))
	b := testutil.CommitFile(t, g, a, "d.json", "{\"v\":2}\n", "b")
	c := testutil.CommitFile(t, g, b, "d.json", "{\"v\":3}\n", "c")
	g.Run(t, "replace", a, b)
	os.MkdirAll(filepath.Join(dir, "info"), 0o755)
	// c's parent is b; a graft says it is a.
	os.WriteFile(filepath.Join(dir, "info", "grafts"), []byte(c+" "+a+"\n"), 0o644)
	if p := strings.TrimSpace(g.Output(t, "log", "-1", "--format=%P", c)); p != a {
		t.Fatalf("git does not honour the graft (%s), the test shows nothing", p)
	}
	cf, err := newCatFile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.close()
	_, body, err := cf.read(a + ":d.json")
	if err != nil || string(body) != "{\"v\":1}\n" {
		t.Fatalf("cat-file of a replaced commit: %q, %v", body, err)
	}
	ck := &checker{gitDir: dir}
	revs, err := ck.revList(context.Background(), c)
	if err != nil || strings.Join(revs, " ") != a+" "+b+" "+c {
		t.Fatalf("rev-list past a graft: %v, %v (want %s %s %s)", revs, err, a, b, c)
	}
}

func TestObjectIDRefs(t *testing.T) {
	id := strings.Repeat("ab", 20)
	for ref, refused := range map[string]bool{
		"refs/heads/" + id:                 true,
		"refs/tags/" + strings.ToUpper(id): true,
		"refs/heads/agents/" + id:          false,
		"refs/heads/" + id[:39]:            false,
		"refs/heads/main":                  false,
		"refs/heads/" + id[:39] + "g":      false,
	} {
		if got := objectIDRef(ref) != ""; got != refused {
			t.Errorf("objectIDRef(%q) refuses: %v", ref, got)
		}
		if rule, _ := refRule(ref); (rule != "") != refused {
			t.Errorf("refRule(%q) = %q", ref, rule)
		}
	}
}

// Through a real server: a branch or tag named as a commit id, and a
// replace ref, are refused, the server's refs unchanged.
func TestServerRefusesObjectIDNamesAndReplaceRefs(t *testing.T) {
	server, w := setup(t, gitserver.Daemon)
	commit := w.commit("conductor", map[string]string{"global/a.json": canon(t, `{"a": 1}`)})
	for _, dst := range []string{"refs/heads/" + commit, "refs/tags/" + commit, "refs/replace/" + commit} {
		before := serverRefs(t, server)
		out, err := w.git("conductor", "push", "origin", "HEAD:"+dst)
		if err == nil {
			t.Fatalf("push to %s accepted", dst)
		}
		if !strings.Contains(out, "rule "+RuleRef) {
			t.Errorf("push to %s: refusal does not name the rule:\n%s", dst, out)
		}
		if after := serverRefs(t, server); after != before {
			t.Fatalf("push to %s changed the server's refs:\n%s", dst, after)
		}
	}
	w.must("conductor", "push", "-q", "origin", "HEAD:refs/heads/main")
}
