package loop

import (
	"github.com/m0serve/m0serve/http1"
)

// sendHighWater stops parsing further pipelined requests on a connection
// until what is already answered has been sent.
const sendHighWater = 64 << 10

// continue100 is the interim response to "Expect: 100-continue" (RFC 9110
// §10.1.1), sent when a handler first reads the body.
const continue100 = "HTTP/1.1 100 Continue\r\n\r\n"

// advance moves a connection forward as far as the bytes and job state at
// hand allow: every complete pipelined request in the buffer is answered
// in order (RFC 9112 §9.3), and their responses gather in one send buffer.
func (l *Loop) advance(s *slot) {
	for s.open && !s.closing && !s.closeAfter && !s.sending {
		if s.tls != nil && !l.openRecords(s) {
			return
		}
		var more bool
		switch s.state {
		case stateHead:
			more = l.readHead(s)
		case stateJob:
			more = l.serviceJob(s)
		case stateDiscard:
			more = l.discardBody(s)
		case stateWebSocket:
			more = l.serveWebSocket(s)
		case stateHTTP2:
			more = l.serveHTTP2(s)
		case stateHold:
			more = l.serveHold(s)
		}
		if !more {
			return
		}
	}
}

// readHead parses the next request head in the input and dispatches it.
// It reports whether the connection can go on at once.
func (l *Loop) readHead(s *slot) bool {
	in := s.input()
	if len(in) == 0 {
		l.setIdle(s)
		if s.peerEOF || !s.keepAlive || l.draining && !l.gentleDrain {
			s.closeAfter = true
			return false
		}
		if s.deadlineKind == deadlineNone {
			s.deadline, s.deadlineKind = l.now+int64(l.cfg.KeepAliveTimeout), deadlineIdle
		}
		s.recvWanted = true
		return false
	}
	if l.cfg.HTTP2 != nil && s.h2 == nil {
		if taken, goOn := l.h2Switch(s, in); taken {
			return goOn
		}
	}
	if len(s.send) >= sendHighWater {
		return false
	}
	n, err := s.parser.Parse(in, &s.req)
	if err == http1.ErrIncomplete {
		if s.peerEOF {
			// A partial head and no more to come: nothing to answer.
			s.closeAfter = true
			return false
		}
		if s.deadlineKind != deadlineHeader {
			s.deadline, s.deadlineKind = l.now+int64(l.cfg.HeaderTimeout), deadlineHeader
		}
		s.recvWanted = true
		return false
	}
	if err != nil {
		if perr, ok := err.(*http1.Error); ok {
			l.answerError(s, nil, perr.Status, perr.Reason)
		} else {
			l.answerError(s, nil, 400, "bad request")
		}
		return false
	}
	l.dispatch(s, in[:n])
	return true
}

// dispatch hands one parsed request to the handler.
func (l *Loop) dispatch(s *slot, head []byte) {
	req := &s.req
	s.deadline, s.deadlineKind = 0, deadlineNone
	s.keepAlive = req.KeepAlive && !l.draining
	s.requests++
	if limit := l.cfg.MaxKeepAliveRequests; limit > 0 && s.requests >= limit {
		s.keepAlive = false // this response says Connection: close
	}
	s.bodyRead = 0
	s.bodyChunked = req.Chunked
	if req.Chunked {
		s.chunked.Reset()
		s.bodyRemaining = 0
	} else {
		s.bodyRemaining = max(req.ContentLength, 0)
	}
	if l.cfg.MaxBodySize >= 0 && req.ContentLength > l.cfg.MaxBodySize {
		l.answerError(s, req, 413, "request body too large")
		return
	}
	if req.Form == http1.FormAuthority {
		// CONNECT asks for a tunnel, and no handler opens one: answering
		// it 2xx would leave HTTP parsing running on the tunnel's bytes.
		l.writeError(s, 405, "CONNECT is not supported")
		return
	}
	if l.overloaded() {
		l.answerError(s, req, 503, "service unavailable")
		return
	}
	l.request.Request, l.request.slot, l.request.head = req, s, head
	l.writer.reset(s, req)
	l.cfg.Handler.ServeInline(&l.request, &l.writer)
	l.request.Request, l.request.slot, l.request.head = nil, nil, nil
	if l.writer.deferred {
		if l.cfg.Jobs == nil && l.writer.queue == nil {
			l.answerError(s, req, 500, "no handler threads for a deferred request")
			return
		}
		l.startJob(s, head, l.writer.webSocket)
		return
	}
	if !l.writer.responded {
		l.answerError(s, req, 500, "handler wrote no response")
		return
	}
	s.consume(len(head))
	if req.HasBody() {
		s.state = stateDiscard
	}
}

// writeResponse encodes an inline handler's whole response.
// contentLength is what the framing announces: len(body), or for HEAD
// the GET's length (-1: unknown); fieldsSet: fieldBit of the fields'
// names; closeAfter: the handler asked to close.
func (l *Loop) writeResponse(s *slot, req *http1.Request, status int, fields []byte, fieldsSet uint64,
	body []byte, contentLength int64, closeAfter bool) {
	// An inline handler never reads the body; a client waiting for 100
	// (Continue) may or may not send it, so the connection cannot be
	// reused (RFC 9110 §10.1.1).
	close := !s.keepAlive || req.Expect100 && req.HasBody() || closeAfter
	mode := l.appendHead(s, req, status, fields, fieldsSet, contentLength, close)
	l.cfg.Stats.observe(0)
	if mode == http1.BodyLength || mode == http1.BodyUntilClose {
		s.send = append(s.send, body...)
	}
	if close || mode == http1.BodyUntilClose {
		s.closeAfter = true
	}
}

// answerError is writeError for a response no handler knows of: it is
// reported to OnLoopResponse (req nil when the head did not parse).
func (l *Loop) answerError(s *slot, req *http1.Request, status int, reason string) {
	l.writeError(s, status, reason)
	if l.cfg.OnLoopResponse != nil {
		l.cfg.OnLoopResponse(s.remoteAddr(), req, status, len(reason)+1)
	}
}

// writeError answers with status and a short plain-text reason, then
// closes: after a rejected request the framing of what follows cannot be
// trusted.
func (l *Loop) writeError(s *slot, status int, reason string) {
	if s.job != nil {
		j := s.job
		s.job = nil
		l.detachJob(j, ErrAborted)
	}
	fields := errorFields
	if status == 405 {
		fields = methodNotAllowedFields
	}
	l.appendHead(s, nil, status, fields, 0, int64(len(reason)+1), true)
	s.send = append(s.send, reason...)
	s.send = append(s.send, '\n')
	s.closeAfter = true
	s.linger = true
	s.deadline, s.deadlineKind = 0, deadlineNone
}
