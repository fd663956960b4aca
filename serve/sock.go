package serve

import (
	"os"
	"syscall"
)

// Unix sockets through the syscall package. The net package would do, but
// a program that links it is linked against the C library whenever cgo is
// available (for net's DNS resolver): go run and go install on a machine
// with a C compiler then make a dynamically linked program, which pays the
// dynamic loader and the C library's start in every run (about 1 ms here,
// more than the client's own work). A connection is an *os.File on a
// non-blocking descriptor, so reads and writes go through the runtime's
// poller, and deadlines and Close work as on a net.Conn.

// socket makes a Unix stream socket, close-on-exec.
func socket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	syscall.CloseOnExec(fd)
	return fd, nil
}

// dial connects to the socket at path, served by a process of this user
// (where the system tells).
func dial(path string) (*os.File, error) {
	fd, err := socket()
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "connect", Path: path, Err: err}
	}
	if err := checkPeer(fd); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return pollable(fd, path)
}

// pollable wraps a connected socket as an *os.File the poller serves.
func pollable(fd int, name string) (*os.File, error) {
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// listenFD binds and listens on a new socket at path.
func listenFD(path string) (int, error) {
	fd, err := socket()
	if err != nil {
		return -1, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return -1, &os.PathError{Op: "bind", Path: path, Err: err}
	}
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		syscall.Close(fd)
		return -1, os.NewSyscallError("listen", err)
	}
	return fd, nil
}
