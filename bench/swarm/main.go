// Command swarm measures a swarm of agents sharing one git server, on one
// machine: a real `git daemon` on 127.0.0.1 serving a bare repository with
// the aiwg-state pre-receive hook installed (hooks install --server), one
// coordinator integrating, and N agents, each a goroutine with a Store of
// its own in a clone of its own, writing a shared document whose keys
// clash on purpose and syncing every few mutations.
//
// The shared document shared/board.json holds "owner" (every mutation sets
// it: last-write-wins), "count" (every mutation adds 1: sum), "log" (every
// mutation appends its tag: merge-arrays) and "high" (every mutation
// offers a number: max); each agent also writes agents/<id>/s.json. At the
// end the program checks that nothing was lost: every mutation id an
// agent's write returned is in main's history, count is the number of
// mutations, log holds every tag once, high is the largest number offered,
// and each agent's own file is at its last value.
//
// It prints, per swarm size: wall time, mutations/s, sync latency (p50,
// p99), bytes the server sent per sync (fetch, and the push's ref
// advertisement apart), integration passes, a pass over N moved branches,
// CPU of the server (git daemon and what it ran: upload-pack,
// receive-pack, the hook) and of the clients, and the server's objects.
// Plain git agents (commit, pull --rebase, push, retried) run as a
// baseline, bounded in time.
//
//	go run ./bench/swarm -agents 4,16,64 -mutations 50 -sync 10
//	go run ./bench/swarm -agents 256 -mutations 20 -baseline=false
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/hooks"
	"github.com/aiwg/aiwg-state/internal/gitserver"
	"github.com/aiwg/aiwg-state/merge"
	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/remote"
	"github.com/aiwg/aiwg-state/repo"
	"github.com/aiwg/aiwg-state/store"
)

var (
	flagAgents     = flag.String("agents", "4,16,64", "swarm sizes, comma-separated")
	flagMutations  = flag.Int("mutations", 50, "mutations per agent")
	flagSync       = flag.Int("sync", 10, "an agent syncs every this many mutations")
	flagThink      = flag.Duration("think", 0, "an agent's pause before each mutation, a model's thinking (each a random 0.5-1.5 times this)")
	flagInterval   = flag.Duration("interval", 200*time.Millisecond, "the integrator's pause after a pass with nothing moved")
	flagShards     = flag.Int("shards", 0, "integrate in this many shards (0: one integrator)")
	flagBaseline   = flag.Bool("baseline", true, "also run plain git agents (pull --rebase, push)")
	flagBaseTime   = flag.Duration("baseline-time", 30*time.Second, "how long the plain git agents run at most")
	flagTimeout    = flag.Duration("timeout", 15*time.Minute, "give up a run after this long")
	flagIntegrator = flag.String("integrator", "", "run as the integrator of this coordinator store (the program starts itself so)")
	flagProfile    = flag.String("integrator-profile", "", "write the integrator's CPU profile to this file")
	flagKeep       = flag.Bool("keep", false, "keep the repositories (their directory is printed)")
	flagFullPass   = flag.Bool("fullpass", true, "after the run, have every agent write and sync once more and time one pass over them all")
	flagIdleAgents = flag.Int("idle-agents", 0, "measure a sync with nothing new on this many agents (0: all)")
	flagFilter     = flag.String("filter", "", "agents clone partially with this filter (e.g. blob:none): versions of the board they never read stay on the server")
)

const board = "shared/board.json"

func main() {
	flag.Parse()
	if *flagIntegrator != "" {
		runIntegrator(*flagIntegrator)
		return
	}
	var sizes []int
	for _, s := range strings.Split(*flagAgents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "-agents: %q is not a number of agents\n", s)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	work, err := os.MkdirTemp("", "aiwg-bench-swarm-")
	check(err)
	if *flagKeep {
		fmt.Println("repositories in", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "aiwg-state")
	benchutil.BuildCLI(bin)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("machine: %s/%s, %d CPUs, %s; load average at start: %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("swarm: %d mutations per agent, a sync every %d, think %s, integrator pause %s, shards %d; server: git daemon on 127.0.0.1 with the aiwg-state hook\n\n",
		*flagMutations, *flagSync, *flagThink, *flagInterval, *flagShards)
	for _, n := range sizes {
		ctx, cancel := context.WithTimeout(context.Background(), *flagTimeout)
		r := runSwarm(ctx, filepath.Join(work, fmt.Sprintf("swarm-%d", n)), bin, n)
		cancel()
		fmt.Println("  after the extra syncs and the checks:")
		r.print()
		if *flagBaseline {
			runBaseline(filepath.Join(work, fmt.Sprintf("plain-%d", n)), n).print()
		}
		fmt.Println()
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "swarm:", err)
		os.Exit(1)
	}
}

