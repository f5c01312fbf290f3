//go:build !linux

package workerproto

import "syscall"

// MasterGoneSignal: these kernels have no death signal; a worker learns
// that its master is gone from the end of its control socket alone.
const MasterGoneSignal = syscall.Signal(0)
