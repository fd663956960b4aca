package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/aiwg/aiwg-state/objects"
)

// randomDoc builds agent-state-like documents: nested objects, arrays of
// records with ids, lists, awkward keys.
func randomDoc(r *rand.Rand, depth int) any {
	keys := []string{"a", "b", "id", "items", "a/b", "~1", "x.y", "0", "ü", "with space"}
	switch n := r.IntN(8); {
	case depth > 3 || n < 3:
		return [...]any{1, 2.5, "s", "long text\nwith lines", true, nil}[r.IntN(6)]
	case n < 6:
		m := map[string]any{}
		for i := r.IntN(4); i > 0; i-- {
			m[keys[r.IntN(len(keys))]] = randomDoc(r, depth+1)
		}
		return m
	default:
		a := []any{}
		for i := r.IntN(4); i > 0; i-- {
			if r.IntN(2) == 0 {
				a = append(a, map[string]any{"id": r.IntN(5), "v": randomDoc(r, depth+2)})
			} else {
				a = append(a, randomDoc(r, depth+1))
			}
		}
		return a
	}
}

// TestDiffPatchAppliesWithJSONPatch: `diff --format patch` for one file,
// applied to the old document by an independent RFC 6902 implementation,
// gives the new document exactly.
func TestDiffPatchAppliesWithJSONPatch(t *testing.T) {
	s := newStore(t)
	r := rand.New(rand.NewPCG(6, 6))
	n := 40
	if testing.Short() {
		n = 10
	}
	for i := 0; i < n; i++ {
		old := map[string]any{"doc": randomDoc(r, 0), "n": i}
		new := map[string]any{"doc": randomDoc(r, 0), "n": i}
		if r.IntN(3) == 0 {
			new["doc"] = old["doc"]
			new["extra"] = randomDoc(r, 1)
		}
		ob, _ := json.Marshal(old)
		nb, _ := json.Marshal(new)
		mustCLI(t, s, string(ob), "put", "d.json", "-")
		mustCLI(t, s, string(nb), "put", "d.json", "-")
		patch := mustCLI(t, s, "", "diff", "HEAD~1", "HEAD", "d.json", "--format", "patch")
		p, err := jsonpatch.DecodePatch([]byte(patch))
		if err != nil {
			t.Fatalf("patch does not decode: %v\n%s", err, patch)
		}
		before := mustCLI(t, s, "", "cat", "d.json", "--at", "HEAD~1")
		got, err := p.Apply([]byte(before))
		if err != nil {
			t.Fatalf("patch does not apply: %v\n%s\nto %s", err, patch, before)
		}
		gc, err1 := objects.Canonical(got)
		wc, err2 := objects.Canonical(nb)
		if err1 != nil || err2 != nil || string(gc) != string(wc) {
			t.Fatalf("patched:\n%s\nwant:\n%s\npatch %s", gc, wc, patch)
		}
	}
	// A key path narrows the patch to that subtree, pointers from the root.
	mustCLI(t, s, "", "set", "d.json", "doc", `{"p":1,"q":[1,2]}`)
	mustCLI(t, s, "", "set", "d.json", "doc.q.1", `3`)
	if got := mustCLI(t, s, "", "diff", "HEAD~1", "HEAD", "d.json", "doc.q", "--format", "patch"); got != `[{"op":"replace","path":"/doc/q/1","value":3}]`+"\n" {
		t.Fatalf("narrowed patch = %s", got)
	}
}

