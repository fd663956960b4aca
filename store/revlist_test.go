package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/store"
)

// TestRangeIsRevList: Range lists what git rev-list lists, each commit
// after its parents, over a history of branches and merges (a criss-cross
// among them).
func TestRangeIsRevList(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	put := func(branch, file string) string {
		m, err := st.Put(ctx, file, []byte(`1`), store.WriteOptions{Branch: branch})
		if err != nil {
			t.Fatal(err)
		}
		return m.Commit
	}
	base := put("main", "base.json")
	if _, err := st.CreateBranch(ctx, "side", ""); err != nil {
		t.Fatal(err)
	}
	g := testutil.Git{GitDir: st.Dir(), Env: testutil.AgentEnv("m")}
	merge := func(into, from string) {
		t.Helper()
		out, err := g.Try("merge-tree", "--write-tree", into, from)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		c := strings.TrimSpace(g.Output(t, "commit-tree", strings.Fields(out)[0], "-p", into, "-p", from, "-m", "merge"))
		g.Run(t, "update-ref", "refs/heads/"+into, c)
	}
	put("main", "m1.json")
	put("side", "s1.json")
	put("side", "s2.json")
	mid := strings.TrimSpace(g.Output(t, "rev-parse", "main"))
	merge("main", "side")
	merge("side", "main")
	put("main", "m2.json")
	put("side", "s3.json")
	merge("main", "side")
	put("main", "m3.json")
	for _, c := range [][2]string{{"main", base}, {"main", mid}, {"main", "side"}, {"side", "main"}, {"main", base + " " + mid}, {"main", "main~1"}, {"main", "main"}, {"side", "side~1"}} {
		var exclude []plumbing.Hash
		for _, r := range strings.Fields(c[1]) {
			exclude = append(exclude, plumbing.NewHash(strings.TrimSpace(g.Output(t, "rev-parse", r))))
		}
		include := plumbing.NewHash(strings.TrimSpace(g.Output(t, "rev-parse", c[0])))
		got, err := st.Range(ctx, []plumbing.Hash{include}, exclude, 0)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"rev-list", c[0]}
		for _, r := range strings.Fields(c[1]) {
			args = append(args, "^"+r)
		}
		want := strings.Fields(g.Output(t, args...))
		pos := map[string]int{}
		for i, cm := range got {
			pos[cm.Hash.String()] = i
		}
		if len(got) != len(want) {
			t.Errorf("%s ^%s: %d commits, git lists %d", c[0], c[1], len(got), len(want))
		}
		for _, w := range want {
			if _, ok := pos[w]; !ok {
				t.Errorf("%s ^%s: %s missing", c[0], c[1], w)
			}
		}
		for i, cm := range got {
			for _, p := range cm.Parents {
				if j, ok := pos[p.String()]; ok && j > i {
					t.Errorf("%s listed before its parent %s", cm.Hash, p)
				}
			}
		}
	}
}
