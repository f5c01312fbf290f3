package loop

func (l *Loop) onSend(s *slot, c *Completion) {
	s.sending = false
	if s.tls != nil {
		s.tls.Sent() // its output buffer goes back to the record layer
	}
	if s.closing {
		l.maybeFree(s)
		return
	}
	if c.Res < 0 {
		// The client went away mid-response (EPIPE, ECONNRESET).
		l.closeSlot(s)
		return
	}
	s.send = s.send[:0]
	if s.ws != nil {
		l.wsSent(s)
	}
	if s.closeAfter {
		l.touch(s)
		return
	}
	l.advance(s)
	if len(s.send) == 0 && s.state == stateHead {
		l.buffers.putSend(s.send)
		s.send = nil
		if s.tls != nil {
			s.tls.Idle()
		}
	}
	l.touch(s)
}