func TestAuditCommands(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "plan.json", "risk.level", `"low"`, "--agent", "planner")
	mustCLI(t, s, "", "set", "plan.json", "risk.owner", `"ops"`, "--agent", "bob")
	mustCLI(t, s, "", "set", "plan.json", "risk.level", `"high"`, "--agent", "critic")
	mustCLI(t, s, "", "set", "other.json", "x", `1`)
	mustCLI(t, s, "", "mv", "plan.json", "docs/plan.json")

	out := mustCLI(t, s, "", "log", "docs/plan.json#risk.level", "--follow")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `critic`) || !strings.Contains(lines[1], `update plan.json#risk.level: "low" → "high"`) ||
		!strings.Contains(lines[2], `create plan.json#risk.level: (none) → "low"`) || !strings.Contains(lines[0], "moved from plan.json") {
		t.Fatalf("log --follow:\n%s", out)
	}
	if out := mustCLI(t, s, "", "log", "docs/plan.json#risk.level", "--follow", "--agent", "critic", "-n", "1"); strings.Count(out, "\n") != 1 {
		t.Fatalf("log --agent -n:\n%s", out)
	}
	// -n1 is -n 1, as git reads it.
	if out := mustCLI(t, s, "", "log", "docs/plan.json#risk.level", "--follow", "--agent", "critic", "-n1"); strings.Count(out, "\n") != 1 {
		t.Fatalf("log -n1:\n%s", out)
	}
	if out := mustCLI(t, s, "", "log", "plan.json#risk.level", "--since", "2000-01-01T00:00:00Z", "--json"); !strings.Contains(out, `"value":{"op":"update","file":"plan.json","key":"risk.level","old":"low","new":"high"}`) {
		t.Fatalf("log --json:\n%s", out)
	}

	var blame []struct{ Path, Agent, MutationID string }
	if err := json.Unmarshal([]byte(mustCLI(t, s, "", "blame", "docs/plan.json", "--json")), &blame); err != nil {
		t.Fatal(err)
	}
	if len(blame) != 2 || blame[0].Path != "risk.level" || blame[0].Agent != "critic" || blame[1].Agent != "bob" {
		t.Fatalf("blame --json: %+v", blame)
	}
	// On a history without merges, following all parents changes nothing.
	if a, b := mustCLI(t, s, "", "blame", "docs/plan.json", "--json"), mustCLI(t, s, "", "blame", "docs/plan.json", "--json", "--all-parents"); a != b {
		t.Fatalf("blame --all-parents on a linear history:\n%s\nvs\n%s", b, a)
	}
	if _, _, code := runCLI(t, s, "", "blame", "docs/plan.json", "--lines", "--all-parents"); code != exitUsage {
		t.Fatalf("blame --lines --all-parents: exit %d, want %d", code, exitUsage)
	}
	if out := mustCLI(t, s, "", "blame", "plan.json", "--at", "HEAD~3"); !strings.Contains(out, `planner       mut-`) || !strings.Contains(out, `risk.level = "low"`) {
		t.Fatalf("blame --at:\n%s", out)
	}
	lines = strings.Split(strings.TrimSpace(mustCLI(t, s, "", "blame", "docs/plan.json", "--lines")), "\n")
	if len(lines) != 6 || !strings.Contains(lines[2], "critic") || !strings.Contains(lines[2], `"level": "high"`) || !strings.Contains(lines[3], "bob") {
		t.Fatalf("blame --lines:\n%s", strings.Join(lines, "\n"))
	}

	out = mustCLI(t, s, "", "bisect", "--pred", `plan.json#risk.level == "high"`, "--bad", "HEAD~1", "--json")
	var bis struct {
		Mutation struct{ Agent string }
		Reads    int
	}
	if err := json.Unmarshal([]byte(out), &bis); err != nil || bis.Mutation.Agent != "critic" {
		t.Fatalf("bisect: %s", out)
	}
	if _, _, code := runCLI(t, s, "", "bisect", "--pred", `plan.json#risk.level ==`); code != exitUsage {
		t.Fatalf("bad predicate: exit %d", code)
	}

	// show finds a mutation by id; reindex rebuilds with progress.
	var m struct {
		MutationID string `json:"mutation_id"`
	}
	json.Unmarshal([]byte(mustCLI(t, s, "", "show", "HEAD~3", "--json")), &struct{ Mutation any }{&m})
	if out := mustCLI(t, s, "", "show", m.MutationID); !strings.Contains(out, "Mutation-Id: "+m.MutationID) {
		t.Fatalf("show %s:\n%s", m.MutationID, out)
	}
	out, errOut, code := runCLI(t, s, "", "reindex")
	if code != 0 || !strings.Contains(errOut, "indexing commits: 6/6") || !strings.Contains(out, "indexed 6 commits") {
		t.Fatalf("reindex: %d %q %q", code, out, errOut)
	}
}

// TestIndexUnderConcurrentWritersAndKill: several processes write at once,
// one is killed with SIGKILL mid-run, and log FILE still equals git log.
func TestIndexUnderConcurrentWritersAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newStore(t)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := 0; j < 15; j++ {
				cmd := exec.Command(bin, "set", fmt.Sprintf("d%d.json", (w+j)%3), fmt.Sprintf("k%d", j%4), fmt.Sprint(w*100+j), "--store", s, "--no-sync")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("writer %d: %v %s", w, err, out)
					return
				}
			}
		}(w)
	}
	// A writer killed at random points of its run.
	for k := 0; k < 5; k++ {
		ops := ""
		for j := 0; j < 200; j++ {
			ops += fmt.Sprintf(`{"op":"set","file":"d%d.json","path":"x","value":%d}`+"\n", j%3, k*1000+j)
		}
		opsFile := filepath.Join(t.TempDir(), "ops.jsonl")
		os.WriteFile(opsFile, []byte(ops), 0o644)
		cmd := exec.Command(bin, "apply", opsFile, "--store", s, "--no-sync")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	wg.Wait()
	for _, f := range []string{"d0.json", "d1.json", "d2.json"} {
		want := strings.Fields(gitOut(t, s, "log", "--first-parent", "--format=%H", "--", f))
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(mustCLI(t, s, "", "log", f)), "\n") {
			if l != "" {
				got = append(got, strings.Fields(l)[0])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("log %s: %d commits, git says %d", f, len(got), len(want))
		}
		for i := range got {
			if !strings.HasPrefix(want[i], got[i]) {
				t.Fatalf("log %s differs from git at %d", f, i)
			}
		}
	}
}

