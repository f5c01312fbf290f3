package workerproto

import "syscall"

// MasterGoneSignal is the signal the kernel sends a worker when its master
// dies (PR_SET_PDEATHSIG, set by the master). Not SIGTERM: the kernel
// sends it once for every thread of the master that the worker is handed
// to as the master's threads exit, so a worker would take the second as
// an operator's "exit now" and cut off what it was serving. A realtime
// signal that means only this can arrive any number of times: the first
// drains the worker, the others change nothing. SIGRTMIN+6 in glibc's
// numbering (glibc keeps 32 and 33, musl 32 to 34, for themselves).
const MasterGoneSignal = syscall.Signal(40)
