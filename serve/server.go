package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Invocation is one request being served: the request and the client's
// standard streams. Stdin asks the client for its input at the first
// read, so a command that reads none never blocks on a client whose input
// stays open.
type Invocation struct {
	Request
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Handler runs an invocation and returns its exit code.
type Handler func(ctx context.Context, inv *Invocation) int

// errNoPeerCred: the system does not tell a socket's peer.
var errNoPeerCred = errors.New("peer credentials are not available here")

// ErrRunning: a server already listens on the socket.
var ErrRunning = errors.New("a server is already running")

// Server accepts clients' requests and runs them with Handler, several at
// once.
type Server struct {
	// Decline, when set, says why a request is not run here (a command
	// that depends on the process it runs in), or "" to run it. A
	// declined request is run by the client itself.
	Decline func(req *Request) string
	Handler Handler
	// Idle ends Serve after this long without a request (0: never).
	Idle time.Duration
	// Logf, when set, is told of connections refused and failed.
	Logf func(format string, a ...any)
}

// maxSocketPath is the room for a socket's path (sun_path, less its
// terminating NUL): 108 bytes on Linux, 104 on the BSDs and macOS.
const maxSocketPath = 103

// Listener is a server's socket.
type Listener struct {
	sock *os.File // non-blocking: accept waits in the runtime's poller
	path string
	lock *os.File // flocked for the listener's life: one server a socket

	mu       sync.Mutex
	closed   bool // the socket
	released bool // the lock
}

// Path is the socket's path.
func (l *Listener) Path() string { return l.path }

// Close stops listening, removes the socket and releases the lock.
func (l *Listener) Close() error {
	err := l.closeSocket()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released {
		l.released = true
		l.lock.Close()
	}
	return err
}

// closeSocket stops listening and removes the socket, keeping the lock:
// a stopping server holds it until its last command ends.
func (l *Listener) closeSocket() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.sock.Close() // wakes an accept in progress
	// Still ours: no other server takes the socket while the lock is held.
	os.Remove(l.path)
	return err
}

// accept waits for a connection. The wait is the runtime poller's, as
// for any read: a thread blocked in accept(2) instead kept its processor
// until the scheduler's monitor, asleep in an idle server, took it back,
// and the first command after a pause waited for that.
func (l *Listener) accept() (int, error) {
	raw, err := l.sock.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd := -1
	var aerr error
	err = raw.Read(func(fd uintptr) bool {
		nfd, aerr = acceptFD(int(fd))
		return aerr != syscall.EAGAIN
	})
	if err != nil {
		return -1, err
	}
	return nfd, aerr
}

func (l *Listener) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Listen creates the socket at path, usable by this user only. One server
// at a time listens on a path: a lock beside it (path + ".lock", flocked,
// so the kernel releases it when the server dies) says whether one runs
// (ErrRunning); a socket left by a dead one is replaced.
func Listen(path string) (*Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is %d bytes, more than a Unix socket can name (%d)", path, len(path), maxSocketPath)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	// A few tries: Running holds a shared lock for an instant.
	for try := 0; ; try++ {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err == syscall.EWOULDBLOCK && try < 5 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		lock.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, fmt.Errorf("%w on %s", ErrRunning, path)
		}
		return nil, &os.PathError{Op: "flock", Path: path + ".lock", Err: err}
	}
	// The lock names its holder, for Running.
	if err := lock.Truncate(0); err == nil {
		lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	// Bound in a directory of our own (0700), restricted, then renamed
	// into place: no one can reach the socket before it is 0600, or swap
	// a symlink in for it, and a dead server's socket is replaced in one
	// step.
	private, err := os.MkdirTemp(dir, ".serve-")
	if err != nil {
		lock.Close()
		return nil, err
	}
	defer os.RemoveAll(private)
	tmp := filepath.Join(private, "s")
	fd, err := listenFD(tmp)
	var sock *os.File
	if err == nil {
		if err = os.Chmod(tmp, 0o600); err == nil {
			err = os.Rename(tmp, path)
		}
		if err == nil {
			sock, err = pollable(fd, path)
		} else {
			syscall.Close(fd)
		}
	}
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &Listener{sock: sock, path: path, lock: lock}, nil
}

