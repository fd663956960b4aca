package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// socketPath is a short path: t.TempDir's names can pass the 104 bytes a
// Unix socket may name.
func socketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

// start runs s on a fresh socket until the test ends.
func start(t testing.TB, s *Server) string {
	t.Helper()
	path, stop := serveUntilStopped(t, s)
	t.Cleanup(stop)
	return path
}

// serveUntilStopped runs s on a fresh socket; stop stops it and waits for
// Serve to return, which must be soon.
func serveUntilStopped(t testing.TB, s *Server) (path string, stop func()) {
	t.Helper()
	path = socketPath(t)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	return path, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return within 10s of its stop")
		}
	}
}

func TestForward(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 50_000) // 800 KB: many frames
	h := func(ctx context.Context, inv *Invocation) int {
		switch inv.Args[1] {
		case "echo":
			fmt.Fprintf(inv.Stdout, "args=%q dir=%s agent=%s terminal=%v\n", inv.Args[2:], inv.Dir, inv.Getenv("AIWG_AGENT"), inv.Terminal)
			fmt.Fprintln(inv.Stderr, "a line on stderr")
			return 3
		case "cat":
			n, err := io.Copy(inv.Stdout, inv.Stdin)
			if err != nil {
				fmt.Fprintln(inv.Stderr, err)
				return 1
			}
			fmt.Fprintf(inv.Stderr, "%d bytes\n", n)
			return 0
		case "big":
			inv.Stdout.Write(big)
			return 0
		}
		return 2
	}
	path := start(t, &Server{Handler: h})
	for _, tc := range []struct {
		name           string
		req            Request
		stdin          io.Reader
		code           int
		stdout, stderr string
	}{
		{"arguments, directory and environment arrive",
			Request{Args: []string{"x", "echo", "a b", "--json"}, Dir: "/w", Env: []string{"AIWG_AGENT=old", "PATH=/bin", "AIWG_AGENT=planner"}, Terminal: true},
			nil, 3, `args=["a b" "--json"] dir=/w agent=old terminal=true` + "\n", "a line on stderr\n"},
		{"a command that reads no input never waits for it",
			Request{Args: []string{"x", "echo"}}, blockingReader{}, 3, "args=[] dir= agent= terminal=false\n", "a line on stderr\n"},
		{"input is relayed when asked for, across frames",
			Request{Args: []string{"x", "cat"}}, bytes.NewReader(big), 0, string(big), "800000 bytes\n"},
		{"no input at all reads as empty",
			Request{Args: []string{"x", "cat"}}, nil, 0, "", "0 bytes\n"},
		{"output larger than a frame",
			Request{Args: []string{"x", "big"}}, nil, 0, string(big), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code, err := Forward(context.Background(), path, tc.req, tc.stdin, &out, &errb)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || out.String() != tc.stdout || errb.String() != tc.stderr {
				t.Errorf("got code %d, stdout %.80q, stderr %q; want %d, %.80q, %q", code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestForwardFallsBackOnlyWhenNothingRan(t *testing.T) {
	var ran atomic.Int32
	h := func(ctx context.Context, inv *Invocation) int { ran.Add(1); return 0 }
	declining := start(t, &Server{Handler: h, Decline: func(r *Request) string {
		if r.Args[1] == "init" {
			return "init runs in the client's process"
		}
		return ""
	}})
	if _, err := Forward(context.Background(), declining, Request{Args: []string{"x", "init"}}, nil, io.Discard, io.Discard); !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), "client's process") {
		t.Errorf("declined: %v", err)
	}
	if code, err := Forward(context.Background(), declining, Request{Args: []string{"x", "get"}}, nil, io.Discard, io.Discard); err != nil || code != 0 {
		t.Errorf("served: %d %v", code, err)
	}
	if ran.Load() != 1 {
		t.Errorf("the handler ran %d times, want 1 (the declined request must not run)", ran.Load())
	}

	// No socket, and a socket nobody listens on.
	if _, err := Forward(context.Background(), filepath.Join(t.TempDir(), "none"), Request{Args: []string{"x"}}, nil, io.Discard, io.Discard); !errors.Is(err, ErrNoServer) {
		t.Errorf("no socket: %v", err)
	}
	stale := socketPath(t)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := Forward(context.Background(), stale, Request{Args: []string{"x"}}, nil, io.Discard, io.Discard); !errors.Is(err, ErrNoServer) {
		t.Errorf("stale socket: %v", err)
	}

	// A server that dies after it said the command started: the client
	// must not run it again. One that dies before: it may.
	for _, tc := range []struct {
		name   string
		frames []byte
		want   error
	}{
		{"gone before the start", nil, ErrNoServer},
		{"gone after the start", []byte{frameStarted, 0, 0, 0, 0}, ErrLost},
		{"gone mid-output", append([]byte{frameStarted, 0, 0, 0, 0, frameStdout, 0, 0, 0, 9}, "partial"...), ErrLost},
		{"a frame out of turn", []byte{frameStdout, 0, 0, 0, 1, 'x'}, ErrProtocol},
		{"an oversized frame", []byte{frameStarted, 0, 0, 0, 0, frameStdout, 0xff, 0xff, 0xff, 0xff}, ErrLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := socketPath(t)
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				readFrame(c, maxRequest)
				c.Write(tc.frames)
				c.Close()
			}()
			_, err = Forward(context.Background(), path, Request{Args: []string{"x", "set"}}, nil, io.Discard, io.Discard)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestServerVersionAndMalformedRequests(t *testing.T) {
	var ran atomic.Int32
	path := start(t, &Server{Handler: func(context.Context, *Invocation) int { ran.Add(1); return 0 }})
	for _, tc := range []struct {
		name    string
		payload string
	}{
		{"another protocol version", string((&Request{Version: 99, Args: []string{"x", "set"}}).encode())},
		{"no arguments", string((&Request{Version: 1}).encode())},
		{"truncated", string((&Request{Version: 1, Args: []string{"x", "set"}}).encode()[:6])},
		{"bytes after it", string(append((&Request{Version: 1, Args: []string{"x", "set"}}).encode(), 0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			writeFrame(c, frameRequest, []byte(tc.payload))
			typ, _, err := readFrame(c, maxData)
			if err != nil || typ != frameDecline {
				t.Errorf("got frame %q, %v; want a decline", typ, err)
			}
		})
	}
	if ran.Load() != 0 {
		t.Errorf("the handler ran %d times", ran.Load())
	}
}

func TestClientLeavingCancelsTheCommand(t *testing.T) {
	cancelled := make(chan struct{})
	path := start(t, &Server{Handler: func(ctx context.Context, inv *Invocation) int {
		fmt.Fprintln(inv.Stderr, "working")
		<-ctx.Done()
		close(cancelled)
		return 130
	}})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	stderr := &notifyWriter{seen: make(chan struct{}, 1)}
	go func() {
		_, err := Forward(ctx, path, Request{Args: []string{"x", "slow"}}, nil, io.Discard, stderr)
		errs <- err
	}()
	<-stderr.seen
	cancel()
	if err := <-errs; !errors.Is(err, ErrLost) {
		t.Errorf("Forward: %v, want ErrLost (the command had started)", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the command's context was not cancelled when the client left")
	}
}

type notifyWriter struct{ seen chan struct{} }

func (w *notifyWriter) Write(p []byte) (int, error) {
	select {
	case w.seen <- struct{}{}:
	default:
	}
	return len(p), nil
}

func TestListen(t *testing.T) {
	path := socketPath(t)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket of mode 0600", fi.Mode())
	}
	if _, err := Listen(path); !errors.Is(err, ErrRunning) {
		t.Errorf("a second server on a live socket: %v, want ErrRunning", err)
	}
	ln.sock.Close() // as a killed server: the socket file stays,
	ln.lock.Close() // and the kernel drops its lock
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the socket went with its listener: %v", err)
	}
	ln2, err := Listen(path)
	if err != nil {
		t.Fatalf("a stale socket is not replaced: %v", err)
	}
	ln2.Close()
	if _, err := Listen(strings.Repeat("d", 120) + "/s.sock"); err == nil || !strings.Contains(err.Error(), "more than a Unix socket") {
		t.Errorf("a path too long for a socket: %v", err)
	}
}

func TestServeEndsWhenIdle(t *testing.T) {
	path := socketPath(t)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	const idle = time.Second
	started, release := make(chan struct{}), make(chan struct{})
	s := &Server{Idle: idle, Handler: func(ctx context.Context, inv *Invocation) int {
		close(started)
		<-release
		return 7
	}}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	codes := make(chan int, 1)
	go func() {
		code, err := Forward(context.Background(), path, Request{Args: []string{"x", "slow"}}, nil, io.Discard, io.Discard)
		if err != nil {
			t.Error(err)
		}
		codes <- code
	}()
	<-started
	// A command in progress is not idleness: twice the idle time on,
	// the server still listens.
	time.Sleep(2*idle + idle/2)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the server went idle with a command in progress: %v", err)
	}
	close(release)
	if code := <-codes; code != 7 {
		t.Fatalf("the command's exit: %d", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end when idle")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket stays after the server ended: %v", err)
	}
}

func TestStoppingServer(t *testing.T) {
	t.Run("a command in progress finishes", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		path, stop := serveUntilStopped(t, &Server{Handler: func(ctx context.Context, inv *Invocation) int {
			close(started)
			<-release
			if ctx.Err() != nil {
				return 99 // the stop reached the command
			}
			return 0
		}})
		codes := make(chan int, 1)
		go func() {
			code, err := Forward(context.Background(), path, Request{Args: []string{"x", "set"}}, nil, io.Discard, io.Discard)
			if err != nil {
				t.Error(err)
			}
			codes <- code
		}()
		<-started
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("a stopping server still offers its socket: %v", err)
			}
		}
		if pid, err := Running(path); pid != os.Getpid() || err != nil {
			t.Errorf("while its command runs, a stopping server is not running: %d, %v", pid, err)
		}
		close(release)
		if code := <-codes; code != 0 {
			t.Errorf("the command in progress got exit %d", code)
		}
		<-stopped
		if pid, err := Running(path); pid != 0 || err != nil {
			t.Errorf("a stopped server still runs: %d, %v", pid, err)
		}
	})
	t.Run("a request arriving as it stops is declined", func(t *testing.T) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		server, _ := pollable(fds[0], "server")
		client, _ := pollable(fds[1], "client")
		defer client.Close()
		stopped, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		s := &Server{Handler: func(context.Context, *Invocation) int { ran = true; return 0 }}
		writeFrame(client, frameRequest, (&Request{Version: Version, Args: []string{"x", "set"}}).encode())
		go s.serveConn(stopped, context.Background(), server)
		if typ, _, err := readFrame(client, maxData); err != nil || typ != frameDecline || ran {
			t.Errorf("got %q, %v (ran %v); want a decline", typ, err, ran)
		}
	})
}

