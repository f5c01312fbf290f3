package loop

import "time"

// bodyRateWindow is the span over which a request body's rate is
// measured against Config.BodyMinRate: long enough for a client's
// pauses, short enough that a trickle holds a handler thread briefly.
const bodyRateWindow = 5 * time.Second

// checkBodyRate answers 408 to a request whose body arrives slower than
// Config.BodyMinRate (a slow-body attack sends a byte every few seconds,
// never stalling long enough for BodyTimeout). Only time the loop spends
// waiting for the client counts: a handler behind on its inbox is not
// the client's fault. A body of n bytes therefore has about
// n/BodyMinRate + bodyRateWindow to arrive, a total deadline that grows
// with the body.
func (l *Loop) checkBodyRate(s *slot) {
	if !l.waitingOnBody(s) {
		s.rateSince = 0
		return
	}
	if s.rateSince == 0 {
		s.rateSince, s.rateFrom = l.now, s.bodyRead
		return
	}
	elapsed := l.now - s.rateSince
	if elapsed < int64(bodyRateWindow) {
		return
	}
	if (s.bodyRead-s.rateFrom)*int64(time.Second) >= l.cfg.BodyMinRate*elapsed {
		s.rateSince, s.rateFrom = l.now, s.bodyRead
		return
	}
	if n, ok := l.slowBodies.allow(l.now); ok {
		l.cfg.Logf("m0serve: a request body arrived slower than --body-min-rate (%d bytes/s): 408 (%d since the last report)", l.cfg.BodyMinRate, n)
	}
	s.rateSince = 0
	l.touch(s)
	if j := s.job; j != nil {
		j.mu.Lock()
		l.refuseBody(s, j, 408, "request body too slow", ErrBodyTooSlow)
		return
	}
	// The response is done and the body was being discarded.
	l.closeSlot(s)
}

// waitingOnBody reports whether the loop is waiting for request body
// bytes the client has not sent.
func (l *Loop) waitingOnBody(s *slot) bool {
	if s.deadlineKind != deadlineBody || len(s.input()) != 0 {
		return false
	}
	switch s.state {
	case stateDiscard:
		return true
	case stateJob:
		j := s.job
		j.mu.Lock()
		waiting := !j.bodyDone && len(j.inbox) < inboxLimit && (!j.expect100 || j.wantBody)
		j.mu.Unlock()
		return waiting
	}
	return false
}
