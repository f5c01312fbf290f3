package loop

// The timeouts of an HTTP/2 connection's streams, checked by the
// once-a-second tick as HTTP/1.1's are: a stream's job is to an HTTP/2
// connection what s.job is to an HTTP/1.1 one, and the connection's own
// deadlines (header, idle) are serveHTTP2's.

// tickHTTP2 applies --send-timeout to a client that keeps a window shut
// on a response the server has for it (the issue's "zero window held
// forever": the handler's Write would wait for good), --body-timeout to
// a stream whose handler waits for body the client does not send, and
// --request-timeout to a job whose handler began no response.
func (l *Loop) tickHTTP2(s *slot) {
	hc := s.h2
	if !hc.conn.Blocked() {
		hc.progress = l.now
	} else if l.now-hc.progress >= int64(l.cfg.SendTimeout) {
		if n, ok := l.sendTimeouts.allow(l.now); ok {
			l.cfg.Logf("m0serve: an HTTP/2 client kept its flow-control window shut for --send-timeout (%v): connection closed (%d since the last report)", l.cfg.SendTimeout, n)
		}
		l.closeSlot(s)
		return
	}
	l.tickStreamWebSockets(hc)
	hc.expired = hc.expired[:0]
	for _, j := range hc.jobs {
		j.mu.Lock()
		waiting := !j.bodyDone && !j.detached && (j.wantBody || j.buffering) && j.inboxRead == len(j.inbox)
		stalled := waiting && l.now-j.h2BodyAt >= int64(l.cfg.BodyTimeout)
		begun := j.headPosted || j.headWritten || j.finished
		late := l.cfg.RequestTimeout > 0 && !begun && !j.detached && l.now-j.Arrived >= int64(l.cfg.RequestTimeout)
		j.mu.Unlock()
		if stalled || late {
			hc.expired = append(hc.expired, j)
		}
	}
	for _, j := range hc.expired {
		if j.h2 != hc {
			continue // released meanwhile
		}
		j.mu.Lock()
		if !j.bodyDone && j.inboxRead == len(j.inbox) && l.now-j.h2BodyAt >= int64(l.cfg.BodyTimeout) {
			l.refuseStreamBody(hc, j, 408, "request body read timeout", ErrAborted)
			continue
		}
		j.mu.Unlock()
		if l.cfg.OnRequestTimeout != nil {
			l.cfg.OnRequestTimeout(j)
		}
		j.mu.Lock()
		l.refuseStreamBody(hc, j, 504, "request timeout", ErrAborted)
	}
	clear(hc.expired)
	if len(hc.expired) > 0 {
		l.advance(s)
		l.touch(s)
	}
}