func TestInputEndsWithTheCommand(t *testing.T) {
	readErr := make(chan error, 1)
	reading := make(chan struct{})
	path, stop := serveUntilStopped(t, &Server{Handler: func(ctx context.Context, inv *Invocation) int {
		if inv.Args[1] == "head" {
			io.ReadFull(inv.Stdin, make([]byte, 1)) // one byte of much more
			return 0
		}
		close(reading)
		_, err := io.ReadAll(inv.Stdin) // input that never ends
		readErr <- err
		return 1
	}})
	big := bytes.Repeat([]byte("x"), 1<<20)
	if code, err := Forward(context.Background(), path, Request{Args: []string{"x", "head"}}, bytes.NewReader(big), io.Discard, io.Discard); err != nil || code != 0 {
		t.Fatalf("a command reading part of its input: %d, %v", code, err)
	}
	fctx, leave := context.WithCancel(context.Background())
	go Forward(fctx, path, Request{Args: []string{"x", "all"}}, blockingReader{}, io.Discard, io.Discard)
	<-reading
	leave()
	select {
	case err := <-readErr:
		if err == nil {
			t.Error("the read of a departed client's input succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a command waiting for input outlived its client")
	}
	stop() // fails the test if a command's input reader is stuck
}

func TestClientChecksTheSocket(t *testing.T) {
	path := start(t, &Server{Handler: func(context.Context, *Invocation) int { return 0 }})
	link := filepath.Join(filepath.Dir(path), "link.sock")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Forward(context.Background(), link, Request{Args: []string{"x"}}, nil, io.Discard, io.Discard); !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("through a symlink: %v, want ErrNoServer", err)
	}
	plain := filepath.Join(filepath.Dir(path), "plain")
	os.WriteFile(plain, nil, 0o600)
	if _, err := Forward(context.Background(), plain, Request{Args: []string{"x"}}, nil, io.Discard, io.Discard); !errors.Is(err, ErrNoServer) {
		t.Errorf("a plain file: %v, want ErrNoServer", err)
	}
}
