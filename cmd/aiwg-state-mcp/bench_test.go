package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	aiwgstate "github.com/aiwg/aiwg-state"
	"github.com/aiwg/aiwg-state/store"
)

// BenchmarkSetPaths writes one key by each way an agent has, interleaved
// so that each sees the same machine: Store.Set in this process, a tool
// call to aiwg-state-mcp over stdio and over HTTP, and aiwg-state-client
// (a process per call) through aiwg-state serve. Each way writes its own
// document, without fsync. It reports each way's median; -v logs the
// ranges.
//
//	go test ./cmd/aiwg-state-mcp -run XXX -bench SetPaths -benchtime 300x -v
func BenchmarkSetPaths(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), "init")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	storeDir := filepath.Join(dir, ".aiwg", "state.git")
	st, err := aiwgstate.Open(ctx, storeDir, store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()

	stdio, _ := connectStdio(b, storeDir)
	token := strings.TrimSpace(run1(b, filepath.Join(bin, "aiwg-state"), "mcp", "token", "bench", "--store", storeDir))
	url := startHTTP(b, storeDir)
	httpc, err := connectHTTP(b, url, token)
	if err != nil {
		b.Fatal(err)
	}
	defer httpc.Close()
	serve := exec.Command(filepath.Join(bin, "aiwg-state"), "serve", "--store", storeDir, "--idle", "0")
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { serve.Process.Signal(os.Interrupt); serve.Wait() }()
	client := filepath.Join(bin, "aiwg-state-client")
	haveClient := build(b, client, "../aiwg-state-client") == nil
	time.Sleep(200 * time.Millisecond) // the server's socket

	ways := []string{"in-process", "mcp-stdio", "mcp-http", "aiwg-state-client"}
	times := map[string][]time.Duration{}
	tool := func(cs *sdk.ClientSession, file string, i int) error {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "set", Arguments: map[string]any{"file": file, "key": "n", "value": i}})
		if err == nil && res.IsError {
			err = fmt.Errorf("%v", res.Content)
		}
		return err
	}
	do := map[string]func(i int) error{
		"in-process": func(i int) error {
			_, err := st.Set(ctx, "inproc.json", "n", []byte(strconv.Itoa(i)), store.WriteOptions{Agent: "bench"})
			return err
		},
		"mcp-stdio": func(i int) error { return tool(stdio, "stdio.json", i) },
		"mcp-http":  func(i int) error { return tool(httpc, "http.json", i) },
		"aiwg-state-client": func(i int) error {
			if !haveClient {
				return nil
			}
			c := exec.Command(client, "set", "client.json", "n", strconv.Itoa(i), "--store", storeDir, "--agent", "bench", "--no-sync")
			if out, err := c.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		},
	}
	for i := range 5 { // warm: open stores, mapped packs, connections
		for _, w := range ways {
			if err := do[w](-i - 1); err != nil {
				b.Fatalf("%s: %v", w, err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, w := range ways {
			t0 := time.Now()
			if err := do[w](i); err != nil {
				b.Fatalf("%s: %v", w, err)
			}
			times[w] = append(times[w], time.Since(t0))
		}
	}
	b.StopTimer()
	base := median(times["in-process"])
	for _, w := range ways {
		ts := times[w]
		if w == "aiwg-state-client" && !haveClient {
			continue
		}
		m := median(ts)
		b.ReportMetric(float64(m.Microseconds()), w+"-µs")
		b.Logf("%-18s median %8v  p10 %8v  p90 %8v  min %8v  max %8v  (%.2f× in-process)", w, m.Round(time.Microsecond), pct(ts, 10), pct(ts, 90), pct(ts, 0), pct(ts, 100), float64(m)/float64(base))
	}
}

// BenchmarkMemory makes 10,000 set calls to one aiwg-state-mcp over
// stdio and logs its resident memory every 1,000: a server that keeps
// nothing per call stays flat.
//
//	go test ./cmd/aiwg-state-mcp -run XXX -bench Memory -benchtime 1x -v
func BenchmarkMemory(b *testing.B) {
	dir := b.TempDir()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state"), "init")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	cs, pid := connectStdio(b, filepath.Join(dir, ".aiwg", "state.git"))
	const calls = 10000
	for i := 0; i < b.N; i++ {
		for n := 1; n <= calls; n++ {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "set", Arguments: map[string]any{"file": fmt.Sprintf("docs/d%d.json", n%100), "key": "n", "value": n}})
			if err != nil || res.IsError {
				b.Fatalf("call %d: %v %v", n, err, res)
			}
			if n%1000 == 0 {
				rss := rssKB(b, pid)
				b.Logf("after %5d calls: RSS %6d KB", n, rss)
				if n == calls {
					b.ReportMetric(float64(rss), "rss-KB")
				}
			}
		}
	}
}

func connectStdio(b *testing.B, storeDir string) (*sdk.ClientSession, int) {
	b.Helper()
	cmd := exec.Command(filepath.Join(bin, "aiwg-state-mcp"), "--store", storeDir, "--agent", "bench", "--no-sync")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs, cmd.Process.Pid
}

func rssKB(b *testing.B, pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func run1(b *testing.B, name string, args ...string) string {
	b.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func build(b *testing.B, out, pkg string) error {
	if _, err := os.Stat(out); err == nil {
		return nil
	}
	return exec.Command("go", "build", "-o", out, pkg).Run()
}

func median(ts []time.Duration) time.Duration { return pct(ts, 50) }

func pct(ts []time.Duration, p int) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}
