// Command rlm measures RLM variable reads and writes against the size of a
// state: `var set` and `var get` on a state with 1,000 variables and 10,000
// mutations, against the same on a state with 10 variables and 10
// mutations (the target: within 1.2x), in-process through the Go API and
// through the CLI binary; and `state export` of the big state (target:
// under 2 s). Everything runs in one go on one machine; medians are
// printed.
//
//	go run ./bench/rlm            # full run
//	go run ./bench/rlm -n 300     # quicker
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
)

func main() {
	n := flag.Int("n", 1000, "in-process operations per measurement")
	ncli := flag.Int("cli", 60, "CLI invocations per measurement")
	keep := flag.Bool("keep", false, "keep the stores (for profiling) and print where they are")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "aiwg-bench-rlm-")
	check(err)
	if *keep {
		fmt.Println("stores kept in", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "aiwg-state")
	benchutil.BuildCLI(bin)
	fmt.Printf("machine: %s/%s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())

	t0 := time.Now()
	bigDir, bigID := seed(ctx, work, "big", 1000, 10000)
	fmt.Printf("seeded big state (1,000 variables, 10,000 mutations) in %.1fs\n", time.Since(t0).Seconds())
	smallDir, smallID := seed(ctx, work, "small", 10, 10)
	fmt.Printf("\n%-44s %10s %10s %7s\n", "what", "small", "big", "ratio")

	// Each pair of measurements alternates small and big call by call, so
	// a change in the machine's load (it is shared) falls on both alike
	// and the ratio stays meaningful.
	for _, sync := range []bool{false, true} {
		label := map[bool]string{false: "no fsync", true: "fsync"}[sync]
		m := *n
		if sync {
			m = *n / 4
		}
		small, big := openStore(ctx, smallDir, sync), openStore(ctx, bigDir, sync)
		ss, bs := alternate(m, apiSet(ctx, small, smallID), apiSet(ctx, big, bigID))
		row("Go API States().SetVar (update), "+label, ss, bs)
		if !sync {
			sg, bg := alternate(*n, apiGet(ctx, small, smallID), apiGet(ctx, big, bigID))
			row("Go API Variable (get)", sg, bg)
		}
		small.Close()
		big.Close()
	}
	sc, bc := alternate(*ncli, cli(bin, smallDir, smallID, true), cli(bin, bigDir, bigID, true))
	row("CLI var set (process per call), fsync", sc, bc)
	sc, bc = alternate(*ncli, cli(bin, smallDir, smallID, false), cli(bin, bigDir, bigID, false))
	row("CLI var get (process per call)", sc, bc)

	st, err := aiwgstate.Open(ctx, bigDir, store.Options{})
	check(err)
	var exp []time.Duration
	var size int
	for i := 0; i < 5; i++ {
		t := time.Now()
		doc, err := st.States().Export(ctx, bigID, rlm.ExportOptions{})
		exp = append(exp, time.Since(t))
		check(err)
		size = len(doc)
	}
	st.Close()
	var cliExp []time.Duration
	for i := 0; i < 3; i++ {
		t := time.Now()
		out, err := exec.Command(bin, "state", "export", bigID, "--store", bigDir).Output()
		cliExp = append(cliExp, time.Since(t))
		check(err)
		size = len(out)
	}
	fmt.Printf("\nstate export of the big state (%.1f MB, validated against the schema): Go API median %s, CLI median %s (target < 2s)\n",
		float64(size)/1e6, benchutil.Median(exp).Round(time.Millisecond), benchutil.Median(cliExp).Round(time.Millisecond))
}

// seed makes a store with one state holding vars variables (prompt and
// Final included, as the specification's limit counts them), written with muts
// mutations in all (one commit each after the init, which makes two).
func seed(ctx context.Context, work, name string, vars, muts int) (string, string) {
	dir := filepath.Join(work, name+".git")
	st, err := aiwgstate.Init(ctx, dir, store.InitOptions{Options: store.Options{NoSync: true}})
	check(err)
	defer st.Close()
	info, _, err := st.States().Init(ctx, rlm.StateInit{Prompt: "benchmark"}, store.WriteOptions{Agent: "bench"})
	check(err)
	for i := 0; i < muts-2; i++ {
		_, err := st.States().SetVar(ctx, info.StateID, fmt.Sprintf("var_%04d", i%(vars-2)), json.Number(fmt.Sprint(i)), rlm.VarOptions{}, store.WriteOptions{Agent: "bench"})
		check(err)
	}
	check(st.GC(ctx, false))
	return dir, info.StateID
}

func openStore(ctx context.Context, dir string, sync bool) *aiwgstate.Store {
	st, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: !sync})
	check(err)
	return st
}

// alternate times n calls of a and of b, taking turns.
func alternate(n int, a, b func(i int)) (ta, tb []time.Duration) {
	for i := 0; i < n; i++ {
		t := time.Now()
		a(i)
		ta = append(ta, time.Since(t))
		t = time.Now()
		b(i)
		tb = append(tb, time.Since(t))
	}
	return ta, tb
}

func apiSet(ctx context.Context, st *aiwgstate.Store, id string) func(int) {
	return func(i int) {
		_, err := st.States().SetVar(ctx, id, "var_0005", json.Number(fmt.Sprint(1_000_000+i)), rlm.VarOptions{}, store.WriteOptions{Agent: "bench"})
		check(err)
	}
}

func apiGet(ctx context.Context, st *aiwgstate.Store, id string) func(int) {
	return func(i int) {
		_, err := st.States().Var(ctx, id, fmt.Sprintf("var_%04d", i%8), rlm.GetOptions{})
		check(err)
	}
}

func cli(bin, dir, id string, set bool) func(int) {
	return func(i int) {
		args := []string{"var", "get", "var_0003", "--state", id, "--store", dir}
		if set {
			args = []string{"var", "set", "var_0003", fmt.Sprint(2_000_000 + i), "--state", id, "--store", dir, "--agent", "bench"}
		}
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "%v: %s\n", err, b)
			os.Exit(1)
		}
	}
}

func row(what string, small, big []time.Duration) {
	s, b := benchutil.Median(small), benchutil.Median(big)
	fmt.Printf("%-44s %10s %10s %6.2fx\n", what, s.Round(time.Microsecond), b.Round(time.Microsecond), float64(b)/float64(s))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