// Running reports the process id of the server listening at path, or 0
// when none is.
func Running(path string) (int, error) {
	lock, err := os.Open(path + ".lock")
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	// A shared lock is had only where no server holds its exclusive one.
	switch err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err {
	case nil:
		syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		return 0, nil
	case syscall.EWOULDBLOCK:
	default:
		return 0, &os.PathError{Op: "flock", Path: path + ".lock", Err: err}
	}
	// A server writes its process id just after taking the lock.
	for try := 0; ; try++ {
		var b [32]byte
		n, _ := lock.ReadAt(b[:], 0)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
			return pid, nil
		}
		if try == 50 {
			return 0, fmt.Errorf("%s.lock is held but names no process", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Serve accepts connections on l until ctx is done or the server has
// been idle for s.Idle, then stops listening, waits for the commands in
// progress, which a stop does not cancel (only their client's leaving
// does), and closes l: its lock is held, and Running names this process,
// until the last command has ended. A request that arrives while the
// server stops is declined, so its client runs it itself.
func (s *Server) Serve(ctx context.Context, l *Listener) error {
	// Commands outlive the stop; each is cancelled by its client alone.
	commands := context.WithoutCancel(ctx)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		active int
		last   = time.Now()
	)
	go func() {
		<-ctx.Done()
		l.closeSocket()
	}()
	if s.Idle > 0 {
		go func() {
			tick := time.NewTicker(min(max(s.Idle/4, 10*time.Millisecond), time.Second))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					mu.Lock()
					idle := active == 0 && time.Since(last) >= s.Idle
					mu.Unlock()
					if idle {
						stop()
						return
					}
				}
			}
		}()
	}
	var err error
	for delay := time.Duration(0); ; {
		var fd int
		fd, err = l.accept()
		if err == syscall.EMFILE || err == syscall.ENFILE || err == syscall.ENOBUFS || err == syscall.ENOMEM {
			// Out of descriptors or memory for now: wait, as net/http
			// does, rather than end the server.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.logf("accept: %v; retrying in %v", err, delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		if err != nil {
			if l.isClosed() {
				err = nil
			} else {
				err = os.NewSyscallError("accept", err)
			}
			break
		}
		if err := checkPeer(fd); err != nil {
			s.logf("refused a connection: %v", err)
			syscall.Close(fd)
			continue
		}
		c, err := pollable(fd, "client")
		if err != nil {
			s.logf("%v", err)
			continue
		}
		mu.Lock()
		active++
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.serveConn(ctx, commands, c); err != nil {
				s.logf("%v", err)
			}
			mu.Lock()
			active--
			last = time.Now()
			mu.Unlock()
		}()
	}
	stop()
	l.closeSocket()
	wg.Wait()
	l.Close()
	return err
}

func (s *Server) logf(format string, a ...any) {
	if s.Logf != nil {
		s.Logf(format, a...)
	}
}

// conn is the server's side of one client: frames out under a mutex (the
// command's stdout and stderr, and its request for stdin), frames in read
// by one goroutine that feeds stdin and notices the client leaving.
type conn struct {
	c      *os.File
	mu     sync.Mutex
	out    *bufio.Writer
	err    error // the first write error: later writes are dropped
	needIn sync.Once
	in     *io.PipeReader
}

