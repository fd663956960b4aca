package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiwg/aiwg-state/internal/gitserver"
)

// baseline is the plain git swarm's run: each agent commits to a file of
// its own in a clone of main (the easiest case for git: nothing to merge
// by hand) and every few commits runs git pull --rebase and git push,
// again when the push is rejected, until the time is up.
type baseline struct {
	agents               int
	wall                 time.Duration
	committed, pushed    atomic.Int64
	rejected, gaveUp     atomic.Int64
	syncs                []time.Duration
	mu                   sync.Mutex
	timedOut, unfinished int
}

// maxPushTries bounds one plain git sync's pull-push loop.
const maxPushTries = 20

func runBaseline(dir string, n int) *baseline {
	b := &baseline{agents: n}
	root := filepath.Join(dir, "srv")
	check(os.MkdirAll(root, 0o755))
	server := filepath.Join(root, "plain.git")
	run("git", "init", "-q", "--bare", "--initial-branch=main", server)
	base, stop, err := gitserver.StartDaemon(root)
	check(err)
	defer stop()
	url := base + "plain.git"
	seed := filepath.Join(dir, "seed")
	run("git", "init", "-q", "--initial-branch=main", seed)
	check(os.WriteFile(filepath.Join(seed, "README"), []byte("plain git swarm\n"), 0o644))
	git(seed, "add", ".")
	git(seed, "commit", "-q", "-m", "seed")
	git(seed, "push", "-q", url, "main")
	clones := make([]string, n)
	for i := range clones {
		clones[i] = filepath.Join(dir, fmt.Sprintf("p%03d", i))
		run("git", "clone", "-q", url, clones[i])
	}
	deadline := time.Now().Add(*flagBaseTime)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			file := filepath.Join(c, fmt.Sprintf("agent-%03d.txt", i))
			unpushed := int64(0)
			for m := 0; m < *flagMutations; m++ {
				if time.Now().After(deadline) {
					b.mu.Lock()
					b.unfinished++
					b.mu.Unlock()
					return
				}
				f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				check(err)
				fmt.Fprintf(f, "mutation %d\n", m)
				f.Close()
				if _, err := gitErr(c, "add", "."); err == nil {
					if _, err := gitErr(c, "commit", "-q", "-m", fmt.Sprintf("agent %d mutation %d", i, m)); err == nil {
						b.committed.Add(1)
						unpushed++
					}
				}
				if (m+1)%*flagSync != 0 && m != *flagMutations-1 {
					continue
				}
				t := time.Now()
				ok := false
				for try := 0; try < maxPushTries && time.Now().Before(deadline); try++ {
					if _, err := gitErr(c, "pull", "-q", "--rebase", "origin", "main"); err != nil {
						gitErr(c, "rebase", "--abort")
						continue
					}
					if _, err := gitErr(c, "push", "-q", "origin", "HEAD:main"); err != nil {
						b.rejected.Add(1)
						continue
					}
					ok = true
					break
				}
				if !ok {
					b.gaveUp.Add(1)
					continue
				}
				b.pushed.Add(unpushed)
				unpushed = 0
				b.mu.Lock()
				b.syncs = append(b.syncs, time.Since(t))
				b.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.wall = time.Since(start)
	return b
}

func (b *baseline) print() {
	slices.Sort(b.syncs)
	p50, p99 := "-", "-"
	if len(b.syncs) > 0 {
		p50 = fmt.Sprintf("%.0f ms", float64(pct(b.syncs, 50))/1e6)
		p99 = fmt.Sprintf("%.0f ms", float64(pct(b.syncs, 99))/1e6)
	}
	fmt.Printf("  plain git, %d agents (own files only, bounded at %s): wall %s, %d committed, %d pushed, %.1f pushed/s; sync p50 %s, p99 %s; %d pushes rejected, %d syncs gave up after %d tries, %d agents out of time\n",
		b.agents, *flagBaseTime, b.wall.Round(time.Millisecond), b.committed.Load(), b.pushed.Load(), float64(b.pushed.Load())/b.wall.Seconds(), p50, p99,
		b.rejected.Load(), b.gaveUp.Load(), maxPushTries, b.unfinished)
}

func git(dir string, args ...string) string {
	out, err := gitErr(dir, args...)
	check(err)
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=plain", "-c", "user.email=plain@example.invalid"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
