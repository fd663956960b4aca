// Command servemem measures how a long-running `aiwg-state serve` grows
// with the history it serves: for each store size it builds a store of
// that many commits (git fast-import, as bench/audit does: 1,000 variable
// documents, eight agents), indexes it, starts a server, sends it a mix
// of client commands (set, get, log of a key, log of a document, blame,
// the newest mutations) and reads the server's resident memory from
// /proc: its peak (VmHWM), and at the end its own (RssAnon: heap and
// stacks) and its mapped files' pages (RssFile: the packs it reads, which
// the kernel may drop and read again).
//
//	go run ./bench/servemem                          # 10,000 and 100,000 commits, 600 commands each
//	go run ./bench/servemem -sizes 1000000 -ops 300  # a million (the store takes minutes to build)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
)

func main() {
	sizes := flag.String("sizes", "10000,100000", "store sizes in commits, comma-separated")
	ops := flag.Int("ops", 600, "client commands sent to each server")
	flag.Parse()
	work, err := os.MkdirTemp("", "aiwg-servemem-")
	check(err)
	defer os.RemoveAll(work)
	bins := filepath.Join(work, "bin")
	benchutil.BuildCLI(bins+string(os.PathSeparator), "./cmd/aiwg-state", "./cmd/aiwg-state-client")
	bin, client := filepath.Join(bins, "aiwg-state"), filepath.Join(bins, "aiwg-state-client")
	fmt.Printf("serve's memory by history length; %s\n", benchutil.GitVersion())
	fmt.Printf("%-10s %-8s %-14s %-14s %-14s %s\n", "commits", "commands", "peak RSS", "own at end", "files at end", "time")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		dir := filepath.Join(work, fmt.Sprintf("store-%d.git", n))
		benchutil.FastImport(dir, n, 1000)
		run(bin, "reindex", "--store", dir)
		srv := exec.Command(bin, "serve", "--store", dir, "--idle", "1h")
		srv.Stderr = os.Stderr
		check(srv.Start())
		waitFor(filepath.Join(dir, "aiwg", "serve.sock"))
		t0 := time.Now()
		for i := 0; i < *ops; i++ {
			file := fmt.Sprintf("variables/v%04d.json", (i*37)%1000)
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
		elapsed := time.Since(t0)
		hwm, anon, file := memory(srv.Process.Pid)
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		fmt.Printf("%-10d %-8d %-14s %-14s %-14s %s\n", n, *ops, mib(hwm), mib(anon), mib(file), elapsed.Round(10*time.Millisecond))
		os.RemoveAll(dir)
	}
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

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func waitFor(path string) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	fmt.Fprintln(os.Stderr, "the server did not start")
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