// serveConn serves one client. serving is done once the server stops;
// commands is the context commands run in, which a stop leaves alone.
func (s *Server) serveConn(serving, commands context.Context, c *os.File) error {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, payload, err := readFrame(c, maxRequest)
	if err != nil {
		return fmt.Errorf("reading a request: %w", err)
	}
	c.SetReadDeadline(time.Time{})
	cn := &conn{c: c, out: bufio.NewWriterSize(c, chunk)}
	if typ != frameRequest {
		return fmt.Errorf("%w: a %q frame where a request was due", ErrProtocol, typ)
	}
	req, err := decodeRequest(payload)
	if err == nil && len(req.Args) == 0 {
		err = fmt.Errorf("%w: a request without arguments", ErrProtocol)
	}
	if err != nil {
		cn.decline(err.Error())
		return err
	}
	if req.Version != Version {
		return cn.decline(fmt.Sprintf("the client speaks protocol %d, the server %d", req.Version, Version))
	}

	if serving.Err() != nil {
		return cn.decline("the server is stopping")
	}
	if s.Decline != nil {
		if why := s.Decline(&req); why != "" {
			return cn.decline(why)
		}
	}
	// Told before the command starts, and flushed: a client that loses
	// the connection after this frame knows the command may have run,
	// and one that loses it before knows it did not.
	if err := cn.send(frameStarted, nil); err != nil {
		return err
	}

	// The client's leaving cancels the command, as its Ctrl-C would,
	// and ends a read of its input.
	ctx, cancel := context.WithCancel(commands)
	defer cancel()
	pr, pw := io.Pipe()
	cn.in = pr
	stopReading := context.AfterFunc(ctx, func() { pr.CloseWithError(context.Cause(ctx)) })
	defer stopReading()
	readDone := make(chan struct{})
	go func() { cn.readInput(pw, cancel); close(readDone) }()
	defer func() {
		// Input the command did not read is discarded (the reader's
		// writes fail from now on); the reader ends with the connection,
		// and serveConn, so Serve, returns only after it.
		pr.CloseWithError(io.ErrClosedPipe)
		c.Close()
		<-readDone
	}()

	inv := &Invocation{
		Request: req,
		Stdin:   stdinReader{cn},
		Stdout:  streamWriter{cn, frameStdout},
		Stderr:  streamWriter{cn, frameStderr},
	}
	return cn.send(frameExit, exitPayload(s.Handler(ctx, inv)))
}

// readInput reads the client's frames for the rest of the connection:
// its input into the pipe until the input's end (after the command stops
// reading, the rest is discarded); the connection's end (the client gone)
// cancels the command.
func (cn *conn) readInput(pw *io.PipeWriter, cancel context.CancelFunc) {
	reading, ended := true, false
	for {
		typ, payload, err := readFrame(cn.c, maxData)
		if err != nil {
			pw.CloseWithError(io.ErrUnexpectedEOF) // a no-op after the end
			cancel()
			return
		}
		switch {
		case typ == frameStdin && !ended:
			if reading {
				if _, err := pw.Write(payload); err != nil {
					reading = false
				}
			}
		case typ == frameStdinEnd && !ended:
			ended = true
			pw.Close()
		default:
			pw.CloseWithError(ErrProtocol)
			cancel()
			return
		}
	}
}

// write sends a frame; the caller holds mu.
func (cn *conn) write(typ byte, p []byte) {
	if cn.err != nil {
		return
	}
	cn.err = writeFrame(cn.out, typ, p)
}

// flush sends what is buffered; the caller holds mu.
func (cn *conn) flush() {
	if cn.err == nil {
		cn.err = cn.out.Flush()
	}
}

// send sends a frame at once, and reports the connection's first error.
func (cn *conn) send(typ byte, p []byte) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.write(typ, p)
	cn.flush()
	return cn.err
}

func (cn *conn) decline(reason string) error { return cn.send(frameDecline, []byte(reason)) }

// streamWriter sends writes as frames of one stream. Stdout is buffered
// (flushed when the command asks for input and when it ends); stderr,
// which carries progress, goes at once.
type streamWriter struct {
	cn  *conn
	typ byte
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.cn.mu.Lock()
	defer w.cn.mu.Unlock()
	for rest := p; len(rest) > 0; {
		n := min(len(rest), chunk)
		w.cn.write(w.typ, rest[:n])
		rest = rest[n:]
	}
	if w.typ == frameStderr {
		w.cn.flush()
	}
	if w.cn.err != nil {
		return 0, w.cn.err
	}
	return len(p), nil
}

// stdinReader asks the client for its standard input at the first read.
type stdinReader struct{ cn *conn }

func (r stdinReader) Read(p []byte) (int, error) {
	r.cn.needIn.Do(func() { r.cn.send(frameNeedIn, nil) })
	return r.cn.in.Read(p)
}

// checkPeer refuses a peer of another user: a client, whom the socket's
// mode keeps out already (this holds where a directory above it is
// shared), or a server at a socket someone else made.
func checkPeer(fd int) error {
	uid, err := peerUID(fd)
	if errors.Is(err, errNoPeerCred) {
		return nil
	}
	if err != nil {
		return err
	}
	if uid != os.Getuid() {
		return fmt.Errorf("a client of uid %d (the server runs as %d)", uid, os.Getuid())
	}
	return nil
}
