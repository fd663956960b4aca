// Command concurrent measures writes under load: W writers, each writing
// its own document of a store of 1,000 JSON documents in one directory,
// for a fixed time, through each way of writing:
//
//	floor/proc   a process per write doing temp file + rename (the floor for per-process writers)
//	floor/inproc W goroutines doing temp file + rename (the floor for in-process writers)
//	served       aiwg-state-client set, a process per write, through aiwg-state serve
//	cli          aiwg-state set, a process per write
//	cli/served   aiwg-state set, a process per write, with aiwg-state serve
//	             running on the store (each process sends its write there)
//	api          W goroutines on one open Store (Store.Set)
//	plumbing     the same mutation scripted with git plumbing, a script per write
//	             (rev-parse, read-tree, hash-object, update-index, write-tree,
//	             commit-tree, update-ref with the old value; retried when another
//	             writer moved the branch first)
//
// with fsync and without. The machine is shared and its load moves, so the
// cells are interleaved: every round measures every cell once, in an order
// that rotates from round to round, and each figure is the median of the
// rounds with their range. Latency percentiles pool every write of the
// cell. "exit 5" counts writes refused as busy (a lock held too long).
// Each store keeps every round's writes, so the rounds also run on a
// growing history: the table ends with each cell's writes/s round by
// round in the order run, and for the served ways and the api the CPU
// time per write (the server's, or this process's, with the git
// maintenance it starts), which the machine's load moves far less than
// writes/s. A falling row, or rising CPU time, is a
// write path that slows as the store grows; more rounds show it further
// (-rounds 10 -dur 5s: some ten thousand commits a store).
//
//	go run ./bench/concurrent                        # 1, 16 and 64 writers, 3 rounds of 2s a cell
//	go run ./bench/concurrent -writers 16 -rounds 1 -dur 1s -modes api,floor/inproc
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/store"
)

const docs = benchutil.Docs

var allModes = []string{"floor/proc", "floor/inproc", "served", "cli", "cli/served", "api", "plumbing"}

