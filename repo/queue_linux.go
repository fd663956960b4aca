package repo

import (
	"math/rand/v2"
	"os"
	"syscall"
)

// Open-file-description locks (Linux 3.15): owned by the open file, not
// the process, so two turns of one process exclude each other too.
const (
	fOFDSetlk  = 37
	fOFDSetlkw = 38
)

// lockRange locks byte off of f, exclusively or shared, waiting or not.
func lockRange(f *os.File, exclusive bool, off int64, wait bool) error {
	typ := int16(syscall.F_RDLCK)
	if exclusive {
		typ = syscall.F_WRLCK
	}
	cmd := fOFDSetlk
	if wait {
		cmd = fOFDSetlkw
	}
	lk := syscall.Flock_t{Type: typ, Whence: 0, Start: off, Len: 1}
	for {
		err := syscall.FcntlFlock(f.Fd(), cmd, &lk)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockRange(f *os.File, off int64) {
	lk := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: 0, Start: off, Len: 1}
	syscall.FcntlFlock(f.Fd(), fOFDSetlk, &lk)
}

func randNode() int64 { return rand.Int64N(1 << 60) }
