package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestCLIWritersInLine: 8 writers, each a sequence of CLI processes, mix
// plain sets, --expect and --unchanged-since on shared files: no write
// fails as busy (exit 5), each that exits 0 is one commit of the history
// with its agent and mutation id, each compare-and-swap that landed held
// against its parent, refusals are exit 6, and git fsck is clean.
func TestCLIWritersInLine(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const writers, each = 8, 12
	s := newStore(t)
	type outcome struct {
		kind, file, agent, rev, commit, mutID string
		code                                  int
	}
	out := make([][]outcome, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				o := outcome{kind: []string{"plain", "expect", "since"}[j%3], file: fmt.Sprintf("f%d.json", (w+j)%3), agent: fmt.Sprintf("agent-%d", w)}
				args := []string{"set", o.file, fmt.Sprintf("w%d", w), fmt.Sprint(j), "--store", s, "--no-sync", "--json", "--agent", o.agent}
				if o.kind != "plain" {
					o.rev = strings.TrimSpace(gitOutErr(s, "rev-parse", "main"))
					args = append(args, map[string]string{"expect": "--expect", "since": "--unchanged-since"}[o.kind], o.rev)
				}
				stdout, err := exec.Command(bin, args...).Output()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					o.code = ee.ExitCode()
				} else if err != nil {
					t.Error(err)
					return
				}
				if o.code == 0 {
					var m struct {
						Commit     string `json:"commit"`
						MutationID string `json:"mutation_id"`
					}
					if err := json.Unmarshal(stdout, &m); err != nil {
						t.Errorf("writer %d: %v: %s", w, err, stdout)
						return
					}
					o.commit, o.mutID = m.Commit, m.MutationID
				}
				out[w] = append(out[w], o)
			}
		}()
	}
	wg.Wait()
	history := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(gitOutErr(s, "log", "--first-parent", "--format=%H %P %an %(trailers:key=Mutation-Id,valueonly,separator=)", "main")), "\n") {
		f := strings.Fields(line)
		history[f[0]] = f[1:]
	}
	blob := func(rev, file string) string {
		return strings.TrimSpace(gitOutErr(s, "rev-parse", "--verify", "-q", rev+":"+file))
	}
	acked := 0
	for w := range writers {
		for j, o := range out[w] {
			switch {
			case o.code == 6 && o.kind != "plain":
				continue
			case o.code != 0:
				t.Errorf("writer %d step %d (%s): exit %d", w, j, o.kind, o.code)
				continue
			}
			acked++
			e, ok := history[o.commit]
			if !ok || len(e) != 3 || e[1] != o.agent || e[2] != o.mutID {
				t.Errorf("writer %d step %d: commit %s is %v in the history", w, j, o.commit, e)
				continue
			}
			if o.kind == "expect" && e[0] != o.rev {
				t.Errorf("writer %d step %d: expected %s, landed on %s", w, j, o.rev, e[0])
			}
			if o.kind == "since" && blob(e[0], o.file) != blob(o.rev, o.file) {
				t.Errorf("writer %d step %d: %s changed since %s, yet the write landed", w, j, o.file, o.rev)
			}
		}
	}
	// The store's first commit is its init.
	if acked != len(history)-1 {
		t.Errorf("%d writes acknowledged, %d commits after init", acked, len(history)-1)
	}
	t.Logf("%d of %d writes landed", acked, writers*each)
	if out, err := exec.Command("git", "--git-dir", s, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("fsck: %v: %s", err, out)
	}
}
