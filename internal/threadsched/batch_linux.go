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

// setNormal puts the calling thread back under SCHED_OTHER, keeping its
// nice value; an unprivileged thread may (sched(7), Linux 2.6.39).
func setNormal() error {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return err
	}
	if attr.Policy == 0 {
		return nil
	}
	attr.Policy = 0 // SCHED_OTHER
	return unix.SchedSetAttr(0, attr, 0)
}
