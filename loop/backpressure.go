package loop

// RecvCanceler is an optional Backend extension for backends whose
// receives stay armed (multishot receive on io_uring). Without it the
// loop cannot stop such a receive short of closing the socket, so bytes a
// slow handler has not taken yet pile up in the slot's buffer; with it
// the loop disarms the receive past recvHighWater and queues a new one
// once the handler has caught up.
type RecvCanceler interface {
	// CancelRecv disarms the receive pending on fd for slot and gen. The
	// receive then completes with More false: -ECANCELED, or bytes
	// already on their way.
	CancelRecv(fd int, slot, gen uint32)
}

// recvHighWater is how many received bytes may wait in a slot for its
// handler before the loop pauses an armed receive.
const recvHighWater = 256 << 10

// pauseRecvIfFull disarms a multishot receive whose slot holds more than
// recvHighWater unconsumed bytes.
func (l *Loop) pauseRecvIfFull(s *slot) {
	if !s.recvPending || s.recvPausing || s.recvEnd-s.recvStart <= recvHighWater {
		return
	}
	if canceler, ok := l.backend.(RecvCanceler); ok {
		s.recvPausing = true
		canceler.CancelRecv(s.fd, s.index, s.gen)
	}
}

// overloaded reports whether a request arriving now is beyond
// LimitConcurrency: more connections with a request under way, or as
// many deferred requests in flight (uvicorn's --limit-concurrency, less
// its flaw: uvicorn counts idle connections, so ten that never send a
// request refuse every real one). The caller refuses it, so a yes is
// counted in Stats and logged at most once per logInterval.
func (l *Loop) overloaded() bool {
	limit := l.cfg.LimitConcurrency
	if limit > 0 && (l.busy > limit || l.jobsOut >= limit) {
		l.cfg.Stats.overloaded()
		if n, ok := l.overload.allow(l.now); ok {
			l.cfg.Logf("m0serve: %d connections with a request under way, %d requests in flight: beyond --limit-concurrency %d, answered 503 (%d times since the last report)",
				l.busy, l.jobsOut, limit, n)
		}
		return true
	}
	return false
}

// setBusy counts s among the connections with a request under way.
func (l *Loop) setBusy(s *slot) {
	if !s.busy {
		s.busy = true
		l.busy++
	}
}

// setIdle takes s out of that count: it waits for a request with nothing
// of one received, or is gone.
func (l *Loop) setIdle(s *slot) {
	if s.busy {
		s.busy = false
		l.busy--
	}
}
