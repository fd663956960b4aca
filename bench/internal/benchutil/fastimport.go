package benchutil

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"time"
)

// FastImport writes n commits into a new bare store at storeDir with git
// fast-import, as agents' mutations would look (trailers included): the
// first creates variables JSON documents variables/vNNNN.json and
// variables/rare.json, each later one sets one variable, chosen at random
// by one of eight agents; the rare variable is set 10 times, evenly
// spread. It returns how many commits changed variables/v0042.json. On
// an error it says so and ends the program.
func FastImport(storeDir string, n, variables int) int {
	check(exec.Command("git", "init", "--bare", "-q", "-b", "main", storeDir).Run())
	cmd := exec.Command("git", "--git-dir", storeDir, "fast-import", "--quiet", "--depth=50")
	in, err := cmd.StdinPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	w := bufio.NewWriterSize(in, 1<<20)
	r := rand.New(rand.NewPCG(42, uint64(n)))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	busy := 0
	doc := func(name string, v int, agent string) string {
		return fmt.Sprintf("{\n  \"name\": %q,\n  \"updated_by\": %q,\n  \"value\": %d\n}\n", name, agent, v)
	}
	for i := 0; i < n; i++ {
		agent := fmt.Sprintf("agent%d", r.IntN(8))
		var file, body string
		fmt.Fprintf(w, "commit refs/heads/main\n")
		fmt.Fprintf(w, "author %s <%s@agents.invalid> %d +0000\ncommitter %s <%s@agents.invalid> %d +0000\n", agent, agent, start+int64(i), agent, agent, start+int64(i))
		if i == 0 {
			msg := "init\n\nMutation-Id: mut-00000000\n"
			fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
			for v := 0; v < variables; v++ {
				b := doc(fmt.Sprintf("v%04d", v), 0, agent)
				fmt.Fprintf(w, "M 100644 inline variables/v%04d.json\ndata %d\n%s\n", v, len(b), b)
			}
			b := doc("rare", 0, agent)
			fmt.Fprintf(w, "M 100644 inline variables/rare.json\ndata %d\n%s\n", len(b), b)
			continue
		}
		if i%(n/10) == 0 {
			file, body = "variables/rare.json", doc("rare", i, agent)
		} else {
			v := r.IntN(variables)
			if v == 42 {
				busy++
			}
			file, body = fmt.Sprintf("variables/v%04d.json", v), doc(fmt.Sprintf("v%04d", v), i, agent)
		}
		msg := fmt.Sprintf("update %s#value\n\nMutation-Id: mut-%08x\nOperation: update\nPath: %s#value\n", file, r.Uint32(), file)
		fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", file, len(body), body)
	}
	check(w.Flush())
	check(in.Close())
	check(cmd.Wait())
	return busy + 1
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
