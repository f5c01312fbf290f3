package loop

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// JobQueue carries deferred requests from the loop to handler threads. The
// loop pushes without blocking; a handler thread takes with Take, spinning
// briefly and then parking. A push signals only when some taker is parked,
// so a busy pool costs the loop no futex call per job (DESIGN.md,
// "Handoff").
type JobQueue struct {
	jobs   ring[*Job]
	mu     sync.Mutex
	cond   sync.Cond
	parked atomic.Int32
	closed atomic.Bool
}

// NewJobQueue returns a queue holding at most capacity jobs at once; a full
// queue makes the loop hold further jobs back (and stop reading from their
// connections) until handlers catch up.
func NewJobQueue(capacity int) *JobQueue {
	q := &JobQueue{}
	q.jobs.init(capacity)
	q.cond.L = &q.mu
	return q
}

// push hands j to a taker; false means the queue is full.
func (q *JobQueue) push(j *Job) bool {
	if !q.jobs.push(j) {
		return false
	}
	if q.parked.Load() > 0 {
		q.mu.Lock()
		q.cond.Signal()
		q.mu.Unlock()
	}
	return true
}

// takeSpins is how many times Take yields before parking: a handler that
// just finished a job often finds the next one already queued.
const takeSpins = 16

// Take returns the next job, blocking until there is one. It returns nil
// once the queue is closed and empty.
func (q *JobQueue) Take() *Job {
	for i := 0; i < takeSpins; i++ {
		if j, ok := q.jobs.pop(); ok {
			return j
		}
		if q.closed.Load() {
			return nil
		}
		runtime.Gosched()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	// Counting ourselves parked before the last look makes a concurrent
	// push either be seen here or see us and signal.
	q.parked.Add(1)
	defer q.parked.Add(-1)
	for {
		if j, ok := q.jobs.pop(); ok {
			return j
		}
		if q.closed.Load() {
			return nil
		}
		q.cond.Wait()
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
	q.mu.Lock()
	q.cond.Broadcast()
	q.mu.Unlock()
}
