package hooks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/repo"
)

// errMissing: cat-file has no such object.
var errMissing = errors.New("missing object")

// catFile reads objects: in this process where it can (objects.go), else
// through one long-running `git cat-file --batch`, started when first
// needed. Both honour the environment: inside pre-receive that is what
// points them at the quarantined objects of the push.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// mode is the git cat-file mode (--batch or --batch-check); startErr
	// why the process did not start.
	mode     string
	startErr error
	// check is a `git cat-file --batch-check`, started when first asked
	// for the size of an object read no other way: a blob is measured
	// before it is read.
	check    *catFile
	ctx      context.Context
	gitDir   string
	checkErr error
	// r reads objects and refs in this process (nil: everything goes
	// through git); see objects.go. quarantined: it reads a push's
	// quarantine first, inside pre-receive (see walk.go).
	r           *repo.Repo
	quarantined bool
}

func newCatFile(ctx context.Context, gitDir string) (*catFile, error) {
	r, quarantined := openObjects(ctx, gitDir)
	return &catFile{ctx: ctx, gitDir: gitDir, mode: "--batch", r: r, quarantined: quarantined}, nil
}

// start starts the git process, once.
func (c *catFile) start() error {
	if c.cmd == nil && c.startErr == nil {
		var p *catFile
		if p, c.startErr = startCatFile(c.ctx, c.gitDir, c.mode); c.startErr == nil {
			c.cmd, c.in, c.out = p.cmd, p.in, p.out
		}
	}
	return c.startErr
}

func startCatFile(ctx context.Context, gitDir, mode string) (*catFile, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "cat-file", mode)
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
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), mode: mode, ctx: ctx, gitDir: gitDir}, nil
}

// info returns an object's type and size without reading it (a blob
// over inProcessInfoMax is not read to learn its type: git says).
func (c *catFile) info(name string) (string, int64, error) {
	if c.r != nil {
		if typ, size, ok, err := c.infoHere(name); ok {
			return typ, size, err
		}
	}
	if c.check == nil && c.checkErr == nil {
		c.check, c.checkErr = startCatFile(c.ctx, c.gitDir, "--batch-check")
	}
	if c.checkErr != nil {
		return "", 0, c.checkErr
	}
	typ, size, err := c.check.header(name)
	return typ, int64(size), err
}

// header asks for an object and reads the header cat-file answers with:
// its type and size.
func (c *catFile) header(name string) (string, int, error) {
	if strings.ContainsAny(name, "\n") {
		return "", 0, fmt.Errorf("object name %q: %w", name, errMissing)
	}
	if err := c.start(); err != nil {
		return "", 0, err
	}
	if _, err := io.WriteString(c.in, name+"\n"); err != nil {
		return "", 0, fmt.Errorf("git cat-file: %w", err)
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		return "", 0, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" || len(f) == 2 && f[1] == "ambiguous" {
		return "", 0, fmt.Errorf("%s: %w", name, errMissing)
	}
	if len(f) != 3 {
		return "", 0, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 {
		return "", 0, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	return f[1], size, nil
}

// read returns an object's type and body; name is an id or anything
// rev-parse reads ("HEAD:.aiwg/policy.json").
func (c *catFile) read(name string) (string, []byte, error) {
	if c.r != nil {
		if typ, body, ok, err := c.readHere(name); ok {
			return typ, body, err
		}
	}
	typ, size, err := c.header(name)
	if err != nil {
		return "", nil, err
	}
	body := make([]byte, size+1) // the body and a newline
	if _, err := io.ReadFull(c.out, body); err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	return typ, body[:size], nil
}

func (c *catFile) close() {
	if c.check != nil {
		c.check.close()
	}
	if c.cmd != nil {
		c.in.Close()
		c.cmd.Wait()
	}
	if c.r != nil {
		c.r.Close()
	}
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode string
	name string
	hash string
}

func (e treeEntry) isDir() bool { return e.mode == "40000" }

// errTreeMalformed: a tree git and aiwg-state could read differently.
var errTreeMalformed = errors.New("malformed tree")

// parseTree decodes a tree object, refusing one that git and this reader
// could read differently: git looks a name up in a tree by a search that
// assumes its order (names compared byte by byte, a directory as if its
// name ended in '/') and takes the first match, so a tree out of that
// order, or naming an entry twice (a file and a directory of one name
// included), holds files git never shows or shows other ones than a
// reader that lists them all. git fsck refuses such trees
// (treeNotSorted, duplicateEntries, and modes git does not write:
// zeroPaddedFilemode, badFilemode); so does this.
func parseTree(body []byte) ([]treeEntry, error) {
	var es []treeEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+21 {
			return nil, fmt.Errorf("%w: truncated entry", errTreeMalformed)
		}
		e := treeEntry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), hash: hex.EncodeToString(body[nul+1 : nul+21])}
		if e.name == "" || strings.IndexByte(e.name, '/') >= 0 {
			return nil, fmt.Errorf("%w: entry name %q", errTreeMalformed, e.name)
		}
		switch e.mode {
		case "100644", "100755", "120000", "160000", "40000":
		default:
			// Zero-padded or group-writable modes, which git reads as
			// others, and anything git cannot read.
			return nil, fmt.Errorf("%w: %q has mode %q, not one git writes", errTreeMalformed, e.name, e.mode)
		}
		if n := len(es); n > 0 {
			prev := es[n-1]
			switch c := compareEntries(prev, e); {
			case c == 0:
				return nil, fmt.Errorf("%w: %q is named twice", errTreeMalformed, e.name)
			case c > 0:
				return nil, fmt.Errorf("%w: %q comes after %q, out of git's order", errTreeMalformed, e.name, prev.name)
			}
			// A file and a directory of one name are not neighbours in
			// that order ("a" < "a.b" < "a/"): look the file up.
			if e.isDir() && prev.name != e.name && strings.HasPrefix(prev.name, e.name) {
				file := treeEntry{name: e.name}
				if i := sort.Search(n, func(i int) bool { return compareEntries(es[i], file) >= 0 }); i < n && es[i].name == e.name {
					return nil, fmt.Errorf("%w: %q is named twice", errTreeMalformed, e.name)
				}
			}
		}
		es = append(es, e)
		body = body[nul+21:]
	}
	return es, nil
}

// compareEntries orders tree entries as git does (base_name_compare):
// by name, byte by byte, a directory's name followed by '/'. Entries of
// one name compare equal whatever their kind, as for fsck they name one
// path twice.
func compareEntries(a, b treeEntry) int {
	if a.name == b.name {
		return 0
	}
	x, y := a.name, b.name
	n := min(len(x), len(y))
	if c := strings.Compare(x[:n], y[:n]); c != 0 {
		return c
	}
	// One name is a prefix of the other: the shorter one continues with
	// '/' when it is a directory, else ends (sorts first).
	next := func(e treeEntry, s string) int {
		if len(s) > n {
			return int(s[n])
		}
		if e.isDir() {
			return '/'
		}
		return 0
	}
	return next(a, x) - next(b, y)
}
