// Command mutations measures the write path in one run on one machine: a
// store of 1,000 JSON documents in one directory, mutated by (a) the Go API
// in-process, (b) the aiwg-state CLI, (c) the same mutation scripted with
// git plumbing, and (d) the unversioned floor (write a temp file and rename
// it), each with and without fsync, and (e) go-git's own loose-object
// write path, without fsync (go-git has none), and (f) the file-system work
// alone that git's formats ask of a commit (a pack of exactly the commit's
// new objects, its index, and the ref by git's lockfile protocol: see
// minimum.go), and under fsync (h) the same work with its flushes in two
// rounds rather than three, and (i) git fast-import as a one-process peer
// (a checkpoint after each commit); plus the bytes written per mutation
// against the commit's own objects (bytes.go), disk bytes per mutation
// before and after packing, and heap growth over the run.
//
// The machine is shared, and its load moves from minute to minute; each pair
// the targets compare (in-process against the floor, CLI against plumbing)
// is therefore measured interleaved (processes one of each in turn,
// in-process writes in blocks of 100), so both sides of a ratio see the
// same load.
//
//	go run ./bench/mutations                  # the full run (10,000 in-process mutations)
//	go run ./bench/mutations -n 2000 -cli 200 # quicker
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/bench/internal/benchutil"
	"github.com/aiwg/aiwg-state/store"
)

const docs = benchutil.Docs

// interleave is the block of floor writes and in-process mutations taken
// in turn.
const interleave = 100

