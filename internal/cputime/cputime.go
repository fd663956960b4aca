// Package cputime reports a benchmark's CPU time per operation (user and
// system, of the process and of the child processes it waited for), which
// other load on a shared machine stretches far less than wall time.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

func used() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// Start begins counting; the function it returns reports "cpu-ns/op".
// Call it right after b.ResetTimer and defer the report.
func Start(b *testing.B) func() {
	start := used()
	return func() {
		b.ReportMetric(float64(used()-start)/float64(b.N), "cpu-ns/op")
	}
}
