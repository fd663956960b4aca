// Command servemem measures how a long-running `aiwg-state serve` grows
// with the history it serves: for each store size it builds a store of
// that many commits (git fast-import, as bench/audit does: 1,000 variable
// documents, eight agents), indexes it, starts a server on a copy of it,
// sends it a mix of client commands (set, get, log of a key, log of a
// document, blame, the newest mutations) and reads the server's resident
// memory from /proc: its peak (VmHWM), and at the end its own (RssAnon:
// heap and stacks) and its mapped files' pages (RssFile: the packs and
// the index it reads, which the kernel may drop and read again). The
// server writes a heap profile as it stops (AIWG_STATE_HEAP_PROFILE), from
// which the live Go heap at the end is read.
//
//	go run ./bench/servemem                          # 10,000 and 100,000 commits, 600 commands each
//	go run ./bench/servemem -runs 3                  # medians of three servers of each store, with ranges
//	go run ./bench/servemem -store /srv/big.git      # an existing store (a copy of it: serve writes)
//	go run ./bench/servemem -bins old=/tmp/a,new=/tmp/b  # prebuilt aiwg-state and aiwg-state-client, interleaved
//	go run ./bench/servemem -sizes 1000000 -ops 300  # a million (the store takes minutes to build)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
)

// sample is one server's memory, in KiB, and its commands' time.
type sample struct {
	hwm, anon, file, heap int64
	elapsed               time.Duration
}

type bin struct{ name, dir string }

var verbose bool

func main() {
	sizes := flag.String("sizes", "10000,100000", "store sizes in commits, comma-separated")
	storeDir := flag.String("store", "", "serve a copy of this existing store instead of building stores (it is never written)")
	ops := flag.Int("ops", 600, "client commands sent to each server")
	runs := flag.Int("runs", 1, "servers started per store and program; figures are medians with ranges")
	bins := flag.String("bins", "", "name=DIR,... directories of prebuilt aiwg-state and aiwg-state-client to compare, interleaved (default: build this tree)")
	profiles := flag.String("profiles", "", "keep each server's heap profile in this directory")
	flag.BoolVar(&verbose, "v", false, "say which commands raised each server's peak")
	flag.Parse()
	work, err := os.MkdirTemp("", "aiwg-servemem-")
	check(err)
	defer os.RemoveAll(work)
	var programs []bin
	if *bins == "" {
		dir := filepath.Join(work, "bin")
		benchutil.BuildCLI(dir+string(os.PathSeparator), "./cmd/aiwg-state", "./cmd/aiwg-state-client")
		programs = []bin{{"this", dir}}
	} else {
		for _, b := range strings.Split(*bins, ",") {
			name, dir, ok := strings.Cut(b, "=")
			if !ok {
				name, dir = filepath.Base(b), b
			}
			abs, err := filepath.Abs(dir)
			check(err)
			programs = append(programs, bin{name, abs})
		}
	}
	if *profiles != "" {
		check(os.MkdirAll(*profiles, 0o755))
	}
	fmt.Printf("serve's memory by history length; %d commands a server; %s\n", *ops, benchutil.GitVersion())
	fmt.Printf("%-9s %-8s %-22s %-22s %-22s %-22s %s\n", "commits", "program", "peak RSS", "own at end (RssAnon)", "files at end (RssFile)", "Go heap at end (live)", "time")

	type base struct {
		dir string
		n   int
	}
	var bases []base
	if *storeDir != "" {
		dir := filepath.Join(work, "base.git")
		copyStore(*storeDir, dir)
		if _, err := os.Stat(filepath.Join(dir, "aiwg", "index", "snapshot")); err != nil {
			run(filepath.Join(programs[0].dir, "aiwg-state"), "reindex", "--store", dir)
		}
		n, err := strconv.Atoi(strings.TrimSpace(benchutil.Git(dir, "rev-list", "--count", "HEAD")))
		check(err)
		bases = append(bases, base{dir, n})
	} else {
		for _, f := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			check(err)
			dir := filepath.Join(work, fmt.Sprintf("base-%d.git", n))
			benchutil.FastImport(dir, n, 1000)
			run(filepath.Join(programs[0].dir, "aiwg-state"), "reindex", "--store", dir)
			bases = append(bases, base{dir, n})
		}
	}
	for _, b := range bases {
		samples := make([][]sample, len(programs))
		for r := 0; r < *runs; r++ {
			for i, p := range programs { // interleaved: a busy minute hits each alike
				dir := filepath.Join(work, "served.git")
				copyStore(b.dir, dir)
				prof := filepath.Join(work, "heap.pprof")
				if *profiles != "" {
					prof = filepath.Join(*profiles, fmt.Sprintf("heap-%d-%s-%d.pprof", b.n, p.name, r))
				}
				samples[i] = append(samples[i], serveOnce(p, dir, prof, *ops))
				check(os.RemoveAll(dir))
			}
		}
		for i, p := range programs {
			s := samples[i]
			fmt.Printf("%-9d %-8s %-22s %-22s %-22s %-22s %s\n", b.n, p.name,
				spread(s, func(s sample) int64 { return s.hwm }),
				spread(s, func(s sample) int64 { return s.anon }),
				spread(s, func(s sample) int64 { return s.file }),
				spread(s, func(s sample) int64 { return s.heap }),
				medianTime(s))
		}
	}
}

