//go:build !linux

package repo

import (
	"errors"
	"os"
)

var errNoQueue = errors.New("no lock queue on this system")

// lockRange: without open-file-description locks there is no line;
// writers poll for the ref's lock.
func lockRange(f *os.File, exclusive bool, off int64, wait bool) error { return errNoQueue }

func unlockRange(f *os.File, off int64) {}

func randNode() int64 { return 0 }
