//go:build !linux

package serve

import "syscall"

// acceptFD waits for a connection on a blocking listening socket. Without
// accept4, the descriptor is marked close-on-exec just after: a process
// started in between would inherit it (holding ForkLock across a blocking
// accept would stall every exec meanwhile).
func acceptFD(fd int) (int, error) {
	for {
		nfd, _, err := syscall.Accept(fd)
		if err == syscall.EINTR || err == syscall.ECONNABORTED {
			continue
		}
		if err == nil {
			syscall.CloseOnExec(nfd)
		}
		return nfd, err
	}
}