// result is one swarm's run.
type result struct {
	agents, mutations int
	setup, wall       time.Duration
	syncs             []time.Duration
	syncRetries       int
	fetchPerSync      []float64 // bytes, one figure per agent
	pushAdvPerSync    []float64
	idleFetch         []float64 // bytes of a sync with nothing new, per agent
	// perBrought is, for each agent that synced after the last pass, all it
	// fetched in the run divided by the mutations of the other agents (all
	// of which it then holds): the model's β, whatever pace main kept.
	perBrought    []float64
	passes        []pass
	fullPass      pass
	serverCPU     time.Duration
	integratorCPU time.Duration
	clientCPU     time.Duration
	health        *hooks.ServerHealth
	lost          []string
	errs          []string
}

type pass struct {
	moved int
	took  time.Duration
}

// agent is one agent of the swarm: its store and what it did.
type agent struct {
	id      string
	st      *aiwgstate.Store
	counter *gitserver.Counter
	stop    func()
	syncs   []time.Duration
	retries int
	muts    []string // mutation ids acknowledged
	tags    []string // the log entries written
	high    int64
	done    int
}

func runSwarm(ctx context.Context, dir, bin string, n int) *result {
	r := &result{agents: n}
	t0 := time.Now()
	root := filepath.Join(dir, "srv")
	check(os.MkdirAll(root, 0o755))
	server := filepath.Join(root, "state.git")
	run("git", "init", "-q", "--bare", server)
	_, err := hooks.Install(server, hooks.InstallOptions{Binary: bin})
	check(err)
	base, daemonPID, stopDaemon, err := gitserver.StartDaemonProcess(root)
	check(err)
	defer stopDaemon()

	// The coordinator: an open policy, the board's strategies, the board.
	coordBase, coordCounter, stopCoord, err := gitserver.StartCounting(base)
	check(err)
	defer stopCoord()
	_ = coordCounter
	coord, err := aiwgstate.Init(ctx, filepath.Join(dir, "coordinator.git"), store.InitOptions{Options: store.Options{NoSync: true}, Agent: "conductor"})
	check(err)
	defer coord.Close()
	wo := store.WriteOptions{Agent: "conductor"}
	_, err = coord.SetPolicy(ctx, []byte(`{"default": "allow", "rules": []}`), wo)
	check(err)
	_, err = merge.New(coord.Store).SetStrategy(ctx, board, jsonmerge.Options{Strategy: jsonmerge.LastWriteWins,
		Keys: map[string]jsonmerge.Strategy{"count": jsonmerge.Sum, "log": jsonmerge.MergeArrays, "high": jsonmerge.Max}}, wo)
	check(err)
	_, err = coord.Put(ctx, board, []byte(`{"owner": "", "count": 0, "log": [], "high": 0}`), wo)
	check(err)
	check(coord.AddRemote(ctx, "origin", coordBase+"state.git"))
	_, err = coord.Push(ctx, "", store.PushOptions{})
	check(err)
	run("git", "--git-dir", server, "symbolic-ref", "HEAD", "refs/heads/main")

	// The agents' clones, four at a time, each through a proxy of its own
	// that counts what it fetches.
	agents := make([]*agent, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range agents {
		a := &agent{id: fmt.Sprintf("a%03d", i)}
		agents[i] = a
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			url, c, stop, err := gitserver.StartCounting(base)
			check(err)
			a.counter, a.stop = c, stop
			a.st, err = aiwgstate.Clone(ctx, url+"state.git", filepath.Join(dir, a.id+".git"), store.CloneOptions{Options: store.Options{NoSync: true}, Filter: *flagFilter})
			check(err)
			_, err = a.st.Swarm().StartAgent(ctx, a.id, "", "")
			check(err)
		}()
	}
	wg.Wait()
	defer func() {
		for _, a := range agents {
			a.st.Close()
			a.stop()
		}
	}()
	r.setup = time.Since(t0)

	cpu0, client0 := procCPU(daemonPID), selfCPU()
	start := time.Now()
	var finished atomic.Int64
	var errMu sync.Mutex
	fail := func(format string, args ...any) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(r.errs) < 20 {
			r.errs = append(r.errs, fmt.Sprintf(format, args...))
		}
	}
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer finished.Add(1)
			// Agents that think do not think in step: each starts at a
			// random point of its first round and thinks 0.5 to 1.5 times
			// -think, so their syncs spread as real agents' do.
			if *flagThink > 0 {
				time.Sleep(time.Duration(rand.Int64N(int64(*flagThink) * int64(*flagSync))))
			}
			for i := 0; i < *flagMutations; i++ {
				if ctx.Err() != nil {
					return
				}
				if *flagThink > 0 {
					time.Sleep(*flagThink/2 + time.Duration(rand.Int64N(int64(*flagThink))))
				}
				if err := a.mutate(ctx); err != nil {
					fail("%s mutation %d: %v", a.id, i, err)
					return
				}
				if (i+1)%*flagSync == 0 || i == *flagMutations-1 {
					if err := a.sync(ctx); err != nil {
						fail("%s sync: %v", a.id, err)
						return
					}
				}
			}
		}()
	}
	// The integrator runs in a process of its own, as a coordinator
	// would (among the agents' goroutines it would get a 65th of this
	// process): passes until every agent is done and a pass finds nothing
	// moved.
	exe, err := os.Executable()
	check(err)
	icmd := exec.CommandContext(ctx, exe, "-integrator", coord.Repo().Dir(), "-interval", flagInterval.String(), "-shards", strconv.Itoa(*flagShards), "-integrator-profile", *flagProfile)
	icmd.Stderr = os.Stderr
	lines, err := icmd.StdoutPipe()
	check(err)
	check(icmd.Start())
	agentsDone := make(chan struct{})
	go func() { wg.Wait(); close(agentsDone) }()
	sc := bufio.NewScanner(lines)
	idleAfter := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "pass" {
			moved, _ := strconv.Atoi(f[1])
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			if moved > 0 {
				r.passes = append(r.passes, pass{moved, time.Duration(ns)})
				continue
			}
			select {
			case <-agentsDone:
				idleAfter++
			default:
			}
			if idleAfter == 2 { // a whole pass began after the agents ended
				break
			}
		} else if len(f) > 0 && f[0] == "error" {
			fail("integrate: %s", strings.Join(f[1:], " "))
		}
	}
	before := selfCPU()
	icmd.Process.Signal(syscall.SIGTERM)
	icmd.Wait()
	r.integratorCPU = selfCPU() - before
	wg.Wait()
	r.wall = time.Since(start)
	r.serverCPU = procCPU(daemonPID) - cpu0
	r.clientCPU = selfCPU() - client0 - r.integratorCPU

	r.collect(agents)
	r.print()

	// One pass over N moved branches: each agent writes once more and
	// syncs, then one pass merges them all.
	for _, a := range agents {
		if !*flagFullPass {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := a.mutate(ctx); err != nil {
				fail("%s: %v", a.id, err)
			} else if err := a.sync(ctx); err != nil {
				fail("%s sync: %v", a.id, err)
			}
		}()
	}
	wg.Wait()
	if *flagFullPass {
		t := time.Now()
		moved, err := integratePass(ctx, coord, wo)
		r.fullPass = pass{moved, time.Since(t)}
		if err != nil {
			fail("integrate: %v", err)
		}
	}

	// A sync with nothing new on main: what a sync costs on its own, the
	// part that must not grow with the swarm. (One sync first brings the
	// last pass.)
	sample := agents
	if k := *flagIdleAgents; k > 0 && k < len(agents) {
		sample = agents[:k]
	}
	idle := make([]float64, len(sample))
	for round := 0; round < 2; round++ {
		for i, a := range sample {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				before := a.counter.FetchDown.Load()
				if _, err := a.st.Swarm().Sync(ctx, "", remote.SyncOptions{Merge: merge.MergeOptions{Write: store.WriteOptions{Agent: a.id}}}); err != nil {
					fail("%s idle sync: %v", a.id, err)
				}
				idle[i] = float64(a.counter.FetchDown.Load() - before)
			}()
		}
		wg.Wait()
	}
	r.idleFetch = idle

	r.collect(agents)
	for _, a := range sample {
		if others := r.mutations - a.done; others > 0 {
			r.perBrought = append(r.perBrought, float64(a.counter.FetchDown.Load())/float64(others))
		}
	}
	r.lost = verify(ctx, coord, agents)
	r.health, err = hooks.Doctor(ctx, server)
	check(err)
	if out, err := exec.Command("git", "--git-dir", server, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		fail("git fsck --strict on the server: %v: %s", err, out)
	}
	return r
}

