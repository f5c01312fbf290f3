package loop

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// pass is one turn of the loop: submit and wait in one backend call,
// handle the batch, then queue one send per slot with output.
func (l *Loop) pass() error {
	timeout := time.Duration(l.nextTick - l.now)
	if l.draining {
		// Wake at the drain deadline itself, not at the next tick: the
		// graceful budget is the operator's. Past it, the next wake is
		// when drain gives up on closes that never completed.
		wakeAt := l.drainByNanos
		if l.now >= wakeAt {
			wakeAt += int64(closeGiveUp)
		}
		timeout = min(timeout, time.Duration(wakeAt-l.now))
	}
	if l.stepDue != 0 {
		timeout = min(timeout, time.Duration(l.stepDue-l.now))
	}
	if l.acceptRetryAt != 0 {
		timeout = min(timeout, time.Duration(l.acceptRetryAt-l.now))
	}
	if timeout < 0 {
		timeout = 0
	}
	if timeout > 0 {
		l.parked.Store(true)
		// A note posted before the flag was up found it down and did not
		// wake us: look once more now that it is up.
		if !l.notes.empty() || !l.wsNotes.empty() || l.fileNotes && !l.tlsNotes.empty() || l.shutdown.Load() != 0 && !l.draining ||
			l.adopted.pending.Load() ||
			l.cfg.Stepper != nil && l.cfg.Stepper.Pending() || l.holdNews() {
			timeout = 0
		}
	}
	n, err := l.backend.Wait(l.completions[:], timeout)
	l.parked.Store(false)
	if err != nil && !errors.Is(err, syscall.EINTR) {
		return fmt.Errorf("loop: wait: %w", err)
	}
	l.clock()
	l.yielder.Maybe(l.now) // threadsched.Yielder says why
	l.passReceives = 0
	for i := 0; i < n; i++ {
		if l.completions[i].Op == OpRecv {
			l.passReceives++
		}
	}
	for i := 0; i < n; i++ {
		l.handle(&l.completions[i])
		l.completions[i].Data = nil
	}
	if l.adopted.pending.Load() {
		l.adoptPassed()
	}
	// Before the Step: a handshake that ended on its goroutine brings the
	// request its client sent with the last flight, and the Step must see
	// that job in this pass (after it, nothing wakes the loop until the
	// next tick).
	if l.fileNotes {
		l.drainTLSNotes()
	}
	if l.cfg.Stepper != nil {
		l.stepDue = l.cfg.Stepper.Step(l.now)
	}
	l.drainNotes()
	l.drainWebSocketNotes()
	l.serveHolds()
	l.pushHeldJobs()
	if l.acceptRetryAt != 0 && l.now >= l.acceptRetryAt {
		l.acceptRetryAt = 0
		l.resumeAccept()
	}
	if l.now >= l.nextTick {
		l.tick()
	}
	if deadline := l.shutdown.Load(); deadline != 0 {
		l.drain(deadline)
	}
	l.flush()
	if l.cfg.OnPassEnd != nil {
		l.cfg.OnPassEnd()
	}
	if st := l.cfg.Stats; st != nil {
		st.gauges(l.active, l.jobsOut)
	}
	// Last, with no job's lock held: a handler woken on this core may
	// preempt the loop at once, and finding a job's lock held by the
	// preempted loop it would park in the Go scheduler (a locked thread's
	// hand-off: two more switches and a futex pair).
	if l.cfg.Jobs != nil {
		l.cfg.Jobs.signal()
	}
	for _, q := range l.otherQueues {
		q.signal()
	}
	// Not before the stopped accept has ended: a connection it accepted
	// meanwhile is served (closed, in a Shutdown), not left in the backend.
	if l.draining && l.active == 0 && l.acceptStops == 0 && !l.adopted.pending.Load() {
		l.stopped = true
	}
	return nil
}

func (l *Loop) handle(c *Completion) {
	switch c.Op {
	case OpAccept:
		l.onAccept(c)
	case OpWake:
		// Notes are drained after every batch.
	case OpAcceptStopped:
		if l.acceptStops > 0 {
			l.acceptStops--
		}
	default:
		if c.Slot == 0 || int(c.Slot) >= len(l.slots) {
			return
		}
		s := l.slots[c.Slot]
		if s == nil || !s.open || s.gen != c.Gen {
			return // a completion for an earlier connection in this slot
		}
		switch c.Op {
		case OpRecv:
			l.onRecv(s, c)
		case OpSend:
			l.onSend(s, c)
		case OpClose:
			s.closed = true
			l.maybeFree(s)
		}
	}
}

// touch puts s on the list flushed at the end of the pass.
func (l *Loop) touch(s *slot) {
	if !s.touched {
		s.touched = true
		l.touched = append(l.touched, s)
	}
}

// flush queues, per touched slot, at most one send carrying every response
// it has ready, the receive it is waiting for, or its close.
func (l *Loop) flush() {
	for i, s := range l.touched {
		l.touched[i] = nil
		s.touched = false
		if !s.open || s.closing {
			continue
		}
		if s.tls != nil && !s.sending {
			l.sendSealed(s)
		} else if len(s.send) > 0 && !s.sending {
			s.sending = true
			l.sendQueued(s)
			l.backend.QueueSend(s.fd, s.index, s.gen, s.send)
		}
		if s.closeAfter && !s.sending && s.tls != nil && l.closeNotify(s) {
			continue // the close follows the alert's send
		}
		if s.closeAfter && !s.sending {
			if s.linger && !s.peerEOF {
				l.lingerClose(s)
			} else {
				l.closeSlot(s)
			}
			continue
		}
		if s.recvWanted && !s.recvPending && !s.peerEOF && !s.closeAfter {
			l.queueRecv(s)
		}
		// An HTTP/2 slot keeps its buffer, sized for a whole frame.
		if !s.recvOwnBuf && s.recv != nil && s.recvStart == s.recvEnd && s.provided == nil && s.h2 == nil {
			l.buffers.putRecv(s.recv)
			s.recv, s.recvStart, s.recvEnd = nil, 0, 0
		}
	}
	l.touched = l.touched[:0]
}
