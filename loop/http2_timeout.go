package loop

// The timeouts of an HTTP/2 connection's streams, checked by the
// once-a-second tick as HTTP/1.1's are: a stream's job is to an HTTP/2
// connection what s.job is to an HTTP/1.1 one, and the connection's own
// deadlines (header, idle) are serveHTTP2's.

// tickHTTP2 cuts off the streams answered while their request body was
// still coming once that body stops for --body-timeout (RST_STREAM
// NO_ERROR, RFC 9113 §8.1), so that a connection whose client goes
// silent is idle and meets --keepalive-timeout. It applies --send-timeout to a client that keeps a window shut
// on a response the server has for it (the handler's Write would wait
// for good): a stream's own window shut that long resets that stream,
// and its job ends, while the others go on; the connection's window,
// which every stream shares, shut that long closes the connection. Then
// --body-timeout to a stream whose handler waits for body the client
// does not send, and --request-timeout to a job whose handler began no
// response.
func (l *Loop) tickHTTP2(s *slot) {
	hc := s.h2
	if !hc.conn.WindowShut() {
		hc.progress = l.now
	} else if l.now-hc.progress >= int64(l.cfg.SendTimeout) {
		if n, ok := l.sendTimeouts.allow(l.now); ok {
			l.cfg.Logf("m0serve: an HTTP/2 client kept its connection's flow-control window shut for --send-timeout (%v): connection closed (%d since the last report)", l.cfg.SendTimeout, n)
		}
		l.closeSlot(s)
		return
	}
	l.tickStreamWebSockets(hc)
	cut := l.streamWebSocketSendTimeouts(hc)
	cut = l.streamHoldSendTimeouts(hc) || cut
	if l.now-hc.swept >= int64(l.cfg.BodyTimeout) {
		hc.swept = l.now
		cut = hc.conn.ExpireLingering() || cut
	}
	hc.expired = hc.expired[:0]
	for _, j := range hc.jobs {
		j.mu.Lock()
		shut := j.stream != nil && j.stream.WindowShut() && !j.detached
		if !shut {
			j.h2SendAt = l.now
		}
		held := shut && l.now-j.h2SendAt >= int64(l.cfg.SendTimeout)
		stalled := l.bodyStalled(j)
		begun := j.headPosted || j.headWritten || j.finished
		late := l.cfg.RequestTimeout > 0 && !begun && !j.detached && l.now-j.Arrived >= int64(l.cfg.RequestTimeout)
		j.mu.Unlock()
		if held || stalled || late {
			hc.expired = append(hc.expired, j)
		}
	}
	for _, j := range hc.expired {
		if j.h2 != hc {
			continue // released meanwhile
		}
		j.mu.Lock()
		if j.stream.WindowShut() && l.now-j.h2SendAt >= int64(l.cfg.SendTimeout) {
			j.mu.Unlock()
			if n, ok := l.sendTimeouts.allow(l.now); ok {
				l.cfg.Logf("m0serve: an HTTP/2 client kept a stream's flow-control window shut for --send-timeout (%v): stream reset (%d since the last report)", l.cfg.SendTimeout, n)
			}
			// The codec's Reset detaches the job (ErrAborted): its
			// handler's writes fail, and the stream is given back once
			// it is done.
			hc.conn.Cancel(j.stream)
			continue
		}
		if l.bodyStalled(j) {
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
	if len(hc.expired) > 0 || cut {
		clear(hc.expired)
		l.advance(s)
		l.touch(s)
	}
}

// bodyStalled says a stream job waits for body the client has not sent
// for --body-timeout: its handler is reading and has read all there is,
// or the body is being gathered before the job is queued (buffering,
// with what came so far in the inbox). Called with j.mu held.
func (l *Loop) bodyStalled(j *Job) bool {
	waiting := j.buffering || j.wantBody && j.inboxRead == len(j.inbox)
	return waiting && !j.bodyDone && !j.detached && l.now-j.h2BodyAt >= int64(l.cfg.BodyTimeout)
}

// streamWebSocketSendTimeouts resets the WebSocket streams whose own
// window the client has held shut for --send-timeout (the WebSocket ends
// with 1006, as for any reset), and reports whether it reset any.
func (l *Loop) streamWebSocketSendTimeouts(hc *h2conn) bool {
	shut := hc.wsShut[:0]
	for _, c := range hc.sockets {
		switch {
		case c.stream.done || !c.stream.st.WindowShut():
			c.stream.sendAt = l.now
		case l.now-c.stream.sendAt >= int64(l.cfg.SendTimeout):
			shut = append(shut, c)
		}
	}
	for _, c := range shut {
		if n, ok := l.sendTimeouts.allow(l.now); ok {
			l.cfg.Logf("m0serve: an HTTP/2 client kept a WebSocket stream's flow-control window shut for --send-timeout (%v): stream reset (%d since the last report)", l.cfg.SendTimeout, n)
		}
		if !c.stream.done {
			hc.conn.Cancel(c.stream.st)
		}
	}
	clear(shut)
	hc.wsShut = shut[:0]
	return len(shut) > 0
}
