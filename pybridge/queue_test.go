package pybridge

import "sync/atomic"

// Queue is the tests' JobSource (and NotifySource), standing in for the
// server's: a bounded channel, so Push blocks when it is full, the
// back-pressure the loop feels.
type Queue struct {
	jobs   chan *Job
	closed atomic.Bool
	notify func()
	armed  atomic.Bool
}

// NewQueue makes a queue holding up to capacity jobs.
func NewQueue(capacity int) *Queue {
	return &Queue{jobs: make(chan *Job, capacity)}
}

// Push hands a job over, blocking while the queue is full.
func (q *Queue) Push(j *Job) {
	q.jobs <- j
	q.fireNotify()
}

// TryPush hands a job over unless the queue is full.
func (q *Queue) TryPush(j *Job) bool {
	select {
	case q.jobs <- j:
		q.fireNotify()
		return true
	default:
		return false
	}
}

// Close ends the queue: handler threads finish what is queued, then end.
func (q *Queue) Close() {
	q.closed.Store(true)
	close(q.jobs)
	q.fireNotify()
}

// SetNotify implements NotifySource.
func (q *Queue) SetNotify(notify func()) { q.notify = notify }

// Arm implements NotifySource.
func (q *Queue) Arm() bool {
	q.armed.Store(true)
	if len(q.jobs) > 0 || q.closed.Load() {
		q.armed.CompareAndSwap(true, false)
		return false
	}
	return true
}

// Closed implements NotifySource.
func (q *Queue) Closed() bool { return q.closed.Load() }

func (q *Queue) fireNotify() {
	if q.notify != nil && q.armed.Load() && q.armed.CompareAndSwap(true, false) {
		q.notify()
	}
}

// TryTake implements JobSource.
func (q *Queue) TryTake(dst []*Job) int {
	n := 0
	for n < len(dst) {
		select {
		case j, ok := <-q.jobs:
			if !ok {
				return n
			}
			dst[n] = j
			n++
		default:
			return n
		}
	}
	return n
}

// Take implements JobSource.
func (q *Queue) Take(dst []*Job) int {
	if len(dst) == 0 {
		return 0
	}
	j, ok := <-q.jobs
	if !ok {
		return 0
	}
	dst[0] = j
	return 1 + q.TryTake(dst[1:])
}
