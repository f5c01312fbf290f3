package pybridge

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/m0serve/m0serve/internal/threadsched"
)

// Spare handler threads: --threads N means N threads running the app at
// once, and a thread blocked on its client (a request body that has not
// arrived, a response the client does not read) is not running it. Like
// Go's scheduler handing a P on from a thread blocked in a syscall, such
// a thread lends its permit to run the app to a spare thread while it
// waits, and takes a permit back when the wait ends, waiting for one if
// every permit is in use. One client that never reads then holds one
// thread, not the server.
//
// The N handler threads hold their permits for life, except while
// waiting on a client; spares hold one only while serving a job and park
// without one. A permit left free while its lender waits goes to a spare
// when a job is ready: at once if one is queued, or when the source next
// has one (NotifySource's notification, which WSGI's source does not use
// otherwise).

// spares is a Handlers' pool of spare threads and the permits lent to
// them; its zero value lends nothing (EnableClientWaits).
type spares struct {
	h   *Handlers
	src NotifySource
	max int // spare threads at most; 0: none (client waits keep their permit)

	mu     sync.Mutex
	free   int // permits held by no thread
	alive  int // spare threads started and not ended
	idle   int // spares parked without a permit
	grants int // permits handed to parked spares, not yet taken
	// reclaims: threads whose client wait ended, waiting for a permit;
	// returned: permits handed to them, not yet taken.
	reclaims, returned int
	// reclaiming is reclaims, for handler threads to look at without the
	// lock.
	reclaiming atomic.Int32
	// handed: jobs a handler thread had taken in its batch when it began
	// waiting on its client, for spares to serve first.
	handed []*Job
	// pending is len(handed), for handler threads to look at without
	// the lock.
	pending     atomic.Int32
	closed      bool
	spareCond   sync.Cond // parked spares: a grant, or closed
	reclaimCond sync.Cond // reclaimers: a permit returned
}

// SetMaxClientWaits lets up to max spare threads serve jobs while the
// handler threads StartHandlers starts next wait on their clients
// (BeginClientWait, EndClientWait); 0, the default, none. Their source
// must then be a NotifySource no one else arms.
func (ip *Interpreter) SetMaxClientWaits(max int) {
	ip.mu.Lock()
	ip.maxClientWaits = max
	ip.mu.Unlock()
}

func (ip *Interpreter) clientWaits() int {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	return ip.maxClientWaits
}

// enable readies the pool before its handler threads start.
func (s *spares) enable(h *Handlers, max int) error {
	if max < 1 {
		return nil
	}
	src, ok := h.src.(NotifySource)
	if !ok {
		return fmt.Errorf("pybridge: spare threads need a source that notifies, not %T", h.src)
	}
	s.h, s.src, s.max = h, src, max
	s.spareCond.L = &s.mu
	s.reclaimCond.L = &s.mu
	src.SetNotify(s.jobReady)
	return nil
}

// BeginClientWait is called on the thread serving j, the GIL released,
// when it is about to block on j's client (the server's loop.ClientWaiter
// for j): its permit goes to a reclaiming thread or a spare, and the jobs
// it took with j and has not served yet go to spares, not to wait behind
// the client.
func (h *Handlers) BeginClientWait(j *Job) {
	s := &h.spares
	if s.max == 0 {
		return
	}
	s.mu.Lock()
	if t := j.thread; t != nil {
		// t is the calling thread: its batch is its own to change.
		for i, queued := range t.batch {
			if queued != nil {
				s.handed = append(s.handed, queued)
				t.batch[i] = nil
			}
		}
		s.pending.Store(int32(len(s.handed)))
	}
	s.give()
	s.mu.Unlock()
}

// EndClientWait implements loop.ClientWaiter: the wait is over, and the
// thread goes on once it holds a permit again: a free one, or the next a
// spare gives up when its job ends.
func (h *Handlers) EndClientWait() {
	s := &h.spares
	if s.max == 0 {
		return
	}
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return
	}
	s.reclaims++
	s.reclaiming.Store(int32(s.reclaims))
	for s.returned == 0 {
		s.reclaimCond.Wait()
	}
	s.returned--
	s.mu.Unlock()
}

// parking gives up an idle handler thread's permit: it runs nothing
// while it waits for a job. It goes to a thread waiting for one, else it
// is free (not lent to a spare: the parked thread wakes for the next job
// itself). The GIL is released.
func (s *spares) parking() {
	if s.max == 0 {
		return
	}
	s.mu.Lock()
	if s.reclaims > 0 {
		s.give()
	} else {
		s.free++
	}
	s.mu.Unlock()
}

// unparking takes a permit for a handler thread woken for a job, waiting
// for one if every permit is in use. The GIL is released.
func (s *spares) unparking() {
	if s.max > 0 {
		s.h.EndClientWait()
	}
}

