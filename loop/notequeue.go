package loop

import (
	"sync"
	"sync/atomic"
)

// noteQueue carries news from any thread to the loop: a ring for the
// usual case, and past it an overflow list that grows, so a push never
// waits. The loop thread is one of its producers (a driven ASGI app
// finishes jobs inside the Step, and a job's news is a note), and the
// loop thread is its only consumer: a bounded queue would have it spin on
// a ring only it drains. Nor does a ring's size follow from the
// connections: an HTTP/2 connection holds up to its concurrent streams'
// jobs, each with a note. Notes carry no order the loop relies on: each
// one says "look at this job (connection, handshake) now", and the loop
// reads the state it names when it takes it.
type noteQueue[T any] struct {
	ring ring[T]
	// spilled: the overflow holds notes; producers go straight to it
	// until the loop takes them, so a note is not stranded behind a ring
	// that refilled.
	spilled  atomic.Bool
	mu       sync.Mutex
	overflow []T
	// batch is the overflow as the loop took it, handed out from next;
	// the loop thread's alone, and swapped with overflow so that neither
	// allocates once grown.
	batch []T
	next  int
}

// init sizes the ring; the overflow starts empty.
func (q *noteQueue[T]) init(capacity int) { q.ring.init(capacity) }

// push queues v and never waits: when the ring is full, v goes to the
// overflow, which grows.
func (q *noteQueue[T]) push(v T) {
	if !q.spilled.Load() && q.ring.push(v) {
		return
	}
	q.mu.Lock()
	q.overflow = append(q.overflow, v)
	q.spilled.Store(true)
	q.mu.Unlock()
}

// pop takes a note, or reports false when none is queued. Loop thread
// only.
func (q *noteQueue[T]) pop() (T, bool) {
	if v, ok := q.ring.pop(); ok {
		return v, true
	}
	if q.next == len(q.batch) {
		if !q.spilled.Load() {
			var zero T
			return zero, false
		}
		q.mu.Lock()
		q.batch, q.overflow = q.overflow, q.batch[:0]
		q.spilled.Store(false)
		q.mu.Unlock()
		q.next = 0
	}
	var zero T
	v := q.batch[q.next]
	q.batch[q.next] = zero
	q.next++
	return v, true
}

// empty reports whether nothing was queued at the moment of the call.
// Loop thread only.
func (q *noteQueue[T]) empty() bool {
	return q.ring.empty() && q.next == len(q.batch) && !q.spilled.Load()
}
