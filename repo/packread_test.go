package repo

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestObjectReaderReadsWhatGitWrote reads every object of a store after
// git gc (deltas of every kind, written by git) and after plain git made
// loose objects, and compares each with git cat-file.
func TestObjectReaderReadsWhatGitWrote(t *testing.T) {
	r := newRepo(t)
	for i := 0; i < 40; i++ {
		write(t, r, map[string]string{
			fmt.Sprintf("d/f%02d.json", i%7): strings.Repeat(fmt.Sprintf("line %d\n", i), 50+i),
			"top.json":                       fmt.Sprintf("%d\n", i),
		})
	}
	git(t, r.Dir(), "gc", "--aggressive", "--quiet")
	loose := strings.TrimSpace(gitIn(t, r.Dir(), "a loose blob\n", "hash-object", "-w", "--stdin"))
	all := strings.Fields(git(t, r.Dir(), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	all = append(all, loose)
	fresh := newObjReader(r.Dir())
	defer fresh.close()
	for _, id := range all {
		typ, body, err := fresh.read(plumbing.NewHash(id))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		want := git(t, r.Dir(), "cat-file", typ.String(), id)
		if !bytes.Equal(body, []byte(want)) {
			t.Fatalf("%s %s differs from git cat-file", typ, id)
		}
	}
	bases := git(t, r.Dir(), "cat-file", "--batch-all-objects", "--batch-check=%(deltabase)")
	if len(all) < 100 || strings.Count(bases, "0000000000000000000000000000000000000000") > len(all)-20 {
		t.Fatalf("%d objects, few deltas: the test proves little", len(all))
	}
	if _, _, err := fresh.read(plumbing.NewHash(strings.Repeat("ab", 20))); err == nil {
		t.Fatal("a missing object was found")
	}
}

func gitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}
