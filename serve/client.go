package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// ErrNoServer: no server answered on the socket; nothing was sent, and
// the client may run the command itself.
var ErrNoServer = errors.New("no server")

// ErrDeclined wraps the server's reason for declining a request; nothing
// was run, and the client may run the command itself.
var ErrDeclined = errors.New("declined by the server")

// ErrLost: the connection ended before the command's exit status came
// back. The command may have run, in part or whole, so it must not simply
// be run again.
var ErrLost = errors.New("lost the server before the command finished")

// SocketName is the server's socket in the store's git directory.
const SocketName = "aiwg/serve.sock"

// ForwardProcess runs this process's command line (args, os.Args) through
// the server of store, with this process's working directory wd,
// environment and standard streams, and returns its exit code. Errors
// wrapping ErrNoServer or ErrDeclined mean nothing ran: the caller runs
// the command itself. aiwg-state-client and aiwg-state both send their
// command lines through it.
func ForwardProcess(ctx context.Context, args []string, wd, store string) (int, error) {
	return Forward(ctx, filepath.Join(store, filepath.FromSlash(SocketName)), Request{
		Args:     args,
		Dir:      wd,
		Env:      os.Environ(),
		Target:   store,
		Umask:    Umask(), // the server runs only a client's of its own umask
		Terminal: isTerminal(os.Stdout),
	}, os.Stdin, os.Stdout, os.Stderr)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Forward sends req to the server listening on socket, relays stdin when
// the command asks for it, writes the command's output to stdout and
// stderr, and returns its exit code. Errors wrapping ErrNoServer or
// ErrDeclined mean nothing ran. Cancelling ctx closes the connection,
// which cancels the command on the server.
func Forward(ctx context.Context, socket string, req Request, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	// The server is told the environment and input: it must be this
	// user's, at a socket no one else could have put there (a symlink
	// in a cloned project, a socket in a shared directory).
	if err := checkSocket(socket); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoServer, err)
	}
	c, err := dial(socket)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoServer, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	req.Version = Version
	payload := req.encode()
	if len(payload) > maxRequest {
		return 0, fmt.Errorf("%w: the request is %d bytes (at most %d)", ErrDeclined, len(payload), maxRequest)
	}
	if err := writeFrame(c, frameRequest, payload); err != nil {
		// A server that accepted and went away before reading: nothing
		// ran.
		return 0, fmt.Errorf("%w: %w", ErrNoServer, err)
	}

	r := bufio.NewReaderSize(c, chunk+5)
	var (
		inOnce sync.Once
		inErr  = make(chan error, 1)
	)
	started := false
	for {
		typ, payload, err := readFrame(r, maxData)
		if err != nil {
			if !started {
				// Closed before the command started (a server
				// shutting down as we connected): nothing ran.
				return 0, fmt.Errorf("%w: closed before the command started: %w", ErrNoServer, err)
			}
			if ctx.Err() != nil {
				return 0, fmt.Errorf("%w: %w", ErrLost, ctx.Err())
			}
			return 0, fmt.Errorf("%w: %w", ErrLost, err)
		}
		if !started && typ != frameStarted && typ != frameDecline {
			return 0, fmt.Errorf("%w: a %q frame before the command started", ErrProtocol, typ)
		}
		switch typ {
		case frameStarted:
			if started {
				return 0, fmt.Errorf("%w: a second start frame", ErrProtocol)
			}
			started = true
		case frameStdout:
			if _, err := stdout.Write(payload); err != nil {
				return 0, err
			}
		case frameStderr:
			if _, err := stderr.Write(payload); err != nil {
				return 0, err
			}
		case frameNeedIn:
			inOnce.Do(func() { go func() { inErr <- sendInput(c, stdin) }() })
		case frameExit:
			return parseExit(payload)
		case frameDecline:
			if started {
				return 0, fmt.Errorf("%w: a decline after the start", ErrProtocol)
			}
			return 0, fmt.Errorf("%w: %s", ErrDeclined, payload)
		default:
			return 0, fmt.Errorf("%w: a %q frame from the server", ErrProtocol, typ)
		}
	}
}

// checkSocket refuses a socket that is a symlink, or not this user's.
func checkSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s is not a socket", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user (%d)", path, st.Uid, os.Getuid())
	}
	return nil
}

// sendInput relays stdin to the server as data frames and an end frame.
// It is the only writer of the connection once the request is sent.
func sendInput(w io.Writer, stdin io.Reader) error {
	if stdin == nil {
		return writeFrame(w, frameStdinEnd, nil)
	}
	buf := make([]byte, chunk)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if werr := writeFrame(w, frameStdin, buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return writeFrame(w, frameStdinEnd, nil)
		}
		if err != nil {
			// Sent as the end of input: the command sees a short
			// input, and reports what it makes of it.
			writeFrame(w, frameStdinEnd, nil)
			return err
		}
	}
}
