// Command audit measures per-key history and blame at scale, in one run on
// one machine: stores of 10,000 and 100,000 commits over 1,000 variables
// (one JSON document each, in one directory), built with git fast-import,
// each commit setting one variable as an agent's mutation would (trailers
// included). On each store it times, as separate processes:
//
//	aiwg-state log FILE          vs  git log --format=%H -- FILE
//	aiwg-state log FILE#value    vs  git log -p -- FILE (the keyed log, old -> new values)
//	aiwg-state blame FILE        vs  git blame FILE
//
// each pair interleaved, with medians, ranges and peak resident memory.
// and, through the Go API on a store kept open, log and blame again (the
// index's own cost, without process start-up and go-git's set-up of the
// pack index, which grows with the number of objects).
//
// for a busy variable (changed ~N/1000 times, chosen at random per commit)
// and a rare one (changed exactly 10 times at either size), with git's
// commit-graph written with Bloom filters (--changed-paths). The index is
// built first with `aiwg-state reindex`: the one-time cost on a history
// written by plain git, timed (wall, CPU, peak memory) interleaved with
// git's commit-graph write from scratch. A smaller run goes through our
// own write path (Store.Set, index maintained by the after-commit hook)
// and reports the hook's share of a write.
//
//	go run ./bench/audit                    # 10k and 100k, 2,000 own writes
//	go run ./bench/audit -sizes 10000 -runs 5
//	go run ./bench/audit -sizes 1000000 -runs 3 -own 0   # a million commits: the build takes minutes
//	go run ./bench/audit -sizes 1000000 -own 0 -store DIR/fi-1000000.git -index-runs 1   # again on a kept store
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/audit"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/store"
)

const variables = 1000

