package loop

import "sync/atomic"

// JobQueue carries deferred requests from the loop to handler threads. The
// loop pushes without blocking; a handler thread takes with Take, which
// sleeps on a futex when the queue is empty (parking, park_linux.go says
// why not the Go scheduler), or, if it sleeps in an event loop of its own
// (the ASGI executor), arms a notification with Arm.
//
// The loop wakes sleepers once per pass, after every request of the pass
// is queued (signal), and only when one sleeps, so a busy pool costs the
// loop no syscall per job. Waking at the push
// instead let the woken thread, on the loop's own core, preempt the loop
// before it had parsed the rest of the pass: smaller batches and one more
// pair of context switches per wake.
type JobQueue struct {
	jobs    ring[*Job]
	parking parking
	closed  atomic.Bool
	// pushed counts jobs pushed since the last signal (loop thread only).
	pushed int
	// notify is called once per Arm, at the first signal or Close after
	// it; armed says one is owed.
	notify func()
	armed  atomic.Bool
}

// NewJobQueue returns a queue holding at most capacity jobs at once; a full
// queue makes the loop hold further jobs back (and stop reading from their
// connections) until handlers catch up.
func NewJobQueue(capacity int) *JobQueue {
	q := &JobQueue{}
	q.jobs.init(capacity)
	return q
}

// push hands j to a taker; false means the queue is full.
func (q *JobQueue) push(j *Job) bool {
	if !q.jobs.push(j) {
		return false
	}
	q.pushed++
	return true
}

// signal wakes takers for the jobs pushed since the last signal: up to
// that many parked ones, and the armed notification. The loop calls it
// once per pass.
func (q *JobQueue) signal() {
	if q.pushed == 0 {
		return
	}
	q.parking.wake(q.pushed)
	q.pushed = 0
	q.fireNotify()
}

func (q *JobQueue) fireNotify() {
	if q.notify != nil && q.armed.Load() && q.armed.CompareAndSwap(true, false) {
		q.notify()
	}
}

// SetNotify registers the queue's one taker that sleeps elsewhere than in
// Take: an event loop that watches a descriptor, which notify makes
// readable. Call it before the loop runs; it must not block.
func (q *JobQueue) SetNotify(notify func()) { q.notify = notify }

// Arm asks for one call of the notify function when a job is next queued
// or the queue closes. It returns false, arming nothing, when a job is
// ready (or the queue closed) already: take it now instead of sleeping.
func (q *JobQueue) Arm() bool {
	q.armed.Store(true)
	// As in Take: armed before the last look, so a concurrent push either
	// is seen here or sees the flag.
	if !q.jobs.empty() || q.closed.Load() {
		q.armed.CompareAndSwap(true, false)
		return false
	}
	return true
}

// Take returns the next job, blocking until there is one. It returns nil
// once the queue is closed and empty.
func (q *JobQueue) Take() *Job {
	for {
		if j, ok := q.jobs.pop(); ok {
			j.taken.Store(true)
			return j
		}
		if q.closed.Load() {
			return nil
		}
		// Count ourselves asleep before the last look, so a concurrent
		// push either is seen here or sees us and wakes us.
		seen := q.parking.prepare()
		if j, ok := q.jobs.pop(); ok {
			q.parking.cancel()
			j.taken.Store(true)
			return j
		}
		if q.closed.Load() {
			q.parking.cancel()
			return nil
		}
		q.parking.sleep(seen)
	}
}

// Wait blocks until a job is queued, without taking it, and reports
// false once the queue is closed and empty. A taker that must first get
// something else to run the job (a Python thread, the interpreter lock)
// waits here, gets it, then TryTakes: a job is never held by a taker
// that cannot run it yet while another could.
func (q *JobQueue) Wait() bool {
	for {
		if !q.jobs.empty() {
			return true
		}
		if q.closed.Load() {
			return false
		}
		seen := q.parking.prepare()
		if !q.jobs.empty() {
			q.parking.cancel()
			return true
		}
		if q.closed.Load() {
			q.parking.cancel()
			return false
		}
		q.parking.sleep(seen)
	}
}

// TryTake returns the next job without waiting, or nil when none is
// queued: a handler thread that holds its interpreter lock can take every
// ready job before it parks, so one wake carries a batch: the handoff's
// cost is per wake, not per job (bench/README, "Figures behind the comments").
func (q *JobQueue) TryTake() *Job {
	if j, ok := q.jobs.pop(); ok {
		j.taken.Store(true)
		return j
	}
	return nil
}

// Close makes Take return nil to every taker once the queue is empty.
func (q *JobQueue) Close() {
	q.closed.Store(true)
	q.parking.wake(1 << 30)
	q.fireNotify()
}

// Closed reports whether Close was called.
func (q *JobQueue) Closed() bool { return q.closed.Load() }
