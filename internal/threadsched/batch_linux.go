package threadsched

import "golang.org/x/sys/unix"

// schedBatch is SCHED_BATCH (linux/sched.h, Linux 2.6.16); x/sys/unix
// does not name it.
const schedBatch = 3

func setBatch() error {
	// Pid 0 is the calling thread; sched_setattr is Linux 3.14. Lowering
	// to SCHED_BATCH needs no privilege.
	return unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: schedBatch}, 0)
}