func main() {
	sizes := flag.String("sizes", "10000,100000", "commit counts of the fast-import stores")
	runs := flag.Int("runs", 7, "timed runs per command (median reported)")
	own := flag.Int("own", 2000, "mutations through our own write path")
	keep := flag.Bool("keep", false, "keep the stores (their directory is printed)")
	indexRuns := flag.Int("index-runs", 3, "interleaved runs of git commit-graph write and aiwg-state reindex per size")
	reuse := flag.String("store", "", "measure this store, kept by an earlier -keep run of the one size given, instead of building one (with -index-runs 0, its index must be this build's)")
	flag.Parse()
	work, err := os.MkdirTemp("", "aiwg-audit-bench-")
	check(err)
	if *keep {
		fmt.Println("stores in", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "aiwg-state")
	benchutil.BuildCLI(bin)
	fmt.Printf("machine: %s/%s, %d CPUs, %s; %d variables in one directory; medians of %d runs (process start included)\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), variables, *runs)
	fmt.Printf("%-9s %-40s %22s %22s %8s\n", "commits", "query", "aiwg-state", "git", "ours/git")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		storeDir := filepath.Join(work, fmt.Sprintf("fi-%d.git", n))
		var busyChanges int
		if *reuse != "" {
			storeDir = *reuse
			busyChanges = strings.Count(benchutil.Git(storeDir, "log", "--first-parent", "--format=%H", "--", "variables/v0042.json"), "\n")
			fmt.Printf("%-9d (the store in %s)\n", n, storeDir)
		} else {
			t0 := time.Now()
			busyChanges = fastImport(storeDir, n)
			fmt.Printf("%-9d (fast-import %s)\n", n, round(time.Since(t0)))
		}
		indexBuild(bin, storeDir, n, *indexRuns)
		compare(bin, storeDir, n, "busy", "variables/v0042.json", busyChanges, *runs)
		compare(bin, storeDir, n, "rare", "variables/rare.json", 10, *runs)
		// In-process last: on Linux a child's peak RSS counts this
		// process's at the exec, and a store kept open here holds the
		// index's snapshot.
		inProcess(storeDir, n, "variables/v0042.json", *runs)
		inProcess(storeDir, n, "variables/rare.json", *runs)
	}
	if *own > 0 {
		ownWritePath(bin, work, *own, *runs)
	}
}

func compare(bin, storeDir string, n int, label, file string, changes, runs int) {
	// row runs ours and git's in turn, runs times after one warm-up each:
	// wall time median (range), and the median of peak resident memory.
	row := func(what string, ours, theirs []string) {
		ours = append(ours, "--store", storeDir)
		if theirs != nil {
			theirs = append([]string{"--git-dir", storeDir}, theirs...)
		}
		var o, g []sample
		for i := -1; i < runs; i++ {
			so := measure(bin, ours...)
			if i >= 0 {
				o = append(o, so)
			}
			if theirs != nil {
				if sg := measure("git", theirs...); i >= 0 {
					g = append(g, sg)
				}
			}
		}
		ow, _, orss := summary(o)
		gs, ratio, rss := "-", "-", fmt.Sprintf("%d MiB", orss[1]>>10)
		if theirs != nil {
			gw, _, grss := summary(g)
			gs = spread(gw)
			ratio = fmt.Sprintf("%.2f", float64(ow[1])/float64(gw[1]))
			rss = fmt.Sprintf("%d / %d MiB", orss[1]>>10, grss[1]>>10)
		}
		fmt.Printf("%-9d %-40s %22s %22s %8s  peak RSS %s\n", n, what, spread(ow), gs, ratio, rss)
	}
	// Both must list the same commits.
	ours := strings.Count(run(bin, "log", file, "--store", storeDir), "\n")
	theirs := strings.Count(benchutil.Git(storeDir, "log", "--first-parent", "--format=%H", "--", file), "\n")
	if ours != theirs {
		fmt.Fprintf(os.Stderr, "log %s: aiwg-state lists %d commits, git %d\n", file, ours, theirs)
		os.Exit(1)
	}
	row(fmt.Sprintf("log %s (%s, %d changes)", filepath.Base(file), label, changes), []string{"log", file}, []string{"log", "--format=%H", "--", file})
	row(fmt.Sprintf("log %s#value vs log -p", filepath.Base(file)), []string{"log", file + "#value"}, []string{"log", "-p", "--", file})
	row(fmt.Sprintf("blame %s", filepath.Base(file)), []string{"blame", file}, []string{"blame", "--", file})
}

// inProcess times log and blame through the Go API on a store kept open:
// the index's own cost, without process start and the per-process set-up
// of the packs and the index.
func inProcess(storeDir string, n int, file string, runs int) {
	ctx := context.Background()
	st, err := aiwgstate.Open(ctx, storeDir, store.Options{})
	check(err)
	defer st.Close()
	lg := median(runs, func() {
		check(st.Log(ctx, store.LogOptions{File: file}, func(*store.Mutation) bool { return true }))
	})
	bl := median(runs, func() {
		_, err := st.Blame(ctx, file, store.ReadOptions{}, store.BlameOptions{})
		check(err)
	})
	fmt.Printf("%-9d %-40s %22s %22s\n", n, "in-process, "+filepath.Base(file)+": log, blame", round(lg), round(bl))
}

// fastImport writes n commits into a new bare store: the first creates
// the 1,000 variables and rare.json, each later one sets one variable; the
// rare variable is set 10 times, evenly spread. Returns how many commits
// changed v0042.
func fastImport(storeDir string, n int) int {
	return benchutil.FastImport(storeDir, n, variables)
}

// ownWritePath writes through Store.Set, where the after-commit hook keeps
// the index, and times the hook on its own.
func ownWritePath(bin, work string, n, runs int) {
	ctx := context.Background()
	dir := filepath.Join(work, "own.git")
	st, err := aiwgstate.Init(ctx, dir, store.InitOptions{Options: store.Options{NoSync: true}})
	check(err)
	for v := 0; v < variables; v++ {
		_, err := st.Set(ctx, fmt.Sprintf("variables/v%04d.json", v), "value", []byte("0"), store.WriteOptions{Agent: "seed"})
		check(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	writes := make([]time.Duration, 0, n)
	var commits []plumbing.Hash
	for i := 0; i < n; i++ {
		file := fmt.Sprintf("variables/v%04d.json", r.IntN(variables))
		if i%(n/10) == 0 {
			file = "variables/v0042.json"
		}
		t0 := time.Now()
		m, err := st.Set(ctx, file, "value", []byte(strconv.Itoa(i+1)), store.WriteOptions{Agent: fmt.Sprintf("agent%d", i%8)})
		writes = append(writes, time.Since(t0))
		check(err)
		commits = append(commits, plumbing.NewHash(m.Commit))
	}
	// The hook alone, on the same commits (into a scratch index).
	scratch, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
	check(err)
	ix := audit.Open(scratch.Repo())
	hooks := make([]time.Duration, 0, len(commits))
	for _, h := range commits[len(commits)-min(500, len(commits)):] {
		c, err := scratch.Repo().ReadCommit(h)
		check(err)
		t0 := time.Now()
		check(ix.Add(c))
		hooks = append(hooks, time.Since(t0))
	}
	st.Close()
	scratch.Close()
	benchutil.Git(dir, "gc", "-q")
	benchutil.Git(dir, "commit-graph", "write", "--reachable", "--changed-paths")
	fmt.Printf("\nown write path: %d variables seeded, then %d Store.Set: median write %s, of which the index hook %s\n",
		variables, n, round(benchutil.Median(writes)), round(benchutil.Median(hooks)))
	total := variables + n + 1
	compare(bin, dir, total, "own", "variables/v0042.json", 10+1, runs)
}

// indexBuild times git's commit-graph write (from scratch, Bloom filters
// included) and our reindex, interleaved: wall time, CPU (user+system) and
// peak resident memory, medians with ranges.
func indexBuild(bin, storeDir string, n, runs int) {
	if runs < 1 {
		return
	}
	var g, o []sample
	for i := 0; i < runs; i++ {
		os.Remove(filepath.Join(storeDir, "objects", "info", "commit-graph"))
		os.RemoveAll(filepath.Join(storeDir, "objects", "info", "commit-graphs"))
		g = append(g, measure("git", "--git-dir", storeDir, "commit-graph", "write", "--reachable", "--changed-paths"))
		o = append(o, measure(bin, "reindex", "--store", storeDir))
	}
	row := func(what string, ss []sample) {
		wall, cpu, rss := summary(ss)
		fmt.Printf("%-9d %-40s wall %s, CPU %s, peak RSS %d MiB (%d–%d)\n", n, what,
			spread(wall), spread(cpu), rss[1]>>10, rss[0]>>10, rss[2]>>10)
	}
	row("git commit-graph write --changed-paths", g)
	row("aiwg-state reindex", o)
}

type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak resident memory, KiB
}

// measure runs a command to its end: wall time, CPU (user+system) and
// peak resident memory.
func measure(name string, args ...string) sample {
	cmd := exec.Command(name, args...)
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		os.Exit(1)
	}
	ps := cmd.ProcessState
	rss := int64(0)
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) // KiB on Linux
	}
	return sample{time.Since(t0), ps.UserTime() + ps.SystemTime(), rss}
}