// mutate is one mutation: one commit setting the four board keys and the
// agent's own file.
func (a *agent) mutate(ctx context.Context) error {
	tag := fmt.Sprintf("%s-%d", a.id, a.done)
	var log []string
	raw, err := a.st.Get(ctx, board, "log", store.ReadOptions{})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		return err
	}
	logJSON, _ := json.Marshal(append(log, tag))
	// high only grows, on a branch as across them: an agent writes the
	// larger of what it reads and what it offers; max settles merges.
	h := fnv.New64a()
	h.Write([]byte(tag))
	offer := int64(h.Sum64() % 1_000_000_000)
	raw, err = a.st.Get(ctx, board, "high", store.ReadOptions{})
	if err != nil {
		return err
	}
	cur, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		return err
	}
	offer = max(offer, cur)
	m, err := a.st.Apply(ctx, []store.Op{
		{Op: "set", File: board, Path: "owner", Value: json.RawMessage(strconv.Quote(tag))},
		{Op: "incr", File: board, Path: "count"},
		{Op: "set", File: board, Path: "log", Value: logJSON},
		{Op: "set", File: board, Path: "high", Value: json.RawMessage(strconv.FormatInt(offer, 10))},
		{Op: "set", File: "agents/" + a.id + "/s.json", Path: "n", Value: json.RawMessage(strconv.Itoa(a.done + 1))},
	}, store.WriteOptions{Agent: a.id})
	if err != nil {
		return err
	}
	a.muts = append(a.muts, m.MutationID)
	a.tags = append(a.tags, tag)
	a.high = max(a.high, offer)
	a.done++
	return nil
}

