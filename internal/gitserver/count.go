package gitserver

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Counter counts what a counting proxy carried: the bytes the server sent
// to fetches (git-upload-pack: advertisement, acknowledgments and pack)
// and to pushes (git-receive-pack: its advertisement of every ref and the
// report), and the connections of each.
type Counter struct {
	FetchDown, PushDown atomic.Int64
	Fetches, Pushes     atomic.Int64
}

// Counting serves a TCP proxy on loopback in front of a git daemon's base
// URL ("git://127.0.0.1:PORT/") and returns the proxy's base URL and its
// counter: what a fetch or a push through it costs, measured on the wire.
func Counting(tb testing.TB, base string) (string, *Counter) {
	tb.Helper()
	url, c, stop, err := StartCounting(base)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return url, c
}

// StartCounting is Counting for programs without a testing.TB.
func StartCounting(base string) (string, *Counter, func(), error) {
	target := strings.TrimSuffix(strings.TrimPrefix(base, "git://"), "/")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	c := &Counter{}
	var wg sync.WaitGroup
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer in.Close()
				c.proxy(in, target)
			}()
		}
	}()
	stop := func() { l.Close(); wg.Wait() }
	return "git://" + l.Addr().String() + "/", c, stop, nil
}

// proxy carries one connection; git daemon's first packet names the
// service ("git-upload-pack /x.git\0host=...").
func (c *Counter) proxy(in net.Conn, target string) {
	var head [4]byte
	if _, err := io.ReadFull(in, head[:]); err != nil {
		return
	}
	n, err := strconv.ParseUint(string(head[:]), 16, 16)
	if err != nil || n < 4 {
		return
	}
	first := make([]byte, n-4)
	if _, err := io.ReadFull(in, first); err != nil {
		return
	}
	down := &c.FetchDown
	if bytes.HasPrefix(first, []byte("git-receive-pack")) {
		down = &c.PushDown
		c.Pushes.Add(1)
	} else {
		c.Fetches.Add(1)
	}
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer out.Close()
	if _, err := out.Write(append(head[:], first...)); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(out, in)
		out.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(counted{in, down}, out)
	in.(*net.TCPConn).CloseWrite()
	<-done
}

// counted counts bytes before they go on, so that a client that has read
// them has them counted.
type counted struct {
	w io.Writer
	n *atomic.Int64
}

func (c counted) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}
