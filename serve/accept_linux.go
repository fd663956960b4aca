package serve

import "syscall"

// acceptFD accepts a connection (EAGAIN: none yet).
func acceptFD(fd int) (int, error) {
	for {
		nfd, _, err := syscall.Accept4(fd, syscall.SOCK_CLOEXEC)
		if err == syscall.EINTR || err == syscall.ECONNABORTED {
			continue
		}
		return nfd, err
	}
}
