package loop

import "sync/atomic"

// JobQueue carries deferred requests from the loop to handler threads. The
// loop pushes without blocking; a handler thread takes with Take, which
// sleeps on a futex when the queue is empty (parking, park_linux.go says
// why not the Go scheduler). A push wakes a taker only when one sleeps, so
// a busy pool costs the loop no syscall per job (DESIGN.md, "Handoff").
type JobQueue struct {
	jobs    ring[*Job]
	parking parking
	closed  atomic.Bool
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
	q.parking.wake(1)
	return true
}

// Take returns the next job, blocking until there is one. It returns nil
// once the queue is closed and empty.
func (q *JobQueue) Take() *Job {
	for {
		if j, ok := q.jobs.pop(); ok {
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
			return j
		}
		if q.closed.Load() {
			q.parking.cancel()
			return nil
		}
		q.parking.sleep(seen)
	}
}

// TryTake returns the next job without waiting, or nil when none is
// queued: a handler thread that holds its interpreter lock can take every
// ready job before it parks, so one wake carries a batch (DESIGN.md, "Go
// runtime": the handoff cost per job falls from 9.8 to 0.63 µs from one
// job per wake to sixteen).
func (q *JobQueue) TryTake() *Job {
	if j, ok := q.jobs.pop(); ok {
		return j
	}
	return nil
}

// Close makes Take return nil to every taker once the queue is empty.
func (q *JobQueue) Close() {
	q.closed.Store(true)
	q.parking.wake(1 << 30)
}