// serveOnce starts a server of p on dir, sends it ops commands, reads its
// memory and stops it.
func serveOnce(p bin, dir, prof string, ops int) sample {
	bin, client := filepath.Join(p.dir, "aiwg-state"), filepath.Join(p.dir, "aiwg-state-client")
	srv := exec.Command(bin, "serve", "--store", dir, "--idle", "1h")
	srv.Env = append(os.Environ(), "AIWG_STATE_HEAP_PROFILE="+prof)
	var log strings.Builder // its greeting; shown if it fails
	srv.Stderr = &log
	check(srv.Start())
	waitFor(filepath.Join(dir, "aiwg", "serve.sock"), &log)
	var maxAnon, maxFile int64 // sampled every 2 ms: which of the two the peak is made of
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	if verbose {
		go func() {
			defer close(sampled)
			for {
				select {
				case <-stopSampling:
					return
				case <-time.After(2 * time.Millisecond):
				}
				_, anon, file := memory(srv.Process.Pid)
				maxAnon, maxFile = max(maxAnon, anon), max(maxFile, file)
			}
		}()
	} else {
		close(sampled)
	}
	t0 := time.Now()
	raised := map[string]int64{} // KiB of peak each kind of command added
	var peak int64
	for i := 0; i < ops; i++ {
		file := fmt.Sprintf("variables/v%04d.json", (i*37)%1000)
		if verbose {
			hwm, _, _ := memory(srv.Process.Pid)
			if i > 0 && hwm > peak {
				raised[[]string{"set", "get", "log of a key", "log of a document", "blame", "newest"}[(i-1)%6]] += hwm - peak
			}
			peak = hwm
		}
		switch i % 6 {
		case 0:
			run(client, "set", file, "value", strconv.Itoa(i), "--store", dir, "--agent", "bench", "--no-sync")
		case 1:
			run(client, "get", file, "--store", dir)
		case 2:
			run(client, "log", "variables/v0042.json#value", "-n", "20", "--store", dir)
		case 3:
			run(client, "log", file, "-n", "20", "--store", dir)
		case 4:
			run(client, "blame", file, "--store", dir)
		case 5:
			run(client, "log", "-n", "50", "--store", dir)
		}
	}
	s := sample{elapsed: time.Since(t0)}
	close(stopSampling)
	<-sampled
	if verbose {
		fmt.Printf("  %s: peak RSS raised by (KiB): %v; sampled peaks: own %s, files %s\n", p.name, raised, mib(maxAnon), mib(maxFile))
	}
	s.hwm, s.anon, s.file = memory(srv.Process.Pid)
	srv.Process.Signal(os.Interrupt)
	if err := srv.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "the server: %v\n%s", err, log.String())
	}
	s.heap = liveHeap(prof)
	return s
}

// copyStore copies a store whole, so that the server writes to the copy.
func copyStore(from, to string) {
	os.RemoveAll(to)
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "copying %s: %v\n%s", from, err, out)
		os.Exit(1)
	}
	os.Remove(filepath.Join(to, "aiwg", "serve.sock")) // a server of the original may be running
}

// memory reads a process's peak resident set, and its own and its mapped
// files' resident pages now, in KiB.
func memory(pid int) (hwm, anon, file int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmHWM":
			hwm = n
		case "RssAnon":
			anon = n
		case "RssFile":
			file = n
		}
	}
	return hwm, anon, file
}

var pprofTotal = regexp.MustCompile(`of ([0-9.]+)([kMG]?B) total`)

// liveHeap reads the in-use bytes of a heap profile, in KiB (-1 when the
// program wrote none: one older than its AIWG_STATE_HEAP_PROFILE).
func liveHeap(prof string) int64 {
	out, err := exec.Command("go", "tool", "pprof", "-sample_index=inuse_space", "-top", "-nodecount=1", prof).CombinedOutput()
	m := pprofTotal.FindSubmatch(out)
	if err != nil || m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	switch string(m[2]) {
	case "B":
		v /= 1024
	case "MB":
		v *= 1024
	case "GB":
		v *= 1024 * 1024
	}
	return int64(v)
}

// spread is the median of a figure, with its range when there are several.
func spread(s []sample, f func(sample) int64) string {
	v := make([]int64, len(s))
	for i := range s {
		v[i] = f(s[i])
	}
	slices.Sort(v)
	if v[0] < 0 {
		return "-"
	}
	if len(v) == 1 {
		return mib(v[0])
	}
	return fmt.Sprintf("%s (%.1f–%.1f)", mib(v[len(v)/2]), float64(v[0])/1024, float64(v[len(v)-1])/1024)
}

func medianTime(s []sample) time.Duration {
	ds := make([]time.Duration, len(s))
	for i := range s {
		ds[i] = s[i].elapsed
	}
	return benchutil.Median(ds).Round(10 * time.Millisecond)
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func waitFor(path string, log *strings.Builder) {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "the server did not start\n%s", log.String())
	os.Exit(1)
}

func run(bin string, args ...string) {
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
