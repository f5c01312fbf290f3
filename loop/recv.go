package loop

import (
	"syscall"
)

func (l *Loop) queueRecv(s *slot) {
	s.recvWanted = false
	if s.recv == nil {
		s.recv = l.buffers.getRecv()
	}
	if s.recvStart == s.recvEnd {
		s.recvStart, s.recvEnd = 0, 0
	} else if s.recvEnd == len(s.recv) && s.recvStart > 0 {
		// Keep the parser's view: the same bytes from the request's start.
		n := copy(s.recv, s.recv[s.recvStart:s.recvEnd])
		s.recvStart, s.recvEnd = 0, n
	}
	if s.tls != nil && !s.lingering {
		if buf := s.tls.ReceiveBuffer(); buf != nil {
			s.recvPending = true
			l.backend.QueueRecv(s.fd, s.index, s.gen, buf)
		}
		return
	}
	if s.recvEnd == len(s.recv) {
		// Full of bytes nobody can take yet (a handler behind on its
		// body): wait until some are consumed.
		return
	}
	s.recvPending, s.recvOwnBuf = true, true
	l.backend.QueueRecv(s.fd, s.index, s.gen, s.recv[s.recvEnd:])
}

func (l *Loop) onRecv(s *slot, c *Completion) {
	pausing := s.recvPausing
	if !c.More {
		s.recvPending, s.recvOwnBuf, s.recvPausing = false, false, false
	} else if c.Provided {
		// An armed receive that delivers in backend buffers never writes
		// the one it was queued with: an idle connection need not hold it.
		s.recvOwnBuf = false
	}
	if s.closing {
		l.maybeFree(s)
		return
	}
	if s.lingering {
		switch {
		case c.Res == 0 || c.Res < 0 && c.Res != -int32(syscall.ENOBUFS):
			l.closeSlot(s)
		default:
			// Drop what the client still sends after the error response.
			s.recvStart, s.recvEnd = 0, 0
			l.touch(s)
		}
		return
	}
	switch {
	case c.Res == -int32(syscall.ENOBUFS):
		// The provided-buffer ring ran dry; ask again.
		s.recvWanted = true
		l.touch(s)
		return
	case c.Res == -int32(syscall.ECANCELED) && pausing:
		// Paused for back-pressure: a new receive is queued once the
		// handler has taken what is buffered (recvWanted).
		l.touch(s)
		return
	case c.Res < 0:
		l.closeSlot(s)
		return
	case c.Res == 0:
		s.peerEOF = true
		if s.tls != nil && !s.tls.Ready() {
			l.closeSlot(s)
			return
		}
		if s.job != nil {
			l.jobPeerEOF(s.job)
		}
	case s.tls != nil:
		var data []byte
		if c.Provided {
			data = c.Data[:c.Res]
		}
		if s.deadlineKind == deadlineBody {
			s.deadline = l.now + int64(l.cfg.BodyTimeout)
		}
		// The idle deadline turns into the header one once a record
		// opens into the input (readHead), not at a bare record.
		if !l.tlsReceived(s, data, int(c.Res)) {
			l.touch(s)
			return
		}
	default:
		n := int(c.Res)
		if c.Provided {
			if s.recvStart == s.recvEnd {
				// Parse in place; what is left over is copied below,
				// before the backend reuses its buffer at the next Wait.
				s.provided = c.Data[:n]
			} else {
				l.appendRecv(s, c.Data[:n])
			}
		} else {
			s.recvEnd += n
		}
		l.setBusy(s)
		if s.deadlineKind == deadlineIdle {
			s.deadline, s.deadlineKind = l.now+int64(l.cfg.HeaderTimeout), deadlineHeader
		} else if s.deadlineKind == deadlineBody {
			s.deadline = l.now + int64(l.cfg.BodyTimeout)
		}
	}
	l.advance(s)
	if len(s.provided) > 0 {
		rest := s.provided
		s.provided = nil
		l.appendRecv(s, rest)
	}
	s.provided = nil
	l.touch(s)
}

// appendRecv copies bytes delivered in a backend buffer into the slot's
// own receive buffer, growing it if a handler is behind on its body.
func (l *Loop) appendRecv(s *slot, data []byte) {
	if s.recv == nil {
		s.recv = l.buffers.getRecv()
	}
	if s.recvStart == s.recvEnd {
		s.recvStart, s.recvEnd = 0, 0
	}
	if len(s.recv)-s.recvEnd < len(data) && s.recvStart > 0 {
		n := copy(s.recv, s.recv[s.recvStart:s.recvEnd])
		s.recvStart, s.recvEnd = 0, n
	}
	if len(s.recv)-s.recvEnd < len(data) {
		grown := make([]byte, max(2*len(s.recv), s.recvEnd+len(data)))
		copy(grown, s.recv[:s.recvEnd])
		l.buffers.putRecv(s.recv)
		s.recv = grown
	}
	s.recvEnd += copy(s.recv[s.recvEnd:], data)
	l.pauseRecvIfFull(s)
}
