package main

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIncrAcrossProcessesLosesNothing: processes incrementing one counter
// at once, each increment its own commit: the sum is every increment.
func TestIncrAcrossProcessesLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const procs, each = 6, 10
	s := newStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, procs*each)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				out, err := exec.Command(bin, "incr", "counters.json", "done", "--store", s, "--no-sync", "--agent", fmt.Sprintf("w%d", p)).CombinedOutput()
				if err != nil {
					errs <- fmt.Errorf("%v: %s", err, out)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := mustCLI(t, s, "", "get", "counters.json", "done"); strings.TrimSpace(v) != fmt.Sprint(procs*each) {
		t.Fatalf("counter %s, want %d", v, procs*each)
	}
	if n := strings.Count(gitOut(t, s, "log", "--format=%(trailers:key=Delta,valueonly)", "main"), "counters.json#done 1\n"); n != procs*each {
		t.Fatalf("%d commits with a Delta trailer, want %d", n, procs*each)
	}
	gitOut(t, s, "fsck", "--strict")
}

// TestSetIfAbsentAcrossProcesses: of processes racing to set one key if
// absent, exactly one wins; the others exit 6 and write nothing.
func TestSetIfAbsentAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const procs = 8
	s := newStore(t)
	var wg sync.WaitGroup
	codes := make([]int, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := exec.Command(bin, "set", "locks.json", "deploy", fmt.Sprintf(`"w%d"`, p), "--if-absent", "--store", s, "--no-sync", "--agent", fmt.Sprintf("w%d", p))
			if err := cmd.Run(); err != nil {
				codes[p] = cmd.ProcessState.ExitCode()
			}
		}(p)
	}
	wg.Wait()
	winner := -1
	for p, c := range codes {
		switch c {
		case 0:
			if winner >= 0 {
				t.Fatalf("two winners: w%d and w%d", winner, p)
			}
			winner = p
		case 6:
		default:
			t.Fatalf("w%d exited %d", p, c)
		}
	}
	if winner < 0 {
		t.Fatal("no winner")
	}
	if v := mustCLI(t, s, "", "get", "locks.json", "deploy"); strings.TrimSpace(v) != fmt.Sprintf(`"w%d"`, winner) {
		t.Fatalf("stored %s, winner w%d", v, winner)
	}
	if n := strings.Count(gitOut(t, s, "rev-list", "main"), "\n"); n != 2 {
		t.Fatalf("%d commits, want init and the winner's", n)
	}
	gitOut(t, s, "fsck", "--strict")
}

func TestStorageVerbsFromTheCommandLine(t *testing.T) {
	s := newStore(t)
	if out := mustCLI(t, s, "", "incr", "c.json", "n", "--agent", "a"); out != "1\n" {
		t.Fatalf("incr: %q", out)
	}
	if out := mustCLI(t, s, "", "incr", "c.json", "n", "-3", "--agent", "a"); out != "-2\n" {
		t.Fatalf("incr -3: %q", out)
	}
	if out := mustCLI(t, s, "", "incr", "c.json", "n", "0.5", "--json", "--agent", "a"); !strings.Contains(out, `"value":-1.5`) || !strings.Contains(out, `"mutation_id"`) {
		t.Fatalf("incr --json: %q", out)
	}
	mustCLI(t, s, "", "set", "c.json", "name", `"x"`, "--agent", "a")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"incr", "c.json", "name"}, 3, "set replaces it with a number"},
		{[]string{"incr", "c.json"}, 2, "takes 2 to 3 argument"},
		{[]string{"incr", "c.json", "n", `"1"`}, 2, "an increment is a number"},
		{[]string{"set", "c.json", "name", `"y"`, "--if-absent"}, 6, "c.json#name exists; nothing written (aiwg-state get c.json name reads it"},
		{[]string{"put", "c.json", `{}`, "--if-absent"}, 6, "document c.json exists"},
		{[]string{"set", "c.json", "t", "1", "--ttl", "0s"}, 2, "above 0"},
		{[]string{"set", "c.json", "t", "1", "--ttl", "1500ms"}, 2, "whole seconds"},
		{[]string{"get", "c.json", "n", "nope"}, 3, "nope"},
	} {
		args := c.args
		if args[0] != "get" {
			args = append(args, "--agent", "a")
		}
		_, errOut, code := runCLI(t, s, "", args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, errOut, c.code, c.want)
		}
	}
	start := time.Now()
	mustCLI(t, s, "", "set", "c.json", "token", "--string", "abc", "--ttl", "2s", "--agent", "a")
	mustCLI(t, s, "", "put", "session.json", `{"u": 1}`, "--ttl", "2s", "--agent", "a")
	out, _, _ := runCLI(t, s, "", "get", "c.json", "n", "name", "token")
	if time.Since(start) < 2*time.Second && out != "{\n  \"n\": -1.5,\n  \"name\": \"x\",\n  \"token\": \"abc\"\n}\n" {
		// (A machine too loaded to read within the time to live has
		// nothing to check here.)
		t.Fatalf("get of three keys: %q", out)
	}
	if out := mustCLI(t, s, "", "get", "c.json", "n", "name", "--json"); !strings.Contains(out, `"value":{"n":-1.5,"name":"x"}`) {
		t.Fatalf("get --json: %q", out)
	}
	time.Sleep(time.Until(start.Add(2100 * time.Millisecond)))
	if _, _, code := runCLI(t, s, "", "get", "c.json", "token"); code != 3 {
		t.Fatalf("an expired key: exit %d", code)
	}
	if _, errOut, code := runCLI(t, s, "", "get", "session.json"); code != 3 || !strings.Contains(errOut, "expired at") {
		t.Fatalf("an expired document: exit %d %s", code, errOut)
	}
	if out := mustCLI(t, s, "", "gc", "--agent", "a"); !strings.Contains(out, "removed 2 expired values: c.json#token, session.json") {
		t.Fatalf("gc: %q", out)
	}
	if out := gitOut(t, s, "ls-tree", "-r", "--name-only", "main"); strings.Contains(out, "session.json") || strings.Contains(out, ".aiwg/ttl/") {
		t.Fatalf("after gc:\n%s", out)
	}
	gitOut(t, s, "fsck", "--strict")
}
