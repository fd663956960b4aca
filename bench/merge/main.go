// Command merge measures the merge of two branches in one run on one
// machine: a store of N variables (one file each, in one directory), two
// branches that each changed C of them since they forked (half of each
// side's changes hit the same variables, settled by last-write-wins), merged
// by (a) the Go API in-process, (b) the aiwg-state CLI (a process, like
// git), and (c) `git merge-tree --write-tree` on the same branches, git's
// tree merge without JSON merging, for reference. Time is the median of
// -runs runs; memory is the peak RSS of the process (b, c, measured by
// /usr/bin/time) and the bytes allocated by one merge (a).
//
//	go run ./bench/merge                 # 1,000 and 10,000 variables, 100 and 1,000 changes
//	go run ./bench/merge -runs 3
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/store"
)

func main() {
	runs := flag.Int("runs", 5, "runs per measurement")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "aiwg-bench-merge-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "aiwg-state")
	benchutil.BuildCLI(bin)
	fmt.Printf("machine: %s/%s, %d CPUs, %s; median of %d runs\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), *runs)
	fmt.Printf("%-9s %-8s | %-22s | %-22s | %-22s | %s\n", "variables", "changes", "(a) API merge", "(b) CLI merge", "(c) git merge-tree", "b/c time, mem")
	for _, size := range []int{1000, 10000} {
		for _, changes := range []int{100, 1000} {
			if changes > size {
				continue
			}
			dir := filepath.Join(work, fmt.Sprintf("s%d-c%d", size, changes))
			build(ctx, dir, size, changes)
			st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
			check(err)
			var api []time.Duration
			var alloc []uint64
			for r := 0; r < *runs; r++ {
				into := fmt.Sprintf("api-%d", r)
				_, err := st.CreateBranch(ctx, into, "ours")
				check(err)
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				t0 := time.Now()
				res, err := st.Merges().Merge(ctx, "theirs", merge.MergeOptions{Into: into, Write: store.WriteOptions{Agent: "bench"}})
				api = append(api, time.Since(t0))
				runtime.ReadMemStats(&m1)
				alloc = append(alloc, m1.TotalAlloc-m0.TotalAlloc)
				check(err)
				if res.Status != merge.MergeCommitted || len(res.Files) < changes {
					panic(fmt.Sprintf("unexpected merge: %s, %d files", res.Status, len(res.Files)))
				}
			}
			st.Close()
			var cli, gitT []time.Duration
			var cliRSS, gitRSS []int64
			for r := 0; r < *runs; r++ {
				into := fmt.Sprintf("cli-%d", r)
				run(bin, "branch", into, "--from", "ours", "--store", dir, "--no-sync")
				d, rss := measure(bin, "merge", "theirs", "--into", into, "--store", dir, "--no-sync")
				cli, cliRSS = append(cli, d), append(cliRSS, rss)
				d, rss = measure("git", "--git-dir", dir, "merge-tree", "--write-tree", "ours", "theirs")
				gitT, gitRSS = append(gitT, d), append(gitRSS, rss)
			}
			a, c, g := benchutil.Median(api), benchutil.Median(cli), benchutil.Median(gitT)
			fmt.Printf("%-9d %-8d | %8s %8.1f MB alloc | %8s %7.1f MB rss | %8s %7.1f MB rss | %.2fx, %.2fx\n",
				size, changes, round(a), float64(medianU(alloc))/1e6, round(c), float64(medianI(cliRSS))/1024, round(g), float64(medianI(gitRSS))/1024,
				float64(c)/float64(g), float64(medianI(cliRSS))/float64(medianI(gitRSS)))
		}
	}
}

// build makes a store of size variables, one commit, and branches ours
// and theirs with changes variables changed each, one commit each; the
// sides overlap on half their changes.
func build(ctx context.Context, dir string, size, changes int) {
	st, err := aiwgstate.Init(ctx, dir, store.InitOptions{Options: store.Options{NoSync: true}, Agent: "bench"})
	check(err)
	defer st.Close()
	doc := func(i int, v string, at time.Time) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("v%05d", i), "value": v, "updated_at": at.Format(time.RFC3339)})
		return b
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	path := func(i int) string { return fmt.Sprintf("global/variables/v%05d.json", i) }
	ops := make([]store.Op, size)
	for i := range ops {
		ops[i] = store.Op{Op: "put", File: path(i), Value: doc(i, "base", t0)}
	}
	_, err = st.Apply(ctx, ops, store.WriteOptions{Agent: "bench"})
	check(err)
	for _, b := range []string{"ours", "theirs"} {
		_, err := st.CreateBranch(ctx, b, "main")
		check(err)
	}
	side := func(branch string, from int, at time.Time) {
		ops := make([]store.Op, changes)
		for k := range ops {
			i := (from + k) % size
			ops[k] = store.Op{Op: "put", File: path(i), Value: doc(i, branch, at)}
		}
		_, err := st.Apply(ctx, ops, store.WriteOptions{Agent: branch, Branch: branch})
		check(err)
	}
	side("ours", 0, t0.Add(time.Minute))
	side("theirs", changes/2, t0.Add(2*time.Minute))
}

func run(name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		panic(fmt.Sprintf("%s %v: %v\n%s", name, args, err, out))
	}
}

// measure runs a process and returns its wall time and peak RSS (KB). The
// RSS comes from /usr/bin/time, which forks the process from itself: the
// rusage of a child this (large) process started directly would report
// this process's RSS, which Linux carries over to the child's exec.
func measure(name string, args ...string) (time.Duration, int64) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "AIWG_RSS %M", name}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	// merge-tree exits 1 when its text merge conflicts (the files both
	// sides changed: git does not know JSON), having written its tree.
	if err != nil && !(name == "git" && cmd.ProcessState.ExitCode() == 1) {
		panic(fmt.Sprintf("%s %v: %v\n%s%s", name, args, err, out.String(), errOut.String()))
	}
	var rss int64
	text := errOut.String()
	if i := strings.LastIndex(text, "AIWG_RSS "); i >= 0 {
		fmt.Sscan(text[i+len("AIWG_RSS "):], &rss)
	}
	return d, rss
}

func medianU(xs []uint64) uint64 {
	s := append([]uint64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func medianI(xs []int64) int64 {
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func round(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }

func check(err error) {
	if err != nil {
		panic(err)
	}
}
