package loop

import "time"

// sendCheckAfter is how long a send must have been pending before the
// tick asks the kernel whether the client is reading: a send that
// completes sooner costs no system call.
const sendCheckAfter = time.Second

// checkSend closes a connection whose client has read nothing of a
// pending send for Config.SendTimeout (nginx's send_timeout): a client
// that requests a large response and never reads would otherwise hold
// the handler writing it (its Write, or an ASGI send, waits for room)
// for as long as it keeps the connection. Progress is the kernel's count
// of bytes the client acknowledged, read once a second per send that is
// slow to complete; where that count is not available, a send must
// complete within the timeout. Closing fails the handler's write.
func (l *Loop) checkSend(s *slot) {
	if !s.sending || s.sendProgress == 0 || l.now-s.sendProgress < int64(sendCheckAfter) {
		return
	}
	if acked, ok := bytesAcked(s.fd); ok && (!s.sendAckedKnown || acked != s.sendAcked) {
		// The first reading has nothing to compare with: it counts as
		// progress, so a stall is cut within the timeout and a second.
		s.sendAcked, s.sendAckedKnown = acked, true
		s.sendProgress = l.now
		return
	}
	if l.now-s.sendProgress < int64(l.cfg.SendTimeout) {
		return
	}
	if n, ok := l.sendTimeouts.allow(l.now); ok {
		l.cfg.Logf("m0serve: a client read nothing of its response for --send-timeout (%v): connection closed (%d since the last report)", l.cfg.SendTimeout, n)
	}
	l.closeSlot(s)
}

// sendQueued notes that a send was just queued on s.
func (l *Loop) sendQueued(s *slot) {
	s.sendProgress, s.sendAckedKnown = l.now, false
}
