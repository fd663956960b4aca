package sqlstate

import "time"

// SetBusyTimeout sets how long a test waits for a locked index file, and
// returns the function that puts it back.
func SetBusyTimeout(d time.Duration) func() {
	old := busyTimeout
	busyTimeout = d
	return func() { busyTimeout = old }
}
