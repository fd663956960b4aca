package store

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/aiwg/aiwg-state/internal/testutil"
)

// TestBroughtCommitsIsRevList checks the walk against git rev-list THEIRS
// --not OURS on random histories of merges: the same commits when clocks
// never go back (many commits of one second among them); with skewed
// clocks, never fewer (a commit of ours may be listed, then checked
// needlessly; a brought one is never missed).
func TestBroughtCommitsIsRevList(t *testing.T) {
	ctx := context.Background()
	rnd := rand.New(rand.NewSource(1))
	for round := 0; round < 4; round++ {
		skew := round%2 == 1
		dir := filepath.Join(t.TempDir(), "s.git")
		st, err := Init(ctx, dir, InitOptions{Options: Options{NoSync: true}})
		if err != nil {
			t.Fatal(err)
		}
		// A random history of n commits, each with one to three earlier
		// parents (the first commit a root, now and then another root).
		const n = 40
		var in strings.Builder
		when := int64(1_700_000_000)
		for i := 1; i <= n; i++ {
			when += int64(rnd.Intn(2)) * 60 // commits of the same second too
			w := when
			if skew && rnd.Intn(4) == 0 {
				w -= int64(rnd.Intn(3000))
			}
			root := i > 1 && rnd.Intn(12) == 0
			if root {
				in.WriteString("reset refs/heads/walk\n")
			}
			fmt.Fprintf(&in, "commit refs/heads/walk\nmark :%d\ncommitter x <x@x> %d +0000\ndata 2\nc\n", i, w)
			if i > 1 && !root {
				fmt.Fprintf(&in, "from :%d\n", i-1-rnd.Intn(min(i-1, 6)))
				for k := rnd.Intn(3); k > 0 && i > 2; k-- {
					fmt.Fprintf(&in, "merge :%d\n", 1+rnd.Intn(i-1))
				}
			}
			fmt.Fprintf(&in, "M 644 inline f%d\ndata 1\n%d\n", i, i%10)
		}
		marks := filepath.Join(t.TempDir(), "marks")
		testutil.Git{Config: []string{"core.fsync=none"}, GitDir: dir, Stdin: in.String()}.Run(t, "fast-import", "--quiet", "--force", "--export-marks="+marks)
		st.Close()
		if st, err = Open(ctx, dir, Options{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		byMark := map[int]plumbing.Hash{}
		data, err := os.ReadFile(marks)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var m int
			var h string
			if _, err := fmt.Sscanf(line, ":%d %s", &m, &h); err != nil {
				t.Fatalf("marks: %q: %v", line, err)
			}
			byMark[m] = plumbing.NewHash(h)
		}
		for pair := 0; pair < 12; pair++ {
			a, b := 1+rnd.Intn(n), 1+rnd.Intn(n)
			ours, theirs := byMark[a], byMark[b]
			got, err := st.broughtCommits(ours, theirs)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(testutil.Git{GitDir: dir}.Output(t, "rev-list", theirs.String(), "--not", ours.String()))
			have := map[string]bool{}
			var gotIDs []string
			for _, c := range got {
				if have[c.Hash.String()] {
					t.Fatalf("%s listed twice", c.Hash)
				}
				have[c.Hash.String()] = true
				gotIDs = append(gotIDs, c.Hash.String())
			}
			for _, h := range want {
				if !have[h] {
					t.Fatalf("round %d: c%d..c%d: brought commit %s missed", round, a, b, h)
				}
			}
			if len(gotIDs) != len(want) {
				if !skew {
					sort.Strings(gotIDs)
					sort.Strings(want)
					t.Fatalf("round %d: c%d..c%d: %d commits, git rev-list %d", round, a, b, len(gotIDs), len(want))
				}
				for _, h := range gotIDs {
					if ok, err := st.repo.IsAncestor(plumbing.NewHash(h), theirs); err != nil || !ok {
						t.Fatalf("%s listed but theirs does not reach it", h)
					}
				}
			}
		}
		st.Close()
		os.RemoveAll(dir)
	}
}
