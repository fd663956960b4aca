//go:build !linux

package serve

import "syscall"

// acceptFD accepts a connection (EAGAIN: none yet). Without accept4, the
// descriptor is marked close-on-exec just after, under ForkLock, as the
// net package does.
func acceptFD(fd int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
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