// sync runs the agent's sync, again after a lost race (bounded).
func (a *agent) sync(ctx context.Context) error {
	t := time.Now()
	for attempt := 0; ; attempt++ {
		_, err := a.st.Swarm().Sync(ctx, "", remote.SyncOptions{Merge: merge.MergeOptions{Write: store.WriteOptions{Agent: a.id}}})
		if err == nil {
			a.syncs = append(a.syncs, time.Since(t))
			return nil
		}
		if !errors.Is(err, store.ErrStale) && !errors.Is(err, repo.ErrRemote) || attempt == 5 {
			return err
		}
		a.retries++
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
}

// verify checks main on the server against what the agents were told.
func verify(ctx context.Context, coord *aiwgstate.Store, agents []*agent) []string {
	var lost []string
	if _, err := coord.Swarm().FetchBranches(ctx, "", "main"); err != nil {
		return []string{"fetch main: " + err.Error()}
	}
	ro := store.ReadOptions{Branch: "origin/main"}
	raw, err := coord.Cat(ctx, board, ro)
	if err != nil {
		return []string{"read the board: " + err.Error()}
	}
	var b struct {
		Owner string   `json:"owner"`
		Count int64    `json:"count"`
		Log   []string `json:"log"`
		High  int64    `json:"high"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return []string{"the board: " + err.Error()}
	}
	out, err := exec.Command("git", "--git-dir", coord.Repo().Dir(), "log", "origin/main", "--format=%(trailers:key="+store.TrailerMutationID+",valueonly)").Output()
	if err != nil {
		return []string{"git log: " + err.Error()}
	}
	inMain := map[string]bool{}
	for _, id := range strings.Fields(string(out)) {
		inMain[id] = true
	}
	logged := map[string]int{}
	for _, t := range b.Log {
		logged[t]++
	}
	var total, high int64
	for _, a := range agents {
		total += int64(a.done)
		high = max(high, a.high)
		for _, id := range a.muts {
			if !inMain[id] {
				lost = append(lost, "mutation "+id+" of "+a.id+" is not in main's history")
			}
		}
		for _, t := range a.tags {
			if logged[t] != 1 {
				lost = append(lost, fmt.Sprintf("log holds %s %d times", t, logged[t]))
			}
		}
		n, err := coord.Get(ctx, "agents/"+a.id+"/s.json", "n", ro)
		if err != nil || strings.TrimSpace(string(n)) != strconv.Itoa(a.done) {
			lost = append(lost, fmt.Sprintf("%s's own file: %s, %v (wrote %d)", a.id, n, err, a.done))
		}
	}
	if b.Count != total {
		lost = append(lost, fmt.Sprintf("count %d, %d increments", b.Count, total))
	}
	if len(b.Log) != int(total) {
		lost = append(lost, fmt.Sprintf("log holds %d entries, %d appended", len(b.Log), total))
	}
	if b.High != high {
		lost = append(lost, fmt.Sprintf("high %d, the largest offered %d", b.High, high))
	}
	if !strings.HasPrefix(b.Owner, "a") {
		lost = append(lost, fmt.Sprintf("owner %q is no agent's write", b.Owner))
	}
	if len(lost) > 10 {
		lost = append(lost[:10], fmt.Sprintf("... %d more", len(lost)-10))
	}
	return lost
}

// collect gathers the agents' figures (again after the extra syncs).
func (r *result) collect(agents []*agent) {
	r.mutations, r.syncs, r.syncRetries, r.fetchPerSync, r.pushAdvPerSync = 0, nil, 0, nil, nil
	for _, a := range agents {
		r.mutations += a.done
		r.syncs = append(r.syncs, a.syncs...)
		r.syncRetries += a.retries
		if len(a.syncs) > 0 {
			r.fetchPerSync = append(r.fetchPerSync, float64(a.counter.FetchDown.Load())/float64(len(a.syncs)))
			r.pushAdvPerSync = append(r.pushAdvPerSync, float64(a.counter.PushDown.Load())/float64(len(a.syncs)))
		}
	}
}

func (r *result) print() {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }
	fmt.Printf("== %d agents (setup %s: server, policy, %d clones)\n", r.agents, r.setup.Round(time.Millisecond), r.agents)
	fmt.Printf("  wall %s, %d mutations, %.1f mutations/s; CPU: server %.1f s, agents %.1f s, integrator %.1f s (%.1f ms server CPU per mutation)\n",
		r.wall.Round(time.Millisecond), r.mutations, float64(r.mutations)/r.wall.Seconds(), r.serverCPU.Seconds(), r.clientCPU.Seconds(), r.integratorCPU.Seconds(),
		float64(r.serverCPU)/1e6/float64(max(r.mutations, 1)))
	slices.Sort(r.syncs)
	if len(r.syncs) > 0 {
		fmt.Printf("  sync: %d, p50 %s, p99 %s, max %s; %d retried (a lost race or the server unreachable)\n", len(r.syncs), ms(pct(r.syncs, 50)), ms(pct(r.syncs, 99)), ms(r.syncs[len(r.syncs)-1]), r.syncRetries)
	}
	slices.Sort(r.fetchPerSync)
	slices.Sort(r.pushAdvPerSync)
	if len(r.fetchPerSync) > 0 {
		fmt.Printf("  bytes the server sent per sync (median over agents): fetch %.0f (range %.0f-%.0f), push %.0f\n",
			r.fetchPerSync[len(r.fetchPerSync)/2], r.fetchPerSync[0], r.fetchPerSync[len(r.fetchPerSync)-1], r.pushAdvPerSync[len(r.pushAdvPerSync)/2])
	}
	slices.Sort(r.idleFetch)
	if len(r.idleFetch) > 0 {
		fmt.Printf("  a sync with nothing new on main: fetch %.0f bytes (range %.0f-%.0f)\n", r.idleFetch[len(r.idleFetch)/2], r.idleFetch[0], r.idleFetch[len(r.idleFetch)-1])
	}
	slices.Sort(r.perBrought)
	if len(r.perBrought) > 0 {
		fmt.Printf("  fetched over the run per mutation of the other agents (%d agents that synced after the last pass): %.0f bytes (range %.0f-%.0f)\n",
			len(r.perBrought), r.perBrought[len(r.perBrought)/2], r.perBrought[0], r.perBrought[len(r.perBrought)-1])
	}
	var took []time.Duration
	movedSum := 0
	for _, p := range r.passes {
		took = append(took, p.took)
		movedSum += p.moved
	}
	slices.Sort(took)
	if len(took) > 0 {
		fmt.Printf("  integrate: %d passes that merged, %.1f branches each, p50 %s, max %s; a pass over %d moved branches: %s\n",
			len(took), float64(movedSum)/float64(len(took)), ms(pct(took, 50)), ms(took[len(took)-1]), r.fullPass.moved, ms(r.fullPass.took))
	}
	if h := r.health; h != nil {
		fmt.Printf("  server: %d loose objects, %d packed in %d pack(s), %d KiB\n", h.LooseObjects, h.PackedObjects, h.Packs, h.PackKiB+h.LooseKiB)
	}
	if len(r.lost) == 0 {
		fmt.Println("  nothing lost: every mutation id in main's history, count = increments, log complete, high = max, own files current")
	} else {
		fmt.Printf("  LOST: %s\n", strings.Join(r.lost, "; "))
	}
	for _, e := range r.errs {
		fmt.Println("  error:", e)
	}
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := (len(ds)*p + 99) / 100
	return ds[min(max(i-1, 0), len(ds)-1)]
}

// procCPU is the CPU time of a process tree: each live process's own and
// that of the children it has waited for (/proc/PID/stat: utime, stime,
// cutime, cstime). `git daemon` runs git-daemon as a child, which runs a
// child per connection, which runs upload-pack or receive-pack, which
// runs the hook.
func procCPU(root int) time.Duration {
	type proc struct{ ppid, ticks int64 }
	procs := map[int64]proc{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.ParseInt(d.Name(), 10, 64)
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 15 {
			continue
		}
		p := proc{}
		p.ppid, _ = strconv.ParseInt(f[1], 10, 64)
		for _, i := range []int{11, 12, 13, 14} { // fields 14-17, after pid and comm
			n, _ := strconv.ParseInt(f[i], 10, 64)
			p.ticks += n
		}
		procs[pid] = p
	}
	in := map[int64]bool{int64(root): true}
	for changed := true; changed; {
		changed = false
		for pid, p := range procs {
			if !in[pid] && in[p.ppid] {
				in[pid], changed = true, true
			}
		}
	}
	var ticks int64
	for pid := range in {
		ticks += procs[pid].ticks
	}
	return time.Duration(ticks) * (time.Second / 100)
}

// selfCPU is this process's CPU and its waited-for children's (the git
// fetches and pushes of the agents; not the daemon, which runs on).
func selfCPU() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

func run(name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		check(fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out))
	}
}

// integratePass is one pass of the coordinator: over the shards and then
// the top level with -shards, else one.
func integratePass(ctx context.Context, coord *aiwgstate.Store, wo store.WriteOptions) (int, error) {
	moved := 0
	if *flagShards > 1 {
		for k := 0; k < *flagShards; k++ {
			res, err := coord.Swarm().Integrate(ctx, "", remote.IntegrateOptions{Shard: k, Shards: *flagShards, Merge: merge.MergeOptions{Write: wo}})
			if err != nil {
				return moved, err
			}
			moved += len(res.Agents)
		}
		res, err := coord.Swarm().Integrate(ctx, "", remote.IntegrateOptions{From: "integration/", Merge: merge.MergeOptions{Write: wo}})
		if err != nil {
			return moved, err
		}
		if moved == 0 {
			moved = len(res.Agents)
		}
		return moved, nil
	}
	res, err := coord.Swarm().Integrate(ctx, "", remote.IntegrateOptions{Merge: merge.MergeOptions{Write: wo}})
	if err == nil && len(res.Conflicted()) > 0 {
		err = fmt.Errorf("not integrated: %v", res.Conflicted())
	}
	return len(res.Agents), err
}

// runIntegrator is the integrator's process: passes, each reported on
// standard output ("pass MOVED NANOSECONDS"), until it is signalled.
func runIntegrator(dir string) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if *flagProfile != "" {
		f, err := os.Create(*flagProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	coord, err := aiwgstate.Open(ctx, dir, store.Options{NoSync: true})
	check(err)
	defer coord.Close()
	wo := store.WriteOptions{Agent: "conductor"}
	for ctx.Err() == nil {
		t := time.Now()
		moved, err := integratePass(ctx, coord, wo)
		if err != nil && ctx.Err() == nil {
			fmt.Printf("error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		}
		fmt.Printf("pass %d %d\n", moved, time.Since(t).Nanoseconds())
		if moved == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(*flagInterval):
			}
		}
	}
}
