//go:build !linux

package pybridge

import "time"

// The per-part instruments read thread CPU time on Linux only.
func gettid() int { return 0 }

func callingThreadCPU() time.Duration { return 0 }