// summary is the minimum, median and maximum of each measure.
func summary(ss []sample) (wall, cpu [3]time.Duration, rss [3]int64) {
	var ws, cs []time.Duration
	var rs []int64
	for _, s := range ss {
		ws, cs, rs = append(ws, s.wall), append(cs, s.cpu), append(rs, s.rss)
	}
	slices.Sort(ws)
	slices.Sort(cs)
	slices.Sort(rs)
	m := len(ss) / 2
	return [3]time.Duration{ws[0], ws[m], ws[len(ws)-1]}, [3]time.Duration{cs[0], cs[m], cs[len(cs)-1]}, [3]int64{rs[0], rs[m], rs[len(rs)-1]}
}

// spread is a median with its range.
func spread(d [3]time.Duration) string {
	return fmt.Sprintf("%s (%s–%s)", round(d[1]), round(d[0]), round(d[2]))
}

func median(runs int, fn func()) time.Duration {
	fn() // warm the page cache
	ds := make([]time.Duration, runs)
	for i := range ds {
		t0 := time.Now()
		fn()
		ds[i] = time.Since(t0)
	}
	return benchutil.Median(ds)
}

func run(bin string, args ...string) string {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "aiwg-state %s: %v\n", strings.Join(args, " "), err)
		os.Exit(1)
	}
	return string(out)
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