// TestLogFiltersBySourceAndCorrelation: one run's writes, found by the
// Correlation-Id (or Source) trailer they were written with.
func TestLogFiltersBySourceAndCorrelation(t *testing.T) {
	s := newStore(t)
	mustCLI(t, s, "", "set", "a.json", "k", "1", "--correlation", "run-7", "--source", "task-1")
	mustCLI(t, s, "", "set", "a.json", "k", "2", "--correlation", "run-8", "--source", "task-1")
	mustCLI(t, s, "", "set", "a.json", "k", "3")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--correlation", "run-7"}, 1},
		{[]string{"--source", "task-1"}, 2},
		{[]string{"--source", "task-1", "--correlation", "run-8"}, 1},
		{[]string{"--correlation", "nope"}, 0},
	} {
		var ms []map[string]any
		if err := json.Unmarshal([]byte(mustCLI(t, s, "", append([]string{"log", "--json"}, tc.args...)...)), &ms); err != nil || len(ms) != tc.want {
			t.Errorf("log %v: %d mutations (%v), want %d", tc.args, len(ms), err, tc.want)
		}
	}
}

// TestWatchCommand: watch streams mutations made by other processes as
// JSON Lines, stops after -n, and ends with exit 0 when interrupted.
func TestWatchCommand(t *testing.T) {
	s := newStore(t)
	var out bytes.Buffer
	cmd := exec.Command(bin, "watch", "plan.json", "--json", "-n", "2", "--poll", "5ms", "--store", s)
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Until the watcher has read the branch once, writes are before its
	// start: write until it has seen two (it stops then).
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	for i := 0; ; i++ {
		mustCLI(t, s, "", "set", "plan.json", "n", strconv.Itoa(i), "--agent", "writer")
		mustCLI(t, s, "", "set", "other.json", "n", strconv.Itoa(i))
		select {
		case err = <-exited:
		case <-time.After(20 * time.Millisecond):
			if i < 500 {
				continue
			}
			cmd.Process.Kill()
			t.Fatalf("watch did not stop after two mutations: %s", out.String())
		}
		break
	}
	if err != nil {
		t.Fatalf("watch: %v: %s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("watch -n 2 printed:\n%s", out.String())
	}
	prev := -1
	for _, l := range lines {
		var m struct {
			Agent   string
			Subject string
			Changes []struct{ File string }
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Agent != "writer" || len(m.Changes) != 1 || m.Changes[0].File != "plan.json" {
			t.Fatalf("a watched line: %s (%v)", l, err)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(m.Subject, "update plan.json#n"))
		if n < prev {
			t.Errorf("out of order:\n%s", out.String())
		}
		prev = n
	}

	// Interrupted once it runs (it has printed what came after HEAD~1).
	cmd = exec.Command(bin, "watch", "--from", "HEAD~1", "--store", s)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("watch interrupted: %v, want exit 0", err)
	}
}

// TestAgentTextIsInertOnATerminal: a subject an agent wrote with terminal
// controls (erase the line, move up, reorder text) is shown escaped by
// log and show, not obeyed, while git keeps it as written.
func TestAgentTextIsInertOnATerminal(t *testing.T) {
	s := newStore(t)
	subject := "harmless\x1b[1A\x1b[2K\rapproved by security \u202eexe.txt"
	mustCLI(t, s, "", "set", "a.json", "k", "1", "--agent", "mallory", "-m", subject)
	for _, args := range [][]string{{"log"}, {"show"}} {
		out := mustCLI(t, s, "", args...)
		if strings.ContainsAny(out, "\x1b\r\u202e") || !strings.Contains(out, `harmless\x1b[1A\x1b[2K`) || !strings.Contains(out, `security \u202eexe.txt`) {
			t.Errorf("%v:\n%q", args, out)
		}
	}
	if got := gitOut(t, s, "log", "-1", "--format=%B"); !strings.Contains(got, "\x1b[2K") {
		t.Errorf("the commit lost its subject as written: %q", got)
	}
}