func main() {
	n := flag.Int("n", 10000, "in-process mutations (and floor writes) per fsync setting")
	ncli := flag.Int("cli", 300, "CLI and git-plumbing mutations per fsync setting (each spawns processes)")
	bytesOnly := flag.Bool("bytes", false, "measure only the bytes written per mutation, over -n mutations")
	flag.Parse()
	ctx := context.Background()
	work, err := os.MkdirTemp("", "aiwg-bench-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "aiwg-state")
	client := filepath.Join(work, "aiwg-state-client")
	benchutil.BuildCLI(work, "./cmd/aiwg-state", "./cmd/aiwg-state-client")
	fmt.Printf("machine: %s/%s, %d CPUs, %s; store of %d documents in one directory\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), benchutil.GitVersion(), docs)
	if *bytesOnly {
		bytesPerMutation(ctx, work, *n)
		return
	}
	bytesPerMutation(ctx, work, min(*n, 2000))
	fmt.Println()
	fmt.Printf("%-46s %8s %12s %12s %10s\n", "what", "ops", "median", "p90", "vs floor")

	for _, sync := range []bool{false, true} {
		label := map[bool]string{false: "no fsync", true: "fsync"}[sync]
		floorDir := benchutil.SeedFloor(filepath.Join(work, fmt.Sprintf("floor-%v", sync), "docs"))
		st := seedStore(ctx, filepath.Join(work, "api-"+label), sync)
		var m1 runtime.MemStats
		floor := make([]time.Duration, 0, *n)
		api := make([]time.Duration, 0, *n)
		var gogit []time.Duration
		minimum := make([]time.Duration, 0, *n)
		// One mutation first, whose objects size the file minimum's pack.
		_, err := st.Set(ctx, docPath(0), "status.value", []byte("-1"), store.WriteOptions{Agent: "bench"})
		check(err)
		fm := newFileMinimum(work, st.Dir(), sync, false)
		var twoRounds []time.Duration
		var fm2 *fileMinimum
		if sync {
			fm2 = newFileMinimum(work, st.Dir(), sync, true)
		}
		fi := newFastImporter(ctx, filepath.Join(work, "fastimport-"+label), sync)
		fastImport := make([]time.Duration, 0, *n)
		var gw *goGitWriter
		if !sync {
			gw = newGoGitWriter(ctx, filepath.Join(work, "gogit"))
		}
		var heapAt1k uint64
		for i := 0; i < *n; i++ {
			// In blocks, not one by one: the collector's work for one
			// Set would otherwise run during the next floor write.
			if i%interleave == 0 {
				for j := i; j < min(i+interleave, *n); j++ {
					t0 := time.Now()
					benchutil.FloorWrite(floorDir, j, sync)
					floor = append(floor, time.Since(t0))
				}
				for j := i; j < min(i+interleave, *n); j++ {
					minimum = append(minimum, fm.mutate(j))
				}
				for j := i; fm2 != nil && j < min(i+interleave, *n); j++ {
					twoRounds = append(twoRounds, fm2.mutate(j))
				}
				for j := i; j < min(i+interleave, *n); j++ {
					fastImport = append(fastImport, fi.mutate(j))
				}
				for j := i; gw != nil && j < min(i+interleave, *n); j++ {
					gogit = append(gogit, gw.mutate(j))
				}
			}
			t0 := time.Now()
			_, err := st.Set(ctx, docPath(i%docs), "status.value", []byte(fmt.Sprintf("%d", i+1_000_000)), store.WriteOptions{Agent: "bench"})
			api = append(api, time.Since(t0))
			check(err)
			if i == 999 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heapAt1k = m.HeapAlloc
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		row("(d) floor: temp file + rename, "+label, floor, floor)
		row("(f) git's file minimum, "+label, minimum, floor)
		fmt.Printf("    (f): a pack of exactly one commit's new objects (%d bytes), its index (%d), the ref by lockfile\n", len(fm.pack), len(fm.idx))
		if fm2 != nil {
			row("(h) (f), its 5 flushes in 2 rounds", twoRounds, floor)
		}
		row("(a) in-process Store.Set, "+label, api, floor)
		fi.close()
		row("(i) git fast-import, checkpoint each, "+label, fastImport, floor)
		fmt.Printf("    fast-import / in-process: %.2fx (target >= 2x)\n", ratio(fastImport, api))
		if gw != nil {
			row("(e) go-git loose objects, "+label, gogit, floor)
		}
		loose := dirBytes(filepath.Join(st.Dir(), "objects"))
		check(st.GC(ctx, true))
		packed := dirBytes(filepath.Join(st.Dir(), "objects"))
		fmt.Printf("    disk per mutation: %.1f KB as written (packs rolled up on the way), %.2f KB after gc --full; heap %.1f MB after 1k mutations, %.1f MB after %d\n",
			float64(loose)/float64(*n)/1024, float64(packed)/float64(*n)/1024, float64(heapAt1k)/1e6, float64(m1.HeapAlloc)/1e6, *n)
		st.Close()

		cliStore := seedStore(ctx, filepath.Join(work, "cli-"+label), sync)
		cliStore.Close()
		servedStore := seedStore(ctx, filepath.Join(work, "served-"+label), sync)
		servedStore.Close()
		server := startServer(bin, servedStore.Dir())
		plumbing := newPlumber(ctx, filepath.Join(work, "git-"+label), sync)
		cli := make([]time.Duration, 0, *ncli)
		served := make([]time.Duration, 0, *ncli)
		plumb := make([]time.Duration, 0, *ncli)
		for i := 0; i < *ncli; i++ {
			for _, side := range []struct {
				bin, store string
				ds         *[]time.Duration
			}{{bin, cliStore.Dir(), &cli}, {client, servedStore.Dir(), &served}} {
				args := []string{"set", docPath(i % docs), "status.value", fmt.Sprint(i + 1_000_000), "--store", side.store, "--agent", "bench"}
				if !sync {
					args = append(args, "--no-sync")
				}
				t0 := time.Now()
				out, err := exec.Command(side.bin, args...).CombinedOutput()
				*side.ds = append(*side.ds, time.Since(t0))
				if err != nil {
					panic(fmt.Sprintf("%v: %s", err, out))
				}
			}
			plumb = append(plumb, plumbing.mutate(i))
		}
		server.Process.Signal(os.Interrupt)
		server.Wait()
		if n := commits(servedStore.Dir()); n != *ncli+2 { // init, the seed, one a set
			panic(fmt.Sprintf("the served store has %d commits, want %d", n, *ncli+2))
		}
		row("(b) CLI aiwg-state set, "+label, cli, floor)
		row("(g) aiwg-state-client set, served, "+label, served, floor)
		row("(c) git plumbing script, "+label, plumb, floor)
		fmt.Printf("    CLI / plumbing: %.2fx, served client / plumbing: %.2fx (target <= 0.25x); in-process / floor: %.2fx (target <= 2x); in-process / file minimum: %.2fx (target <= 1.3x)\n\n",
			ratio(cli, plumb), ratio(served, plumb), ratio(api, floor), ratio(api, minimum))
	}
}

// startServer starts aiwg-state serve on store and waits for its socket.
func startServer(bin, store string) *exec.Cmd {
	cmd := exec.Command(bin, "serve", "--store", store, "--idle", "10m")
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(store, "aiwg", "serve.sock")); err == nil {
			return cmd
		}
	}
	panic("the server did not start")
}

func commits(store string) int {
	out, err := exec.Command("git", "--git-dir", store, "rev-list", "--count", "HEAD").Output()
	check(err)
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

// The store both benchmarks write to.
var (
	docPath   = benchutil.DocPath
	docBody   = benchutil.DocBody
	seedStore = benchutil.SeedStore
)

// plumber scripts one mutation as a git user would without aiwg-state:
// rev-parse, hash-object, update-index on a scratch index, write-tree,
// commit-tree, update-ref with the old value (six git processes).
type plumber struct {
	env   []string
	fsync string
}

func newPlumber(ctx context.Context, dir string, sync bool) *plumber {
	st := seedStore(ctx, dir, sync)
	gitDir := st.Dir()
	st.Close()
	p := &plumber{fsync: "none"}
	if sync {
		p.fsync = "committed,reference"
	}
	p.env = append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(gitDir, "bench-index"), "GIT_DIR="+gitDir,
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@agents.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@agents.invalid")
	p.git("", "read-tree", "main")
	return p
}

func (p *plumber) git(stdin string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-c", "core.fsync=" + p.fsync, "-c", "core.fsyncMethod=fsync"}, args...)...)
	cmd.Env = p.env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		panic(fmt.Sprintf("git %v: %v: %s", args, err, out))
	}
	return strings.TrimSpace(string(out))
}

func (p *plumber) mutate(i int) time.Duration {
	t0 := time.Now()
	old := p.git("", "rev-parse", "main")
	blob := p.git(docBody(i%docs)+" ", "hash-object", "-w", "--stdin")
	p.git("", "update-index", "--cacheinfo", "100644,"+blob+","+docPath(i%docs))
	tree := p.git("", "write-tree")
	c := p.git("", "commit-tree", tree, "-p", old, "-m", "set "+docPath(i%docs))
	p.git("", "update-ref", "refs/heads/main", c, old)
	return time.Since(t0)
}

func row(what string, ds, floor []time.Duration) {
	fmt.Printf("%-46s %8d %12s %12s %9.2fx\n", what, len(ds), pct(ds, 50), pct(ds, 90), ratio(ds, floor))
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)*p/100].Round(time.Microsecond)
}

func ratio(a, b []time.Duration) float64 { return float64(pct(a, 50)) / float64(pct(b, 50)) }

func dirBytes(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
