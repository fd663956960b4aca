// Command sql measures SQL over a store at scale, in one run on one
// machine: stores of 10,000 and 100,000 commits over 1,000 documents
// (built with git fast-import, as bench/audit builds them, each commit
// setting one document with an agent's trailers). On each store it times
// the index's build from nothing (sqlstate's Update after deleting it)
// and its size on disk; its update after 100 new commits written through
// the store (half memory records, half documents); three typical queries
// once the index is warm, as separate processes (aiwg-state-sql, process
// start included) and in-process: changes per agent over all of history,
// the history of one file, and memory records by a key of their JSON
// payload; and one query through aiwg-state sql (which runs
// aiwg-state-sql), and one --at a past revision (an index built in memory
// for it).
//
//	go run ./bench/sql                          # 10k and 100k
//	go run ./bench/sql -sizes 10000 -runs 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/memory"
	"github.com/aiwg/aiwg-state/sqlstate"
	"github.com/aiwg/aiwg-state/store"
)

const documents = 1000

var queries = []struct{ name, q string }{
	{"changes per agent", `SELECT agent, count(*) FROM mutations GROUP BY agent`},
	{"one file's history", `SELECT commit_id, agent, time FROM mutations WHERE path = 'variables/rare.json' ORDER BY seq DESC`},
	{"memory by payload key", `SELECT id, payload FROM memory WHERE kind = 'fact' AND payload->>'$.topic' = 'auth'`},
}

func main() {
	sizes := flag.String("sizes", "10000,100000", "commit counts of the fast-import stores")
	runs := flag.Int("runs", 7, "timed runs per query (median and range reported)")
	builds := flag.Int("builds", 3, "timed builds and updates per store")
	keep := flag.Bool("keep", false, "keep the stores (their directory is printed)")
	flag.Parse()
	work, err := os.MkdirTemp("", "aiwg-sql-bench-")
	check(err)
	if *keep {
		fmt.Println("stores in", work)
	} else {
		defer os.RemoveAll(work)
	}
	benchutil.BuildCLI(work+"/", "./cmd/aiwg-state", "./cmd/aiwg-state-sql")
	fmt.Printf("machine: %s/%s, %d CPUs, %s; %d documents; medians [min-max] of %d query runs, %d builds\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), documents, *runs, *builds)
	ctx := context.Background()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		dir := filepath.Join(work, fmt.Sprintf("fi-%d.git", n))
		benchutil.FastImport(dir, n, documents)
		st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
		check(err)
		db := sqlstate.Open(st.Store, sqlstate.Options{})
		fmt.Printf("%d commits\n", n)

		var build []time.Duration
		var size int64
		for i := 0; i < *builds; i++ {
			check(db.Remove())
			t0 := time.Now()
			stats, err := db.Update(ctx, store.ReadOptions{})
			check(err)
			build = append(build, time.Since(t0))
			if !stats.Full {
				check(fmt.Errorf("build %d was not a full build", i))
			}
			size = dirSize(filepath.Join(dir, "aiwg", "sql"))
		}
		fmt.Printf("  %-44s %s\n", "index build from nothing", spread(build))
		fmt.Printf("  %-44s %.1f MB (%d bytes)\n", "index size", float64(size)/1e6, size)

		var upd []time.Duration
		for i := 0; i < *builds; i++ {
			write100(ctx, st, i)
			t0 := time.Now()
			stats, err := db.Update(ctx, store.ReadOptions{})
			check(err)
			upd = append(upd, time.Since(t0))
			if stats.Full || stats.Commits != 100 {
				check(fmt.Errorf("update %d: %+v, want 100 commits, not full", i, stats))
			}
		}
		fmt.Printf("  %-44s %s\n", "update after 100 new commits", spread(upd))

		for _, q := range queries {
			var proc, inproc []time.Duration
			for i := 0; i < *runs; i++ {
				t0 := time.Now()
				run(filepath.Join(work, "aiwg-state-sql"), "sql", q.q, "--store", dir)
				proc = append(proc, time.Since(t0))
				t0 = time.Now()
				_, err := db.Query(ctx, q.q, store.ReadOptions{})
				check(err)
				inproc = append(inproc, time.Since(t0))
			}
			fmt.Printf("  %-44s %s   in-process %s\n", "query: "+q.name+" (process)", spread(proc), spread(inproc))
		}
		var hop, at []time.Duration
		for i := 0; i < *runs; i++ {
			t0 := time.Now()
			run(filepath.Join(work, "aiwg-state"), "sql", queries[0].q, "--store", dir)
			hop = append(hop, time.Since(t0))
		}
		fmt.Printf("  %-44s %s\n", "query: "+queries[0].name+" via aiwg-state sql", spread(hop))
		for i := 0; i < *builds; i++ {
			t0 := time.Now()
			run(filepath.Join(work, "aiwg-state-sql"), "sql", queries[0].q, "--at", "HEAD~1", "--store", dir)
			at = append(at, time.Since(t0))
		}
		fmt.Printf("  %-44s %s\n", "query --at HEAD~1 (built in memory)", spread(at))
		st.Close()
		fmt.Println()
	}
}

// write100 makes 100 commits: 50 memory records, 50 documents.
func write100(ctx context.Context, st *aiwgstate.Store, round int) {
	topics := []string{"auth", "db", "billing", "deploy"}
	for i := 0; i < 50; i++ {
		k := memory.Key{Namespace: "long_term", Kind: "fact", ID: fmt.Sprintf("r%d-f%d", round, i)}
		_, _, err := st.Memory().Put(ctx, k, []byte(fmt.Sprintf(`{"topic":%q,"n":%d}`, topics[i%4], i)), 0, store.WriteOptions{Agent: fmt.Sprintf("agent%d", i%8)})
		check(err)
		// A value no fast-import commit wrote, so that every Set is a commit.
		_, err = st.Set(ctx, fmt.Sprintf("variables/v%04d.json", (round*50+i)%documents), "value", []byte(strconv.Itoa(-1-round*50-i)), store.WriteOptions{Agent: fmt.Sprintf("agent%d", i%8)})
		check(err)
	}
}

func spread(ds []time.Duration) string {
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	return fmt.Sprintf("%9s [%s-%s]", round(benchutil.Median(ds)), round(lo), round(hi))
}

func round(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Microsecond).String()
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func run(bin string, args ...string) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		check(fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/sql:", err)
		os.Exit(1)
	}
}
