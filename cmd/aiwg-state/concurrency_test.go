package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"

	"github.com/aiwg/aiwg-state/store"
)

// opsFor is the JSON Lines one writer applies: n sets on its own keys and
// on keys every writer shares.
func opsFor(writer, n int) string {
	var b strings.Builder
	for j := 0; j < n; j++ {
		if j%2 == 0 {
			fmt.Fprintf(&b, `{"op":"set","file":"w%d.json","path":"k%d","value":"w%d-%d"}`+"\n", writer, j%7, writer, j)
		} else {
			fmt.Fprintf(&b, `{"op":"set","file":"shared.json","path":"k%d","value":"w%d-%d"}`+"\n", j%5, writer, j)
		}
	}
	return b.String()
}

// TestConcurrentWritersLoseNothing: 8 processes × 200 mutations into one
// store, on distinct and on shared keys, with the git CLI moving the same
// branch at the same time.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const writers, perWriter = 8, 200
	s := newStore(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			cmd := exec.Command(bin, "apply", "-", "--commit-each", "--store", s, "--no-sync", "--agent", fmt.Sprintf("agent-%d", w))
			cmd.Stdin = strings.NewReader(opsFor(w, perWriter))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer %d: %v: %s", w, err, out)
			}
		}(w)
	}
	// Plain git racing our writers: commit-tree + update-ref with the old
	// value, retried until it lands, as a careful git user would.
	var gitCommits []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			for attempt := 0; ; attempt++ {
				old := strings.TrimSpace(gitOutErr(s, "rev-parse", "main"))
				blob := strings.TrimSpace(gitIn(s, fmt.Sprintf("{\n  \"n\": %d\n}\n", i), "hash-object", "-w", "--stdin"))
				tree := strings.TrimSpace(gitIn(s, gitOutErr(s, "ls-tree", old)+fmt.Sprintf("100644 blob %s\tgit-%02d.json\n", blob, i), "mktree"))
				c := strings.TrimSpace(gitOutErr(s, "commit-tree", tree, "-p", old, "-m", fmt.Sprintf("git %d", i)))
				if _, err := exec.Command("git", "--git-dir", s, "update-ref", "refs/heads/main", c, old).CombinedOutput(); err == nil {
					gitCommits = append(gitCommits, c)
					break
				}
				if attempt > 500 {
					errs <- fmt.Errorf("git update-ref never landed")
					return
				}
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	revs := strings.Fields(gitOut(t, s, "rev-list", "--first-parent", "main"))
	if want := 1 + writers*perWriter + len(gitCommits); len(revs) != want {
		t.Fatalf("%d commits on main, want %d", len(revs), want)
	}
	onMain := map[string]bool{}
	for _, r := range revs {
		onMain[r] = true
	}
	for _, c := range gitCommits {
		if !onMain[c] {
			t.Fatalf("git's commit %s was lost", c)
		}
	}
	// Every value written is in history, once, at the commit that wrote it;
	// and each key's final value is the one of its newest commit.
	st, err := aiwgstate.Open(ctx, s, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen := map[string]int{}
	final := map[string]string{}
	err = st.Log(ctx, store.LogOptions{}, func(m *store.Mutation) bool {
		for _, c := range m.Changes {
			if c.Key == "" {
				continue
			}
			v, err := st.Get(ctx, c.File, c.Key, store.ReadOptions{At: m.Commit})
			if err != nil {
				t.Errorf("%s %s#%s: %v", m.Commit, c.File, c.Key, err)
				continue
			}
			seen[strings.TrimSpace(string(v))]++
			if _, ok := final[c.File+"#"+c.Key]; !ok {
				final[c.File+"#"+c.Key] = strings.TrimSpace(string(v))
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for w := 0; w < writers; w++ {
		for j := 0; j < perWriter; j++ {
			if v := fmt.Sprintf(`"w%d-%d"`, w, j); seen[v] != 1 {
				t.Fatalf("value %s is in history %d times", v, seen[v])
			}
		}
	}
	for key, want := range final {
		file, k, _ := strings.Cut(key, "#")
		got, err := st.Get(ctx, file, k, store.ReadOptions{})
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Fatalf("%s = %s, but its last commit wrote %s", key, got, want)
		}
	}
	gitOut(t, s, "fsck", "--strict", "--no-dangling")
}

func gitOutErr(store string, args ...string) string {
	out, _ := exec.Command("git", append([]string{"--git-dir", store}, args...)...).Output()
	return string(out)
}

func gitIn(store, stdin string, args ...string) string {
	cmd := exec.Command("git", append([]string{"--git-dir", store}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, _ := cmd.Output()
	return string(out)
}

// TestSIGKILLLeavesAStoreGitAccepts kills a durable writer at random points
// of a stream of mutations. After each kill the store must pass git fsck,
// the branch must name a complete commit, every mutation the writer
// acknowledged must be in history, and the next writer must not be blocked
// by the lock the dead one held.
func TestSIGKILLLeavesAStoreGitAccepts(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newStore(t)
	trials := 25
	if v := os.Getenv("AIWG_KILL_TRIALS"); v != "" {
		fmt.Sscan(v, &trials)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var acked []string
	checked, lastHead := 0, ""
	for trial := 0; trial < trials; trial++ {
		cmd := exec.Command(bin, "apply", "-", "--commit-each", "--store", s, "--agent", "victim")
		cmd.Stdin = strings.NewReader(opsFor(trial, 400))
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		deadline := time.After(time.Duration(10+rng.IntN(150)) * time.Millisecond)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "no change") {
					acked = append(acked, f[0])
				}
			case <-deadline:
				cmd.Process.Signal(syscall.SIGKILL)
				for l := range lines {
					if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "no change") {
						acked = append(acked, f[0])
					}
				}
				break read
			}
		}
		cmd.Wait()
		// A lock the victim left must be one the next writer recognises
		// as a dead writer's: it still carries the marker.
		if b, err := os.ReadFile(filepath.Join(s, "refs", "heads", "main.lock")); err == nil && !strings.HasPrefix(string(b), "aiwg-state lock held by pid ") {
			t.Fatalf("trial %d: the killed writer left a lock no writer can recognise: %q", trial, b)
		}
		// A background roll-up the victim started dies with it, but
		// may take a moment; git fsck run beside it would see packs
		// vanish under it. Wait for the processes the maintenance lock
		// names.
		waitForMaintenance(t, s)
		gitOut(t, s, "fsck", "--strict", "--no-dangling")
		head := strings.TrimSpace(gitOut(t, s, "rev-parse", "main^{commit}"))
		gitOut(t, s, "cat-file", "-e", head+"^{tree}")
		// main only moves forward, so the acknowledged commits of earlier
		// trials are on it when the last head checked is.
		toCheck := acked[checked:len(acked):len(acked)]
		if lastHead != "" {
			toCheck = append(toCheck, lastHead)
		}
		for _, a := range toCheck {
			if _, err := exec.Command("git", "--git-dir", s, "merge-base", "--is-ancestor", a, "main").CombinedOutput(); err != nil {
				t.Fatalf("trial %d: acknowledged commit %s is not on main", trial, a)
			}
		}
		checked, lastHead = len(acked), head
	}
	if len(acked) == 0 {
		t.Fatal("no mutation was acknowledged in any trial; the test proves nothing")
	}
	// The next writer proceeds at once, whatever lock the last victim held.
	start := time.Now()
	mustCLI(t, s, "", "set", "after.json", "ok", "true")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a writer after the kills waited %s", d)
	}
	// gc sweeps what the killed writers left: their temporary packs,
	// indexes and .keep files, .keep files without a pack, and their
	// refs' temporary files.
	mustCLI(t, s, "", "gc")
	var left []string
	filepath.WalkDir(s, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n := d.Name()
		rel, _ := filepath.Rel(s, p)
		ours := strings.HasPrefix(n, "tmp_") && strings.Contains(n, "-") // tmp_<kind>_<pid>-<random>
		if i := strings.Index(n, ".lock."); i >= 0 && strings.HasSuffix(n, ".lock") {
			ours = true
		}
		if strings.HasSuffix(n, ".keep") {
			if _, err := os.Stat(strings.TrimSuffix(p, ".keep") + ".pack"); err != nil {
				ours = true
			}
		}
		if ours {
			left = append(left, rel)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("gc left what killed writers left: %v", left)
	}
	t.Logf("%d trials, %d acknowledged mutations survived", trials, len(acked))
}

// waitForMaintenance waits until no process named in the store's
// maintenance lock is alive.
func waitForMaintenance(t *testing.T, store string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(store, "aiwg-maintenance.lock"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(data)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err != nil || pid <= 0 {
			continue
		}
		// Until it is gone, or a zombie no one reaps (its state, after
		// "pid (comm) ", is Z).
		running := func() bool {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			i := strings.LastIndexByte(string(stat), ')')
			return err == nil && i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
		}
		for deadline := time.Now().Add(time.Minute); running(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the roll-up %d still runs after a minute", pid)
			}
		}
	}
}
