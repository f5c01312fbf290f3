package pybridge

import (
	"syscall"
	"time"
)

func gettid() int { return syscall.Gettid() }

// callingThreadCPU is the calling OS thread's CPU time (RUSAGE_THREAD).
func callingThreadCPU() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
