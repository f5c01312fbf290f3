package server

import (
	"sync"
	"time"

	"github.com/m0serve/m0serve/loop"
)

// parked holds connections a full worker accepted while no sibling had a
// handler free. Kept by the loop, such a connection would wait for this
// worker's threads, and if the request holding them waits on it (a view
// calling its own server) it would wait for ever; the board may also say
// a sibling is full a moment after its thread has handed its response to
// its loop. So it waits here, unread, for whichever comes first: a
// sibling with a handler free (passed there) or this worker with one
// (given back to the loop). Polled every parkPoll while any waits; a
// worker that left the board (draining) gives them to a sibling or its
// loop at once.
type parked struct {
	mu      sync.Mutex
	fds     []int
	polling bool
}

const parkPoll = time.Millisecond

// maxParked bounds what waits here, unread: past it, under an overload
// of every worker, a new connection goes to the loop as before the
// handoff (it queues behind this worker's requests).
const maxParked = 1024

// park keeps fd until a handler is free here or at a sibling.
func (h *handoff) park(fd int) {
	h.parked.mu.Lock()
	if len(h.parked.fds) >= maxParked {
		h.parked.mu.Unlock()
		h.loop.Adopt(fd)
		return
	}
	h.parked.fds = append(h.parked.fds, fd)
	start := !h.parked.polling
	h.parked.polling = true
	h.parked.mu.Unlock()
	if start {
		go h.pollParked(h.loop)
	}
}

func (h *handoff) pollParked(l *loop.Loop) {
	for {
		time.Sleep(parkPoll)
		h.parked.mu.Lock()
		fds := h.parked.fds
		h.parked.fds = nil
		h.parked.mu.Unlock()
		var left []int
		for i, fd := range fds {
			switch {
			case h.left.Load():
				// Draining: a sibling serves it, or this loop's drain
				// does (it is gentle) while it runs.
				if !h.passToFree(fd) {
					l.Adopt(fd)
				}
			case h.entry.Free():
				l.Adopt(fd)
			case h.passToFree(fd):
			default:
				// Oldest first: the rest wait behind it.
				left = append(left, fds[i:]...)
			}
			if len(left) > 0 {
				break
			}
		}
		h.parked.mu.Lock()
		h.parked.fds = append(left, h.parked.fds...)
		if len(h.parked.fds) == 0 {
			h.parked.polling = false
			h.parked.mu.Unlock()
			return
		}
		h.parked.mu.Unlock()
	}
}
