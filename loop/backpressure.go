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
// LimitConcurrency: more connections open, or as many deferred requests
// in flight (uvicorn's --limit-concurrency). The caller refuses it, so a
// yes is counted in Stats.
func (l *Loop) overloaded() bool {
	limit := l.cfg.LimitConcurrency
	if limit > 0 && (l.active > limit || l.jobsOut >= limit) {
		l.cfg.Stats.overloaded()
		return true
	}
	return false
}
