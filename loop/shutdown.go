package loop

import (
	"time"
)

// Shutdown asks the loop to drain: stop accepting, finish requests in
// flight, close idle connections, and return from Run once every
// connection is closed or grace has passed. Safe from any goroutine.
// A later call with a sooner deadline brings it forward (a second
// SIGTERM: stop now).
func (l *Loop) Shutdown(grace time.Duration) {
	now := time.Now().UnixNano()
	if l.timeNow != nil {
		now = l.timeNow()
	}
	deadline := now + int64(grace)
	for {
		current := l.shutdown.Load()
		if current != 0 && current <= deadline {
			return
		}
		if l.shutdown.CompareAndSwap(current, deadline) {
			break
		}
	}
	if l.started.Load() {
		l.wake()
	}
}

// Drain is Shutdown for a worker being replaced while its listening
// socket lives on in another process: stop accepting (what is queued in
// the socket stays there for the replacement), answer each keep-alive
// connection's next request with Connection: close instead of closing it
// idle (its client may be sending that request right now), accept what
// was already accepted, and return from Run once every connection is
// closed or grace has passed.
func (l *Loop) Drain(grace time.Duration) {
	l.gentle.Store(true)
	l.Shutdown(grace)
}

// closeGiveUp is how long past the shutdown deadline the loop waits for
// the backend to complete the closes it queued.
const closeGiveUp = time.Second

// drain runs every pass once a shutdown was requested: idle connections
// close now, busy ones after their response, everything at the deadline.
func (l *Loop) drain(deadline int64) {
	if !l.draining {
		l.draining = true
		l.gentleDrain = l.gentle.Load()
		l.stopAccept()
	}
	l.drainByNanos = deadline
	force := l.now >= l.drainByNanos
	for _, s := range l.slots[1:] {
		if s == nil || !s.open || s.closing {
			continue
		}
		if s.ws != nil && !force {
			l.wsGoingAway(s.ws)
			continue
		}
		if s.hold != nil {
			l.drainHold(s, force)
			continue
		}
		if s.h2 != nil && !force {
			l.drainHTTP2(s)
			continue
		}
		idle := s.state == stateHead && s.job == nil && !s.sending && len(s.send) == 0 && len(s.input()) == 0
		// Drain (gentle) closes nothing early: a response already on its
		// way may have said keep-alive, so a connection waits for its next
		// request (answered with Connection: close) or its idle timeout.
		switch {
		case force || idle && !l.gentleDrain:
			if !idle && s.job != nil {
				l.logCutOff(s.job)
			}
			l.closeSlot(s)
		case !l.gentleDrain:
			s.keepAlive = false
		}
	}
	if l.gentleDrain && l.acceptStops == 0 && !l.queueSwept && !force {
		l.queueSwept = true
		l.sweepAcceptQueue()
	}
	if force && l.now >= l.drainByNanos+int64(closeGiveUp) {
		// Closes the backend never completed: give up on them.
		l.stopped = true
	}
}

// logCutOff names a request whose handler had not finished when the
// shutdown deadline closed its connection: the operator sees which
// requests the graceful timeout cost.
func (l *Loop) logCutOff(j *Job) {
	req := &j.Request
	line := string(req.Bytes(req.Method)) + " " + string(req.Bytes(req.Target))
	l.cfg.Logf("m0serve: shutdown deadline: cut off %q from %v", line, j.RemoteAddr)
}