// yield hands a handler thread's permit to a thread waiting for one to
// go on with its request, then waits for a permit again, the GIL
// released. The handler threads look between batches: a request under
// way goes before one not started.
func (h *Handlers) yield(t *thread) {
	s := &h.spares
	if s.reclaiming.Load() == 0 {
		return
	}
	t.release()
	s.mu.Lock()
	if s.reclaims > 0 {
		s.give()
		s.mu.Unlock()
		h.EndClientWait()
	} else {
		s.mu.Unlock()
	}
	t.acquire()
}

// give hands the caller's permit on: to a thread ending its client wait
// first (its request is under way), else it is free, and a spare takes
// it if a job is ready. s.mu is held.
func (s *spares) give() {
	if s.reclaims > 0 {
		s.reclaims--
		s.reclaiming.Store(int32(s.reclaims))
		s.returned++
		s.reclaimCond.Signal()
		return
	}
	s.free++
	s.lendIfWanted()
}

// lendIfWanted hands a free permit to a spare if a job is ready; if none
// is, the source is armed and jobReady comes back when one is. s.mu is
// held.
func (s *spares) lendIfWanted() {
	if s.free == 0 || len(s.handed) == 0 && (s.closed || s.src.Arm() || s.src.Closed()) {
		return
	}
	switch {
	case s.idle > 0:
		s.free--
		s.idle--
		s.grants++
		s.spareCond.Signal()
	case s.alive < s.max:
		s.free--
		s.alive++
		s.h.wg.Add(1) // a handler thread, counted, is running: Wait has not returned
		go s.h.spare()
	}
	// Otherwise every spare is busy: the first to end its job takes the
	// permit (spare's idle).
}

// jobReady is the source's notification: a job was queued (or the
// source closed) after an Arm. It runs on the loop thread and only takes
// s.mu, held briefly by everyone.
func (s *spares) jobReady() {
	s.mu.Lock()
	s.lendIfWanted()
	s.mu.Unlock()
}

// close ends the parked spares; the handler threads call it when the
// source is closed and drained.
func (s *spares) close() {
	if s.max == 0 {
		return
	}
	s.mu.Lock()
	s.closed = true
	s.spareCond.Broadcast()
	s.mu.Unlock()
}

// park gives up the spare's permit and waits for another. It reports
// false when the spare should end (its handlers are closing). s.mu is
// held.
func (s *spares) park() bool {
	s.idle++
	s.give()
	for s.grants == 0 {
		if s.closed && len(s.handed) == 0 {
			s.idle--
			s.alive--
			return false
		}
		s.spareCond.Wait()
	}
	s.grants--
	return true
}

// take returns a handed job, else one from the source, else nil. More
// jobs may be ready than one notification said: another free permit goes
// to another spare.
func (s *spares) take(jobs []*Job) *Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var j *Job
	if n := len(s.handed); n > 0 {
		j = s.handed[0]
		copy(s.handed, s.handed[1:])
		s.handed[n-1] = nil
		s.handed = s.handed[:n-1]
		s.pending.Store(int32(n - 1))
	} else if s.h.src.TryTake(jobs) > 0 {
		j = jobs[0]
		jobs[0] = nil
	}
	if j != nil {
		s.lendIfWanted()
	}
	return j
}

// takeHanded moves handed jobs into dst for a handler thread: when every
// spare is busy, a thread done with its own request serves them.
func (s *spares) takeHanded(dst []*Job) int {
	if s.pending.Load() == 0 {
		return 0
	}
	s.mu.Lock()
	n := copy(dst, s.handed)
	k := copy(s.handed, s.handed[n:])
	clear(s.handed[k:])
	s.handed = s.handed[:k]
	s.pending.Store(int32(k))
	s.mu.Unlock()
	return n
}

// spare is a spare thread's life: it starts holding a permit, serves one
// job at a time while it holds one, and parks between.
func (h *Handlers) spare() {
	defer h.wg.Done()
	runtime.LockOSThread()
	defer threadsched.Unlock() // attach set SCHED_BATCH
	s := &h.spares
	t, err := attach()
	if err != nil {
		if f := logf.Load(); f != nil {
			(*f)("m0serve: error: starting a spare handler thread: %v", err)
		}
		s.mu.Lock()
		s.alive--
		s.give()
		s.mu.Unlock()
		return
	}
	jobs := make([]*Job, 1)
	for {
		// One job at a time: a job taken is served by this thread, and a
		// reclaimer waits for its permit only until that job ends.
		if j := s.take(jobs); j != nil {
			t.serve(j, partFull)
			h.done.Complete(j)
			if s.reclaiming.Load() == 0 {
				continue
			}
		}
		t.release()
		s.mu.Lock()
		ok := s.park()
		s.mu.Unlock()
		t.acquire()
		if !ok {
			break
		}
	}
	t.detach()
}