func main() {
	// A child asked to do one floor write: the process-per-write floor.
	if len(os.Args) == 5 && os.Args[1] == "-floor-write" {
		i, _ := strconv.Atoi(os.Args[3])
		benchutil.FloorWrite(os.Args[2], i, os.Args[4] == "sync")
		return
	}
	writersFlag := flag.String("writers", "1,16,64", "writer counts, comma-separated")
	modesFlag := flag.String("modes", strings.Join(allModes, ","), "ways of writing, comma-separated: "+strings.Join(allModes, ", "))
	syncFlag := flag.String("fsync", "off,on", "fsync settings: off, on or both")
	rounds := flag.Int("rounds", 3, "rounds (each measures every cell once)")
	dur := flag.Duration("dur", 2*time.Second, "time a cell runs for in one round")
	binDir := flag.String("bin", "", "run the aiwg-state and aiwg-state-client of this directory rather than building them (to compare two builds)")
	flag.Parse()
	var writers []int
	for _, w := range strings.Split(*writersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "-writers: %q is not a count\n", w)
			os.Exit(2)
		}
		writers = append(writers, n)
	}
	modes := strings.Split(*modesFlag, ",")
	for _, m := range modes {
		if !slices.Contains(allModes, m) {
			fmt.Fprintf(os.Stderr, "-modes: unknown %q\n", m)
			os.Exit(2)
		}
	}
	var syncs []bool
	for _, s := range strings.Split(*syncFlag, ",") {
		syncs = append(syncs, s == "on")
	}

	ctx := context.Background()
	work, err := os.MkdirTemp("", "aiwg-concurrent-")
	check(err)
	defer os.RemoveAll(work)
	bins := *binDir
	if bins == "" {
		bins = work
		benchutil.BuildCLI(work, "./cmd/aiwg-state", "./cmd/aiwg-state-client")
	}
	self, err := os.Executable()
	check(err)
	env := &bench{work: work, bin: filepath.Join(bins, "aiwg-state"), client: filepath.Join(bins, "aiwg-state-client"), self: self}

	fmt.Printf("machine: %s/%s, %d CPUs, %s; store of %d documents in one directory, each writer its own document\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), docs)
	fmt.Printf("%d rounds of %s a cell, interleaved; writes/s as the median of the rounds [range]\n\n", *rounds, *dur)

	type key struct {
		sync    bool
		writers int
		mode    string
	}
	results := map[key]*cell{}
	var keys []key
	for _, s := range syncs {
		for _, w := range writers {
			for _, m := range modes {
				k := key{s, w, m}
				keys = append(keys, k)
				results[k] = &cell{}
			}
		}
	}
	targets := map[bool]*targetSet{}
	for _, s := range syncs {
		targets[s] = env.setup(ctx, s, modes)
	}
	defer func() {
		for _, t := range targets {
			t.close()
		}
	}()
	for r := 0; r < *rounds; r++ {
		// Rotate the order of the cells, so that no way of writing
		// always follows the same one (a server's warm cache, a disk
		// still flushing the previous cell's writes).
		order := slices.Clone(keys)
		k := (r * 7) % len(order)
		order = append(order[k:], order[:k]...)
		for _, k := range order {
			t := targets[k.sync]
			res := t.run(ctx, k.mode, k.writers, *dur)
			results[k].add(res)
			fmt.Fprintf(os.Stderr, "round %d: %-12s %2d writers fsync=%-5v %8.1f/s\n", r+1, k.mode, k.writers, k.sync, res.rate())
		}
	}
	for _, s := range syncs {
		fmt.Printf("fsync %s\n", map[bool]string{false: "off", true: "on"}[s])
		fmt.Printf("%-8s %-13s %22s %10s %10s %8s %8s\n", "writers", "mode", "writes/s", "p50", "p99", "exit 5", "errors")
		for _, w := range writers {
			var floorProc, floorIn float64
			for _, m := range modes {
				c := results[key{s, w, m}]
				med, lo, hi := c.rates()
				switch m {
				case "floor/proc":
					floorProc = med
				case "floor/inproc":
					floorIn = med
				}
				vs := ""
				if floorProc > 0 && (m == "served" || m == "cli" || m == "cli/served" || m == "plumbing") {
					vs = fmt.Sprintf("  %.2fx floor/proc", med/floorProc)
				}
				if floorIn > 0 && m == "api" {
					vs = fmt.Sprintf("  %.2fx floor/inproc", med/floorIn)
				}
				fmt.Printf("%-8d %-13s %8.1f [%5.1f–%5.1f] %10s %10s %8d %8d%s\n", w, m, med, lo, hi, c.pct(50), c.pct(99), c.busy, c.errors, vs)
			}
		}
		fmt.Println()
	}
	// The rounds in the order they ran: a way of writing that slows as
	// its store's history grows shows as a falling row, where the
	// median hides it.
	fmt.Println("writes/s round by round, in the order run (each store grows by every round's writes)")
	for _, k := range keys {
		var b strings.Builder
		for _, r := range results[k].rounds {
			fmt.Fprintf(&b, " %7.1f", r)
		}
		fmt.Printf("fsync %-3s %3d %-13s%s\n", map[bool]string{false: "off", true: "on"}[k.sync], k.writers, k.mode, b.String())
	}
	fmt.Println("CPU time per write, round by round: the server's (served ways), this process's (api); each with the git maintenance it started")
	for _, k := range keys {
		if len(results[k].cpu) == 0 {
			continue
		}
		var b strings.Builder
		for _, c := range results[k].cpu {
			fmt.Fprintf(&b, " %7s", fmtDur(c))
		}
		fmt.Printf("fsync %-3s %3d %-13s%s\n", map[bool]string{false: "off", true: "on"}[k.sync], k.writers, k.mode, b.String())
	}
	for _, s := range syncs {
		if n := targets[s].commits(); n != "" {
			fmt.Printf("commits at the end, fsync %s: %s\n", map[bool]string{false: "off", true: "on"}[s], n)
		}
	}
}

// procCPU is the CPU time cmd's process and its reaped children have
// used, from /proc (zero where there is none).
func procCPU(cmd *exec.Cmd) time.Duration {
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// After the command name, which may hold spaces, in parentheses:
	// utime, stime, cutime and cstime are fields 14 to 17.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, _ := strconv.ParseInt(v, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// ownCPU is the CPU time this process and its reaped children have
// used: for the api cells, the writers' and the roll-ups' they start (the
// benchmark's own share is small; no child of another cell runs then).
func ownCPU() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
}

// commits says how many commits each of t's stores holds.
func (t *targetSet) commits() string {
	var out []string
	for _, s := range []struct{ mode, dir string }{{"served", t.srvDir}, {"cli", t.cliDir}, {"cli/served", t.cliSrv}, {"plumbing", t.gitDir}} {
		if s.dir != "" {
			out = append(out, s.mode+" "+strings.TrimSpace(benchutil.Git(s.dir, "rev-list", "--count", "main")))
		}
	}
	if t.api != nil {
		out = append(out, "api "+strings.TrimSpace(benchutil.Git(t.api.Dir(), "rev-list", "--count", "main")))
	}
	return strings.Join(out, ", ")
}

