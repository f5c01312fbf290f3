// Package threadsched sets the scheduling policy of the server's own
// threads: the loop thread and the Python handler threads.
package threadsched

import "os"

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
// slice ends, and the other finds a batch waiting. Measured on FastAPI,
// 16 connections, server on one core: 78-82 -> 66-67 server CPU µs per
// request; bare WSGI and ASGI unchanged within noise. It changes nothing
// between threads on different cores, and our threads waking no longer
// preempt other processes either.
func Batch() error {
	if os.Getenv("M0_SCHED_NORMAL") == "1" {
		return nil
	}
	return setBatch()
}
