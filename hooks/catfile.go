package hooks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// errMissing: cat-file has no such object.
var errMissing = errors.New("missing object")

// catFile reads objects through one long-running `git cat-file --batch`.
// It inherits the environment: inside pre-receive that is what points git
// at the quarantined objects of the push.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func newCatFile(ctx context.Context, gitDir string) (*catFile, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "cat-file", "--batch")
	cmd.Env = gitEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

// read returns an object's type and body; name is an id or anything
// rev-parse reads ("HEAD:.aiwg/policy.json").
func (c *catFile) read(name string) (string, []byte, error) {
	if strings.ContainsAny(name, "\n") {
		return "", nil, fmt.Errorf("object name %q: %w", name, errMissing)
	}
	if _, err := io.WriteString(c.in, name+"\n"); err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" || len(f) == 2 && f[1] == "ambiguous" {
		return "", nil, fmt.Errorf("%s: %w", name, errMissing)
	}
	if len(f) != 3 {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	body := make([]byte, size+1) // the body and a newline
	if _, err := io.ReadFull(c.out, body); err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	return f[1], body[:size], nil
}

func (c *catFile) close() {
	c.in.Close()
	c.cmd.Wait()
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode string
	name string
	hash string
}

func (e treeEntry) isDir() bool { return e.mode == "40000" }

func parseTree(body []byte) ([]treeEntry, error) {
	var es []treeEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+21 {
			return nil, errors.New("corrupt tree object")
		}
		es = append(es, treeEntry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), hash: fmt.Sprintf("%x", body[nul+1:nul+21])})
		body = body[nul+21:]
	}
	return es, nil
}
