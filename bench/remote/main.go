// Command remote measures remotes in one run on one machine, over a real
// git daemon on 127.0.0.1: on a store of 10,000 commits (built with git
// fast-import), the incremental push and fetch of one new mutation by
// aiwg-state against `git push` / `git fetch` of the same commit over the
// same server, and a clone of the whole store against `git clone --bare`.
//
//	go run ./bench/remote                 # 10,000 commits, 15 rounds
//	go run ./bench/remote -commits 2000 -rounds 5
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
)

func main() {
	commits := flag.Int("commits", 10000, "commits in the store")
	rounds := flag.Int("rounds", 15, "incremental push/fetch rounds")
	clones := flag.Int("clones", 3, "clone rounds")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "aiwg-bench-remote-")
	check(err)
	defer os.RemoveAll(work)

	storeDir := filepath.Join(work, "store.git")
	st, err := aiwgstate.Init(ctx, storeDir, store.InitOptions{Options: store.Options{NoSync: true}, Agent: "bench"})
	check(err)
	t0 := time.Now()
	fastImport(storeDir, *commits)
	st.Close()
	st, err = aiwgstate.Open(ctx, storeDir, store.Options{NoSync: true})
	check(err)
	defer st.Close()
	fmt.Printf("machine: %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), strings.TrimSpace(out("git", "version")))
	fmt.Printf("store: %d commits, 100 documents (built in %s); server: git daemon on 127.0.0.1\n\n", *commits+1, time.Since(t0).Round(time.Millisecond))

	root := filepath.Join(work, "srv")
	check(os.MkdirAll(root, 0o755))
	base, stop, err := gitserver.StartDaemon(root)
	check(err)
	defer stop()
	// Two server repositories with the same history: aiwg-state pushes to
	// one, git to the other, the same commit each round.
	for _, name := range []string{"a.git", "b.git"} {
		run("git", "init", "-q", "--bare", filepath.Join(root, name))
		run("git", "--git-dir", storeDir, "push", "-q", base+name, "main")
		run("git", "--git-dir", filepath.Join(root, name), "symbolic-ref", "HEAD", "refs/heads/main")
	}
	check(st.AddRemote(ctx, "origin", base+"a.git"))

	// Fetchers: an aiwg-state clone of a, a plain bare clone of b.
	fa, err := store.Clone(ctx, base+"a.git", filepath.Join(work, "fa.git"), store.CloneOptions{Options: store.Options{NoSync: true}})
	check(err)
	defer fa.Close()
	fb := filepath.Join(work, "fb.git")
	run("git", "clone", "-q", "--bare", "-c", "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*", base+"b.git", fb)

	var aPush, gPush, aFetch, gFetch []time.Duration
	for i := 0; i < *rounds; i++ {
		_, err := st.Set(ctx, fmt.Sprintf("docs/d%03d.json", i%100), "round", []byte(fmt.Sprint(i)), store.WriteOptions{Agent: "bench"})
		check(err)
		pushA := func() {
			t := time.Now()
			_, err := st.Push(ctx, "origin", store.PushOptions{})
			check(err)
			aPush = append(aPush, time.Since(t))
		}
		pushG := func() {
			t := time.Now()
			run("git", "--git-dir", storeDir, "push", "-q", base+"b.git", "main")
			gPush = append(gPush, time.Since(t))
		}
		fetchA := func() {
			t := time.Now()
			ups, err := fa.Fetch(ctx, "origin")
			check(err)
			if len(ups) == 0 {
				check(fmt.Errorf("aiwg-state fetch brought nothing"))
			}
			aFetch = append(aFetch, time.Since(t))
		}
		fetchG := func() {
			t := time.Now()
			run("git", "--git-dir", fb, "fetch", "-q", "--tags", "origin")
			gFetch = append(gFetch, time.Since(t))
		}
		// Alternate who goes first: the page cache favours the second.
		if i%2 == 0 {
			pushA()
			pushG()
			fetchA()
			fetchG()
		} else {
			pushG()
			pushA()
			fetchG()
			fetchA()
		}
	}
	var aClone, gClone []time.Duration
	for i := 0; i < *clones; i++ {
		dA, dG := filepath.Join(work, fmt.Sprintf("ca%d.git", i)), filepath.Join(work, fmt.Sprintf("cg%d.git", i))
		t := time.Now()
		c, err := store.Clone(ctx, base+"a.git", dA, store.CloneOptions{Options: store.Options{NoSync: true}})
		check(err)
		c.Close()
		aClone = append(aClone, time.Since(t))
		t = time.Now()
		run("git", "clone", "-q", "--bare", base+"b.git", dG)
		gClone = append(gClone, time.Since(t))
		os.RemoveAll(dA)
		os.RemoveAll(dG)
	}
	fmt.Printf("%-44s %10s %10s %8s\n", "what (medians)", "aiwg-state", "git", "ratio")
	row("push of one new mutation", aPush, gPush)
	row("fetch of one new mutation", aFetch, gFetch)
	row(fmt.Sprintf("clone of the %d-commit store", *commits+1), aClone, gClone)
}

func row(what string, a, g []time.Duration) {
	ma, mg := benchutil.Median(a), benchutil.Median(g)
	fmt.Printf("%-44s %10s %10s %7.2fx\n", what, ma.Round(10*time.Microsecond), mg.Round(10*time.Microsecond), float64(ma)/float64(mg))
}

// fastImport appends n commits to main, each a canonical JSON document
// rewrite among 100, in the shape aiwg-state writes.
func fastImport(storeDir string, n int) {
	head := strings.TrimSpace(out("git", "--git-dir", storeDir, "rev-parse", "main"))
	cmd := exec.Command("git", "--git-dir", storeDir, "fast-import", "--quiet")
	in, err := cmd.StdinPipe()
	check(err)
	check(cmd.Start())
	w := bufio.NewWriterSize(in, 1<<20)
	when := time.Now().Add(-time.Duration(n) * time.Second).Unix()
	for i := 0; i < n; i++ {
		doc, err := objects.Encode(map[string]any{"id": fmt.Sprint(i % 100), "value": fmt.Sprint(i), "status": map[string]any{"step": fmt.Sprint(i)}})
		check(err)
		msg := fmt.Sprintf("set docs/d%03d.json#value\n\nMutation-Id: mut-%08d\nOperation: update\nPath: docs/d%03d.json#value\n", i%100, i, i%100)
		fmt.Fprintf(w, "commit refs/heads/main\nauthor agent-%d <agent-%d@agents.invalid> %d +0000\ncommitter agent-%d <agent-%d@agents.invalid> %d +0000\ndata %d\n%s",
			i%7, i%7, when+int64(i), i%7, i%7, when+int64(i), len(msg), msg)
		if i == 0 {
			fmt.Fprintf(w, "from %s\n", head)
		}
		fmt.Fprintf(w, "M 100644 inline docs/d%03d.json\ndata %d\n%s\n", i%100, len(doc), doc)
	}
	check(w.Flush())
	in.Close()
	check(cmd.Wait())
}

func run(name string, args ...string) {
	if b, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		check(fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b))
	}
}

func out(name string, args ...string) string {
	b, err := exec.Command(name, args...).Output()
	check(err)
	return string(b)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
