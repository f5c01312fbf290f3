package loop

import (
	"time"

	"github.com/m0serve/m0serve/ws"
	"golang.org/x/sys/unix"
)

// lingerTime bounds how long a connection closed after an error response
// keeps draining what its client still sends.
const lingerTime = 2 * time.Second

// lingerClose closes a connection after an error response without
// losing that response: closing a socket with unread input makes the
// kernel send RST, and a client still sending (a body over the limit,
// pipelined requests after a bad one) may then see the reset instead of
// the status. So: shut down our side, read and drop until the client's
// EOF or lingerTime, then close (as nginx's lingering_close does).
func (l *Loop) lingerClose(s *slot) {
	if !s.lingering {
		s.lingering = true
		unix.Shutdown(s.fd, unix.SHUT_WR)
		s.deadline, s.deadlineKind = l.now+int64(lingerTime), deadlineLinger
		s.recvStart, s.recvEnd = 0, 0
	}
	if !s.recvPending {
		l.queueRecv(s)
	}
}

// closeSlot cancels what is pending on the connection and closes it; the
// slot is recycled at OpClose once its pending operations completed.
func (l *Loop) closeSlot(s *slot) {
	if s.closing {
		return
	}
	s.closing = true
	s.deadline, s.deadlineKind = 0, deadlineNone
	if s.tls != nil {
		s.tls.Close() // a handshake still running fails at its next read
	}
	l.closeHTTP2(s)
	if s.hold != nil {
		l.unhold(s)
	}
	if s.ws != nil {
		l.wsEnd(s.ws, ws.CloseAbnormal, nil)
	}
	if j := s.job; j != nil {
		s.job = nil
		l.detachJob(j, ErrAborted)
	}
	l.backend.QueueClose(s.fd, s.index, s.gen)
}
