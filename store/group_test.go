package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/internal/storetest"
	"github.com/aiwg/aiwg-state/internal/testutil"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

// TestGroupCommitConcurrent: 16 goroutines writing to one Store at once,
// mixing plain writes, --expect and --unchanged-since, are written as
// chains of commits (batches): every acknowledged write is exactly one
// commit of the branch's history, with its author, mutation id and
// trailers; a compare-and-swap that landed held against the commit it
// sits on, one refused was refused as stale against a commit of the
// history; nothing else landed; git fsck --strict is clean.
func TestGroupCommitConcurrent(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	const writers, each, files = 16, 30, 4
	for f := range files {
		if _, err := st.Put(ctx, fmt.Sprintf("f%d.json", f), []byte(`{}`), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	base, err := st.Resolve("HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		kind, file, agent, rev string
		m                      *store.Mutation
		err                    error
	}
	out := make([][]outcome, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				o := outcome{kind: []string{"plain", "expect", "since"}[j%3], file: fmt.Sprintf("f%d.json", (w+j)%files), agent: fmt.Sprintf("agent-%d", w)}
				wo := store.WriteOptions{Agent: o.agent, Trailers: []repo.Trailer{{Key: "Writer-Step", Value: fmt.Sprintf("%d.%d", w, j)}}}
				if o.kind != "plain" {
					h, err := st.Resolve("HEAD", "")
					if err != nil {
						t.Error(err)
						return
					}
					o.rev = h.String()
					if o.kind == "expect" {
						wo.Expect = store.Rev(o.rev)
					} else {
						wo.UnchangedSince = store.Rev(o.rev)
					}
				}
				o.m, o.err = st.Set(ctx, o.file, fmt.Sprintf("w%d", w), []byte(fmt.Sprint(j)), wo)
				out[w] = append(out[w], o)
			}
		}()
	}
	wg.Wait()

	// The history since base, first parent first, as git reads it.
	log := storetest.Git(t, st, "log", "--first-parent", "--format=%H %P %an %(trailers:key=Mutation-Id,valueonly,separator=)%x09%(trailers:key=Writer-Step,valueonly,separator=)", base.String()+"..HEAD")
	type entry struct{ parent, agent, mutID, step string }
	history := map[string]entry{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		head, step, _ := strings.Cut(line, "\t")
		f := strings.Fields(head)
		if len(f) != 4 {
			t.Fatalf("log line %q", line)
		}
		history[f[0]] = entry{parent: f[1], agent: f[2], mutID: f[3], step: step}
	}
	blob := func(rev, file string) string {
		out, _ := exec.Command("git", "--git-dir", st.Dir(), "rev-parse", "--verify", "-q", rev+":"+file).Output()
		return strings.TrimSpace(string(out))
	}
	acked, stale := 0, 0
	for w := range writers {
		for j, o := range out[w] {
			if o.err != nil {
				if o.kind == "plain" || !errors.Is(o.err, store.ErrStale) {
					t.Errorf("writer %d step %d (%s): %v", w, j, o.kind, o.err)
					continue
				}
				var se *repo.StaleError
				if errors.As(o.err, &se) {
					if se.Current.String() == o.rev {
						t.Errorf("writer %d step %d refused though the branch was at %s", w, j, o.rev)
					}
					if _, ok := history[se.Current.String()]; !ok {
						t.Errorf("writer %d step %d refused against %s, no commit of the history", w, j, se.Current)
					}
				}
				stale++
				continue
			}
			acked++
			e, ok := history[o.m.Commit]
			if !ok {
				t.Errorf("writer %d step %d: acknowledged %s is not in the history", w, j, o.m.Commit)
				continue
			}
			if e.agent != o.agent || e.mutID != o.m.MutationID || e.step != fmt.Sprintf("%d.%d", w, j) {
				t.Errorf("writer %d step %d: commit %s is %+v", w, j, o.m.Commit, e)
			}
			switch o.kind {
			case "expect":
				if e.parent != o.rev {
					t.Errorf("writer %d step %d: expected %s, landed on %s", w, j, o.rev, e.parent)
				}
			case "since":
				if blob(e.parent, o.file) != blob(o.rev, o.file) {
					t.Errorf("writer %d step %d: %s changed between %s and %s, yet the write landed", w, j, o.file, o.rev, e.parent)
				}
			}
		}
	}
	if acked != len(history) {
		t.Errorf("%d writes acknowledged, %d commits in the history", acked, len(history))
	}
	if acked+stale != writers*each {
		t.Errorf("%d acknowledged + %d stale != %d", acked, stale, writers*each)
	}
	t.Logf("%d acknowledged, %d refused as stale", acked, stale)
	storetest.Fsck(t, st)
}

// TestGroupCommitKilled: a process writing from 16 goroutines at once
// (batches led by one of them) killed with SIGKILL at a random moment
// leaves every write it acknowledged in the branch's history, and a store
// git accepts and the next writer writes to.
func TestGroupCommitKilled(t *testing.T) {
	if dir := os.Getenv("AIWG_GROUP_KILL_STORE"); dir != "" {
		groupKillChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	st := storetest.New(t)
	dir := st.Dir()
	st.Close()
	ctx := context.Background()
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGroupCommitKilled$")
		cmd.Env = append(os.Environ(), "AIWG_GROUP_KILL_STORE="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				acked = append(acked, sc.Text())
			}
		}()
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		cmd.Wait()
		reach := map[string]bool{}
		for _, h := range strings.Fields(testutil.RunGit(t, dir, "rev-list", "HEAD")) {
			reach[h] = true
		}
		for _, h := range acked {
			if !reach[h] {
				t.Errorf("round %d: acknowledged %s is not in the history", round, h)
			}
		}
		testutil.Fsck(t, dir)
		st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Set(ctx, "after.json", "round", []byte(fmt.Sprint(round)), store.WriteOptions{}); err != nil {
			t.Errorf("round %d: a write after the kill: %v", round, err)
		}
		st.Close()
		t.Logf("round %d: %d writes acknowledged before the kill", round, len(acked))
	}
}

// groupKillChild writes from 16 goroutines until killed, printing each
// acknowledged commit.
func groupKillChild(dir string) {
	ctx := context.Background()
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				m, err := st.Set(ctx, fmt.Sprintf("k%d.json", w), "n", []byte(fmt.Sprint(j)), store.WriteOptions{})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println(m.Commit)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
