package loop

import (
	"io"

	"github.com/m0serve/m0serve/loop/tls"
)

// TLS (Config.TLS): each connection's slot gets a TLS room, tls.Conn,
// which holds its record layer and TLS state. The hooks are few: a
// receive lands in the record layer rather than the slot's input
// (queueRecv, tlsReceived), advance opens records into the input before
// it parses (openRecords), and flush seals the slot's output before it
// sends (sendSealed). The handshake runs on the record layer's goroutine;
// its flights and its end come back as notes (tlsNotes), as jobs' news
// do.

// tlsNote is news for a TLS slot from another goroutine: handshake
// output or its end, or a file chunk read for a sealed file body.
type tlsNote struct {
	index, gen uint32
}

// plainHTTPReason is nginx's answer to plain HTTP on a TLS port.
const plainHTTPReason = "The plain HTTP request was sent to HTTPS port"

// newTLS gives an accepted slot its TLS room, kept in the slot so that a
// connection costs no allocation of its own for it.
func (l *Loop) newTLS(s *slot) {
	note := tlsNote{index: s.index, gen: s.gen}
	s.tlsState.Init(l.cfg.TLS, func() { l.postTLS(note) })
	s.tls = &s.tlsState
}

// postTLS posts a TLS slot's news from another goroutine and wakes the
// loop if it waits.
func (l *Loop) postTLS(n tlsNote) {
	l.tlsNotes.push(n)
	l.kick()
}

// drainTLSNotes runs every pass: a handshake's flight is sent, its end
// makes the slot a plain HTTP one over records, and a file chunk read for
// the slot goes on.
func (l *Loop) drainTLSNotes() {
	for {
		n, ok := l.tlsNotes.pop()
		if !ok {
			return
		}
		if n.index == 0 || int(n.index) >= len(l.slots) {
			continue
		}
		s := l.slots[n.index]
		if s == nil || !s.open || s.gen != n.gen || s.closing {
			continue
		}
		if s.h2 != nil {
			// A file chunk read for one of its streams (http2_job.go).
			s.h2.fileRead()
		} else if s.tls == nil {
			continue
		}
		if s.tls != nil && !s.tls.Ready() {
			done, err := s.tls.Handshake()
			if done && err != nil {
				// Its alert (if any) goes out, then the close, lingering
				// so that a client still sending its flight reads the
				// alert rather than a reset.
				s.closeAfter, s.linger = true, true
			} else if done {
				l.startOnALPN(s)
			}
			if !done {
				// A flight to send, or the handshake read its input below
				// its bound: receive again (queueRecv).
				s.recvWanted = true
			}
			l.touch(s)
			if !s.tls.Ready() {
				continue
			}
		}
		l.advance(s)
		l.touch(s)
	}
}

// tlsReceived takes n received bytes for a TLS slot: data when the
// backend delivered into its own buffer, else they are in the room
// queueRecv gave. It reports whether the slot can advance.
func (l *Loop) tlsReceived(s *slot, data []byte, n int) bool {
	switch s.tls.Received(data, n) {
	case tls.PlainHTTP:
		s.tls = nil
		// nginx's answer (and its 400), in the clear, then the close;
		// writeError lingers for the rest of the request.
		l.answerError(s, nil, 400, plainHTTPReason)
		return false
	case tls.NotTLS:
		s.tls = nil
		s.closeAfter = true
		return false
	case tls.Handshaking:
		s.recvWanted = true // the rest of the handshake
	}
	if s.tls.Full() {
		if s.recvPending && !s.recvPausing {
			if canceler, ok := l.backend.(RecvCanceler); ok {
				s.recvPausing = true
				canceler.CancelRecv(s.fd, s.index, s.gen)
			}
		}
	}
	return s.tls.Ready()
}

// openRecords opens what the record layer holds into the slot's input,
// as far as the input has room. It reports false when the slot cannot
// advance: the handshake is not done, or the connection ended.
func (l *Loop) openRecords(s *slot) bool {
	if !s.tls.Ready() {
		return false
	}
	if s.recv == nil {
		s.recv = l.buffers.getRecv()
	}
	for {
		if s.recvStart == s.recvEnd {
			s.recvStart, s.recvEnd = 0, 0
		} else if s.recvEnd == len(s.recv) && s.recvStart > 0 {
			n := copy(s.recv, s.recv[s.recvStart:s.recvEnd])
			s.recvStart, s.recvEnd = 0, n
		}
		if s.recvEnd == len(s.recv) {
			return true // full: the handler takes some first
		}
		n, err := s.tls.Open(s.recv[s.recvEnd:])
		s.recvEnd += n
		switch {
		case err == nil:
			continue
		case err == tls.ErrWouldBlock:
			return true
		case err == io.EOF:
			// close_notify: the client's end of input.
			if !s.peerEOF {
				s.peerEOF = true
				if s.job != nil {
					l.jobPeerEOF(s.job)
				}
			}
			return true
		default:
			// A record that does not authenticate, or another alert:
			// crypto/tls queued its own alert; send it and close.
			s.closeAfter = true
			l.touch(s)
			return false
		}
	}
}

// sendSealed seals the slot's output and queues the ciphertext. Called
// by flush for a TLS slot with no send in flight.
func (l *Loop) sendSealed(s *slot) {
	if s.tls.Ready() && len(s.send) > 0 {
		if err := s.tls.Seal(s.send); err != nil {
			l.closeSlot(s)
			return
		}
		s.send = s.send[:0]
	}
	out, ackNow := s.tls.Output()
	if out == nil {
		if ackNow {
			l.ackNow(s.fd)
		}
		return
	}
	s.sending = true
	l.sendQueued(s)
	l.backend.QueueSend(s.fd, s.index, s.gen, out)
}

// closeNotify sends TLS's close_notify alert before a close the server
// decided on (tls.Conn.CloseNotify says why). It reports whether a send
// was queued.
func (l *Loop) closeNotify(s *slot) bool {
	if !s.tls.CloseNotify() {
		return false
	}
	l.sendSealed(s)
	return s.sending
}
