//go:build !linux

package threadsched

// setBatch: kqueue systems have no SCHED_BATCH; their threads keep the
// default policy.
func setBatch() error { return nil }

func setNormal() error { return nil }