// cell gathers one cell's rounds.
type cell struct {
	rounds       []float64
	cpu          []time.Duration // CPU time per write, by round (served ways and api: see run)
	lat          []time.Duration
	busy, errors int
}

func (c *cell) add(r result) {
	c.rounds = append(c.rounds, r.rate())
	if r.cpu > 0 && r.done > 0 {
		c.cpu = append(c.cpu, r.cpu/time.Duration(r.done))
	}
	c.lat = append(c.lat, r.lat...)
	c.busy += r.busy
	c.errors += r.errors
}

func (c *cell) rates() (med, lo, hi float64) {
	s := slices.Clone(c.rounds)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func (c *cell) pct(p int) string {
	if len(c.lat) == 0 {
		return "-"
	}
	s := slices.Clone(c.lat)
	slices.Sort(s)
	return fmtDur(s[min(len(s)-1, len(s)*p/100)])
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

// result is one cell's round: writes done in elapsed, their latencies.
type result struct {
	done         int
	elapsed      time.Duration
	lat          []time.Duration
	busy, errors int
	cpu          time.Duration // the server's CPU time in the round
}

func (r result) rate() float64 { return float64(r.done) / r.elapsed.Seconds() }

type bench struct {
	work, bin, client, self string
}

// targetSet is what one fsync setting writes to: a store per way of
// writing (the served one with its server running), the floor's
// directory, the plumbing's store.
type targetSet struct {
	b        *bench
	sync     bool
	floorDir string
	api      *aiwgstate.Store
	cliDir   string
	srvDir   string
	server   *exec.Cmd
	cliSrv   string    // the store of cli/served
	cliSrvd  *exec.Cmd // its server
	gitDir   string
	seq      atomic.Int64
}

func (b *bench) setup(ctx context.Context, sync bool, modes []string) *targetSet {
	label := map[bool]string{false: "nosync", true: "sync"}[sync]
	t := &targetSet{b: b, sync: sync}
	t.floorDir = benchutil.SeedFloor(filepath.Join(b.work, "floor-"+label, "docs"))
	for _, m := range modes {
		switch m {
		case "api":
			t.api = seedStore(ctx, filepath.Join(b.work, "api-"+label), sync)
		case "cli":
			st := seedStore(ctx, filepath.Join(b.work, "cli-"+label), sync)
			t.cliDir = st.Dir()
			st.Close()
		case "served":
			st := seedStore(ctx, filepath.Join(b.work, "served-"+label), sync)
			t.srvDir = st.Dir()
			st.Close()
			t.server = startServer(b.bin, t.srvDir)
		case "cli/served":
			st := seedStore(ctx, filepath.Join(b.work, "cliserved-"+label), sync)
			t.cliSrv = st.Dir()
			st.Close()
			t.cliSrvd = startServer(b.bin, t.cliSrv)
		case "plumbing":
			st := seedStore(ctx, filepath.Join(b.work, "git-"+label), sync)
			t.gitDir = st.Dir()
			st.Close()
		}
	}
	return t
}

func (t *targetSet) close() {
	for _, srv := range []*exec.Cmd{t.server, t.cliSrvd} {
		if srv != nil {
			srv.Process.Signal(os.Interrupt)
			srv.Wait()
		}
	}
	if t.api != nil {
		t.api.Close()
	}
}

// run runs one cell: w writers writing for d.
func (t *targetSet) run(ctx context.Context, mode string, w int, d time.Duration) result {
	var write func(writer int, value int64) (time.Duration, error)
	switch mode {
	case "floor/proc":
		write = func(writer int, _ int64) (time.Duration, error) {
			arg := "nosync"
			if t.sync {
				arg = "sync"
			}
			t0 := time.Now()
			out, err := exec.Command(t.b.self, "-floor-write", t.floorDir, strconv.Itoa(writer), arg).CombinedOutput()
			return time.Since(t0), outErr(err, out)
		}
	case "floor/inproc":
		write = func(writer int, _ int64) (time.Duration, error) {
			t0 := time.Now()
			benchutil.FloorWrite(t.floorDir, writer, t.sync)
			return time.Since(t0), nil
		}
	case "api":
		write = func(writer int, v int64) (time.Duration, error) {
			t0 := time.Now()
			_, err := t.api.Set(ctx, docPath(writer), "status.value", []byte(strconv.FormatInt(v, 10)), store.WriteOptions{Agent: fmt.Sprintf("w%d", writer)})
			return time.Since(t0), err
		}
	case "cli", "served", "cli/served":
		bin, dir := t.b.bin, t.cliDir
		switch mode {
		case "served":
			bin, dir = t.b.client, t.srvDir
		case "cli/served":
			dir = t.cliSrv
		}
		write = func(writer int, v int64) (time.Duration, error) {
			args := []string{"set", docPath(writer), "status.value", strconv.FormatInt(v, 10), "--store", dir, "--agent", fmt.Sprintf("w%d", writer)}
			if !t.sync {
				args = append(args, "--no-sync")
			}
			t0 := time.Now()
			out, err := exec.Command(bin, args...).CombinedOutput()
			return time.Since(t0), outErr(err, out)
		}
	case "plumbing":
		write = func(writer int, v int64) (time.Duration, error) {
			t0 := time.Now()
			err := plumb(t.gitDir, t.sync, writer, v)
			return time.Since(t0), err
		}
	}
	// The CPU time per write of the server (its own and its reaped
	// children's: git repack), or of this process for the api: on a
	// shared machine the writes/s of a round follow the load, what a
	// write costs in CPU far less.
	var srv *exec.Cmd
	switch mode {
	case "served":
		srv = t.server
	case "cli/served":
		srv = t.cliSrvd
	}
	cpu0 := procCPU(srv)
	if mode == "api" {
		cpu0 = ownCPU()
	}
	var mu sync.Mutex
	res := result{}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				lat, err := write(i, 1_000_000+t.seq.Add(1))
				mu.Lock()
				switch {
				case err == nil:
					res.done++
					res.lat = append(res.lat, lat)
				case isBusy(err):
					res.busy++
				default:
					if res.errors == 0 {
						fmt.Fprintf(os.Stderr, "%s: %v\n", mode, err)
					}
					res.errors++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if mode == "api" {
		res.cpu = ownCPU() - cpu0
	}
	if srv != nil {
		res.cpu = procCPU(srv) - cpu0
	}
	return res
}

var errBusy = errors.New("busy (exit 5)")

func outErr(err error, out []byte) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 5 {
		return fmt.Errorf("%w: %s", errBusy, strings.TrimSpace(string(out)))
	}
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func isBusy(err error) bool { return errors.Is(err, errBusy) || errors.Is(err, store.ErrLocked) }

// plumb writes one mutation with git plumbing, as a git user without
// aiwg-state would under concurrency: read the branch, build the tree from
// it in a scratch index of this writer's, commit, and move the branch
// only from the value read (update-ref's compare-and-swap), starting over
// when another writer moved it first.
func plumb(gitDir string, sync bool, writer int, v int64) error {
	fsync := "none"
	if sync {
		fsync = "committed,reference"
	}
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(gitDir, fmt.Sprintf("bench-index-%d", writer)), "GIT_DIR="+gitDir,
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@agents.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@agents.invalid")
	git := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-c", "core.fsync=" + fsync, "-c", "core.fsyncMethod=fsync"}, args...)...)
		cmd.Env = env
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	body := strings.Replace(docBody(writer), fmt.Sprintf("\"value\": %d", writer), fmt.Sprintf("\"value\": %d", v), 1)
	for attempt := 0; attempt < 1000; attempt++ {
		old, err := git("", "rev-parse", "main")
		if err != nil {
			return err
		}
		if _, err := git("", "read-tree", old); err != nil {
			return err
		}
		blob, err := git(body, "hash-object", "-w", "--stdin")
		if err != nil {
			return err
		}
		if _, err := git("", "update-index", "--cacheinfo", "100644,"+blob+","+docPath(writer)); err != nil {
			return err
		}
		tree, err := git("", "write-tree")
		if err != nil {
			return err
		}
		c, err := git("", "commit-tree", tree, "-p", old, "-m", "set "+docPath(writer))
		if err != nil {
			return err
		}
		if _, err := git("", "update-ref", "refs/heads/main", c, old); err == nil {
			return nil
		}
		// Lost the race (or the ref was locked): read it again.
	}
	return errors.New("plumbing: 1000 lost races in a row")
}

// startServer starts aiwg-state serve on store and waits for its socket.
func startServer(bin, store string) *exec.Cmd {
	cmd := exec.Command(bin, "serve", "--store", store, "--idle", "1h")
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(store, "aiwg", "serve.sock")); err == nil {
			return cmd
		}
	}
	panic("the server did not start")
}

// The store both benchmarks write to.
var (
	docPath   = benchutil.DocPath
	docBody   = benchutil.DocBody
	seedStore = benchutil.SeedStore
)

func check(err error) {
	if err != nil {
		panic(err)
	}
}
