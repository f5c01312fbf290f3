// Package threadsched is how the server's own locked threads (the loop
// thread, the Python handler threads) get along with the OS scheduler
// and Go's.
package threadsched

import (
	"os"
	"runtime"
)

// Batch puts the calling OS thread under SCHED_BATCH where the system
// has it (Linux), unless M0_SCHED_NORMAL=1 asks to keep the default
// policy (for measuring the difference). Call it on a locked thread.
//
// Why: a worker's threads share a core, and each wakes the others (the
// loop a handler with jobs, a handler the loop with responses). Under the
// default policy the woken thread preempts the waker at once, so an ASGI
// executor finishing a batch of tasks handed the core to the loop after
// every response, and the loop sent one response per wake. SCHED_BATCH
// threads do not preempt on wake-up: each runs until it blocks or its
// slice ends, and the other finds a batch waiting: FastAPI's CPU per
// request fell by a sixth, bare apps' did not move (bench/README, "Figures behind the comments"). It changes nothing
// between threads on different cores, and our threads waking no longer
// preempt other processes either.
func Batch() error {
	if os.Getenv("M0_SCHED_NORMAL") == "1" {
		return nil
	}
	return setBatch()
}

// Unlock hands a locked thread back to Go's pool (runtime.UnlockOSThread)
// with the default policy restored, so no other goroutine inherits the
// SCHED_BATCH that Batch set. Where restoring fails, the thread stays
// locked: Go ends a thread whose goroutine exits locked. Defer it in
// place of runtime.UnlockOSThread on a thread that called Batch.
func Unlock() {
	if setNormal() == nil {
		runtime.UnlockOSThread()
	}
}

// Yielder passes a locked goroutine through the Go scheduler once per
// yieldInterval of its activity; the zero value is ready.
//
// Why: Go's sysmon preempts a goroutine that has not been rescheduled for
// 10 ms, and when that goroutine is in a syscall or a cgo call it takes
// its P instead, on every sysmon cycle from then on (Go 1.26 retake: the
// check that would spare a P with idle Ps beside it uses a syscall start
// time that a goroutine never rescheduled stops updating). Our locked
// goroutines are never rescheduled: the loop lives in io_uring_enter,
// a handler in its futex and cgo calls, the ASGI executor in one cgo call
// for its whole life. So sysmon kept polling every 20 µs on the server's
// own core and handed the P off each time, and the thread took one back
// (futex wakes) at its next syscall exit or callback, a large part of
// the server's CPU per request (bench/README, "Figures behind the comments"). A yield costs a P hand-off every
// 5 ms.
type Yielder struct {
	last int64
}

// yieldInterval is half of sysmon's 10 ms (runtime.forcePreemptNS).
const yieldInterval = 5e6

// Maybe yields when yieldInterval has passed since the last yield; now is
// the caller's clock in nanoseconds.
func (y *Yielder) Maybe(now int64) {
	if now-y.last < yieldInterval {
		return
	}
	y.last = now
	runtime.Gosched()
}
