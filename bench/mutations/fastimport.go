package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// fastImporter is git's own one-process writer as a peer of the
// in-process path: one long-running `git fast-import`, one commit per
// mutation, each followed by a checkpoint (the pack written and the ref
// updated, so the commit is visible and, under fsync, durable, as ours
// are) and a progress line, which fast-import prints once the checkpoint
// is done.
type fastImporter struct {
	cmd   *exec.Cmd
	in    *bufio.Writer
	out   *bufio.Reader
	first string // the commit the first one continues
}

func newFastImporter(ctx context.Context, dir string, sync bool) *fastImporter {
	st := seedStore(ctx, dir, sync)
	gitDir := st.Dir()
	st.Close()
	fsync := "none"
	if sync {
		fsync = "committed,reference"
	}
	cmd := exec.Command("git", "-c", "core.fsync="+fsync, "-c", "core.fsyncMethod=fsync", "--git-dir", gitDir, "fast-import", "--quiet", "--done")
	stdin, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	f := &fastImporter{cmd: cmd, in: bufio.NewWriter(stdin), out: bufio.NewReader(stdout)}
	// The first commit continues the store's branch.
	head, err := exec.Command("git", "--git-dir", gitDir, "rev-parse", "main").Output()
	check(err)
	f.first = string(head[:40])
	return f
}

func (f *fastImporter) mutate(i int) time.Duration {
	t0 := time.Now()
	body := docBody(i % docs)
	msg := fmt.Sprintf("update %s#status.value\n\nMutation-Id: mut-%08x\nOperation: update\nPath: %s#status.value\n", docPath(i%docs), i, docPath(i%docs))
	now := time.Now().Unix()
	fmt.Fprintf(f.in, "commit refs/heads/main\ncommitter bench <bench@agents.invalid> %d +0000\ndata %d\n%s\n", now, len(msg), msg)
	if f.first != "" {
		fmt.Fprintf(f.in, "from %s\n", f.first)
		f.first = ""
	}
	fmt.Fprintf(f.in, "M 100644 inline %s\ndata %d\n%s\ncheckpoint\nprogress %d\n", docPath(i%docs), len(body), body, i)
	check(f.in.Flush())
	_, err := f.out.ReadString('\n')
	check(err)
	return time.Since(t0)
}

func (f *fastImporter) close() {
	f.in.WriteString("done\n")
	f.in.Flush()
	io.Copy(io.Discard, f.out)
	check(f.cmd.Wait())
}
