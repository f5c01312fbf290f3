package loop

import (
	"errors"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/http2"
)

// HTTP/2 (Config.HTTP2): a connection that opens with the client preface
// on a cleartext port (h2c by prior knowledge, RFC 9113 §3.3), or whose
// TLS handshake chose "h2" by ALPN (§3.2), becomes an HTTP/2 one: its
// slot holds an http2.Conn (package http2, the frames, streams, flow
// control and HPACK) in stateHTTP2, and each stream's request becomes
// what an HTTP/1.1 request is: a call of the inline handler, and if it
// defers, a Job. The stream's pseudo-headers and fields, which the codec
// validated as HPACK decoded them (RFC 9113 §8.2, §8.3), fill an
// http1.Request directly (http1.Assembler, which checks each part again
// by http1's tables); no text is written and parsed again, so no value
// can be read as more than one part. Everything after dispatch (the
// bridge, the environ, the scope, the access log) reads the same Request
// as for HTTP/1.1, marked Version20. What differs is the response's way
// out: http2_job.go moves a job's head, outbox, file and trailers into
// HEADERS and DATA frames on its stream, under the client's flow
// control, and its body in from DATA frames, returning the credit as
// the handler reads.

// HTTP2Config turns HTTP/2 on (Config.HTTP2).
type HTTP2Config struct {
	// Only serves HTTP/2 alone (--http 2): a cleartext connection that
	// does not open with the preface is closed after a GOAWAY.
	Only bool
	// Conn is what each connection advertises and enforces.
	Conn http2.Config
}

// h2RecvSize is the least receive buffer an HTTP/2 slot keeps: the codec
// takes a frame whole, so the buffer must hold the largest frame allowed
// and its header, and an upload arrives in fewer receives.
const h2RecvSize = 64 << 10

// h2SendHighWater bounds how much response a pass moves from jobs into
// one HTTP/2 connection's send: the rest waits for that send to complete,
// as a full outbox makes an HTTP/1.1 handler wait.
const h2SendHighWater = 256 << 10

// startOnALPN notes, as a TLS handshake ends, whether the connection
// speaks HTTP/2: ALPN chose h2 (RFC 9113 §3.2), or HTTP/1.1 is off.
func (l *Loop) startOnALPN(s *slot) {
	if h := l.cfg.HTTP2; h != nil {
		s.alpnH2 = h.Only || s.tls.State().NegotiatedProtocol == "h2"
	}
}

// h2conn is an HTTP/2 connection's state beside its slot: the codec, and
// the jobs with news to move.
type h2conn struct {
	conn  *http2.Conn
	loop  *Loop
	index uint32 // the slot's, with gen
	gen   uint32
	// closed: the connection is gone; the codec takes no more calls.
	closed bool
	// serving: inside serveHTTP2, which moves the output itself.
	serving bool
	// shutdown: the first GOAWAY is queued (drain).
	shutdown bool
	// ready are jobs whose news (head, body, end, credit) or opened
	// window is to be moved; a job is in it once (Job.h2Ready).
	ready []*Job
	// jobs are the connection's stream jobs, for the tick's timeouts
	// (http2_timeout.go); expired is its scratch list.
	jobs, expired []*Job
	// sockets are the connection's WebSockets (RFC 8441, websocket_h2.go);
	// wsReady those with input to read or output to move; wsShut the
	// tick's scratch list of those held at a shut window.
	sockets, wsReady, wsShut []*WebSocket
	// holds are the connection's held streams (hold_http2.go); holdReady
	// those with frames to move.
	holds, holdReady []*hold
	// progress is when the client last opened a window the server was
	// waiting for, or the connection's window was not what held a
	// stream (--send-timeout).
	progress int64
	// swept is when the codec's lingering streams were last swept
	// (ExpireLingering, once per --body-timeout).
	swept int64

	// assembler builds req from a stream's fields; its Buf is the head
	// req's spans index, copied into the job.
	assembler http1.Assembler
	req       http1.Request // swapped into the job
	cookies   []byte        // the cookie fields joined (RFC 9113 §8.2.3)
}

// isPreface reports whether a cleartext connection's input opens with the
// client preface (h2c by prior knowledge, RFC 9113 §3.3); more: it is a
// prefix of it, wait for the rest.
func isPreface(in []byte) (yes, more bool) {
	n := min(len(in), len(http2.Preface))
	if string(in[:n]) != http2.Preface[:n] {
		return false, false
	}
	return n == len(http2.Preface), n < len(http2.Preface)
}

// h2Switch looks at a connection's first bytes, before its first head is
// parsed (readHead): taken says it is not HTTP/1.1's to parse (it now
// speaks HTTP/2, needs more bytes to tell, or was refused), goOn that
// advance may go on at once.
func (l *Loop) h2Switch(s *slot, in []byte) (taken, goOn bool) {
	if s.tls != nil {
		if s.alpnH2 {
			l.startHTTP2(s)
			return true, true
		}
		return false, false
	}
	yes, more := isPreface(in)
	switch {
	case yes || l.cfg.HTTP2.Only:
		// HTTP/2 alone: the codec checks the preface, and ends what is
		// not one with GOAWAY and a close (§3.4), as h2spec wants.
		l.startHTTP2(s)
		return true, true
	case more:
		if s.peerEOF {
			s.closeAfter = true
		} else {
			if s.deadlineKind != deadlineHeader {
				s.deadline, s.deadlineKind = l.now+int64(l.cfg.HeaderTimeout), deadlineHeader
			}
			s.recvWanted = true
		}
		return true, false
	}
	return false, false
}

// startHTTP2 turns a slot into an HTTP/2 connection; the preface and
// what follows are still in its input.
func (l *Loop) startHTTP2(s *slot) {
	hc := &h2conn{loop: l, index: s.index, gen: s.gen, progress: l.now, swept: l.now}
	hc.assembler.Limits = l.cfg.Limits
	cfg := l.cfg.HTTP2.Conn
	if l.cfg.WebSocket.Disabled {
		cfg.EnableConnectProtocol = false // RFC 8441 is for WebSockets only
	}
	hc.conn = http2.NewConn(cfg, hc)
	s.h2 = hc
	s.state = stateHTTP2
	s.keepAlive = true
	s.deadline, s.deadlineKind = 0, deadlineNone
	size := max(h2RecvSize, int(cfg.WithDefaults().MaxFrameSize)+http2.FrameHeaderLen)
	if len(s.recv) < size {
		grown := make([]byte, size)
		n := copy(grown, s.recv[s.recvStart:s.recvEnd])
		l.buffers.putRecv(s.recv)
		s.recv, s.recvStart, s.recvEnd = grown, 0, n
	}
}

// serveHTTP2 is advance's step for an HTTP/2 slot: the input goes to the
// codec (which calls back Request, Data, Reset and WindowOpened), jobs
// with news move their responses into it, and its output joins the send.
// It never asks for another round: the send's completion brings the next.
func (l *Loop) serveHTTP2(s *slot) bool {
	hc := s.h2
	hc.serving = true
	in := s.input()
	if len(in) > 0 {
		n, _ := hc.conn.Feed(in)
		s.consume(n)
		l.setBusy(s)
	}
	for len(hc.ready) > 0 && len(s.send)+len(hc.conn.Output()) < h2SendHighWater && hc.conn.Err() == nil {
		j := hc.ready[0]
		hc.ready = hc.ready[:copy(hc.ready, hc.ready[1:])]
		j.h2Ready = false
		if j.h2 == hc {
			l.serviceStream(s, hc, j)
		}
	}
	if len(hc.wsReady) > 0 && hc.conn.Err() == nil {
		ready := hc.wsReady
		hc.wsReady = nil
		for _, c := range ready {
			c.stream.ready = false
			l.serviceStreamWebSocket(s, hc, c)
		}
		clear(ready)
		if hc.wsReady == nil {
			hc.wsReady = ready[:0]
		}
	}
	if len(hc.holdReady) > 0 && hc.conn.Err() == nil {
		l.serviceStreamHolds(s, hc)
	}
	hc.serving = false
	l.h2Output(s)
	switch {
	case hc.conn.Err() != nil || hc.conn.Finished() || s.peerEOF:
		// A connection error's GOAWAY, or the drain's last one, goes out
		// first; then the close. A client that ended its side can send
		// no body, WINDOW_UPDATE or PING ack any more: what it waits
		// for is sent, then its streams are reset by the close.
		s.closeAfter = true
		// A client still sending (a PING after the GOAWAY) would have
		// the close send RST, and the GOAWAY and the last responses lost
		// in its socket: drain its input first, as after an HTTP/1.1
		// error (lingerClose). Not a flood's: what it still sends is the
		// flood, read on for as long as the linger lasts
		// (CVE-2024-27316); it closes once its GOAWAY is sent.
		s.linger = !hc.flooded()
	case hc.conn.Idle():
		l.setIdle(s)
		if s.deadlineKind != deadlineIdle {
			s.deadline, s.deadlineKind = l.now+int64(l.cfg.KeepAliveTimeout), deadlineIdle
		}
	default:
		s.deadline, s.deadlineKind = 0, deadlineNone
	}
	if !s.peerEOF {
		s.recvWanted = true
	}
	return false
}

// flooded says the codec ended the connection for a flood (ENHANCE_YOUR_CALM).
func (hc *h2conn) flooded() bool {
	var e *http2.ConnError
	return errors.As(hc.conn.Err(), &e) && e.Code == http2.ErrCodeEnhanceYourCalm
}

// h2Output moves what the codec has to send into the slot's send buffer.
func (l *Loop) h2Output(s *slot) {
	out := s.h2.conn.Output()
	if len(out) == 0 {
		return
	}
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	s.send = append(s.send, out...)
	s.h2.conn.Sent(len(out))
}

// h2Kick brings an HTTP/2 connection forward after news that came from
// outside serveHTTP2 (a job released, a drain's GOAWAY).
func (l *Loop) h2Kick(hc *h2conn) {
	if hc.serving || hc.closed || int(hc.index) >= len(l.slots) {
		return
	}
	s := l.slots[hc.index]
	if s == nil || !s.open || s.gen != hc.gen || s.h2 != hc {
		return
	}
	l.advance(s)
	l.touch(s)
}

// markReady queues j to have its news moved at the connection's next
// round.
func (hc *h2conn) markReady(j *Job) {
	if !j.h2Ready {
		j.h2Ready = true
		hc.ready = append(hc.ready, j)
	}
}

// closeHTTP2 ends the codec as the slot closes: every stream a job
// still holds is reset, and its handler hears ErrAborted.
func (l *Loop) closeHTTP2(s *slot) {
	hc := s.h2
	if hc == nil || hc.closed {
		return
	}
	hc.closed = true
	hc.conn.Close()
	for _, j := range hc.ready {
		j.h2Ready = false
	}
	hc.ready, hc.jobs = nil, nil
	l.closeStreamWebSockets(hc)
	l.closeStreamHolds(hc)
}

// drainHTTP2 starts a connection's graceful close (RFC 9113 §6.8): a
// GOAWAY and a PING, then, once the PING is answered, the GOAWAY naming
// the last stream served; serveHTTP2 closes the connection once those
// streams are done.
func (l *Loop) drainHTTP2(s *slot) {
	hc := s.h2
	if hc.shutdown {
		return
	}
	hc.shutdown = true
	l.drainStreamHolds(s, hc)
	hc.conn.Shutdown()
	l.goingAwayStreamWebSockets(hc)
	l.h2Kick(hc)
}

// idleHTTP2 closes an HTTP/2 connection idle for the keep-alive timeout,
// after a GOAWAY that says no stream was left unserved (§6.8), so its
// client opens a new connection rather than retry on this one.
func (l *Loop) idleHTTP2(s *slot) {
	s.h2.conn.ShutdownNow()
	if !s.sending {
		l.h2Output(s)
	}
	s.closeAfter, s.linger = true, true
	s.deadline, s.deadlineKind = 0, deadlineNone
	l.touch(s)
}

// Request is the codec's call for a stream whose request head is
// complete: the head becomes an http1.Request, dispatched as one.
func (hc *h2conn) Request(st *http2.Stream) {
	l := hc.loop
	s := l.slots[hc.index]
	r := &st.Request
	wsConnect := extendedWebSocket(r)
	if r.Method == "CONNECT" && (!wsConnect || l.cfg.WebSocket.Disabled) {
		// A tunnel, or another protocol, is opened by no handler
		// (dispatch's 405 for HTTP/1.1).
		l.h2Error(hc, st, nil, 405, "CONNECT is not supported")
		return
	}
	if err := hc.assemble(r, wsConnect); err != nil {
		status, reason := 400, "bad request"
		if perr, ok := err.(*http1.Error); ok {
			status, reason = perr.Status, perr.Reason
		}
		l.h2Error(hc, st, nil, status, reason)
		return
	}
	req := &hc.req
	req.KeepAlive = true
	// RFC 8441: the handler sees an upgrade request (IsWebSocket), whose
	// stream is its WebSocket's transport rather than a body.
	req.Upgrade = wsConnect
	if r.ContentLength < 0 && !st.RemoteClosed() && !wsConnect {
		// A body without content-length: it ends with the stream, as a
		// chunked one ends with its last chunk.
		req.Chunked = true
	}
	if l.cfg.MaxBodySize >= 0 && req.ContentLength > l.cfg.MaxBodySize {
		l.h2Error(hc, st, req, 413, "request body too large")
		return
	}
	if l.overloaded() {
		l.h2Error(hc, st, req, 503, "service unavailable")
		return
	}
	l.request.Request, l.request.slot, l.request.head = req, s, hc.assembler.Buf
	l.writer.reset(s, req)
	l.writer.stream, l.writer.h2 = st, hc
	l.cfg.Handler.ServeInline(&l.request, &l.writer)
	l.request.Request, l.request.slot, l.request.head = nil, nil, nil
	w := &l.writer
	w.stream, w.h2 = nil, nil
	switch {
	case w.deferred:
		if l.cfg.Jobs == nil && w.queue == nil {
			l.h2Error(hc, st, req, 500, "no handler threads for a deferred request")
			return
		}
		l.startStreamJob(s, hc, st, w.webSocket)
	case w.webSocket:
		// Accepted inline: the stream is the WebSocket's.
	case !w.responded:
		l.h2Error(hc, st, req, 500, "handler wrote no response")
	}
	// Answered inline: respondStream gave the stream back.
}

// assemble fills hc.req from a stream's request: the method and target
// from :method and :path, Host from :authority (which wins over a host
// field, RFC 9113 §8.3.1), the fields as received, and the cookie fields
// joined into one (§8.2.3).
func (hc *h2conn) assemble(r *http2.Request, wsConnect bool) error {
	a := &hc.assembler
	method := r.Method
	if wsConnect {
		// An extended CONNECT is read as the GET of RFC 6455's
		// handshake, the method every layer above expects of one.
		method = "GET"
	}
	a.Start(&hc.req, method, r.Path)
	if r.Authority != "" {
		a.Field("host", r.Authority)
	}
	cookies, joined := hc.cookies[:0], 0
	for _, f := range r.Fields {
		switch {
		case f.Name == "cookie":
			if joined > 0 {
				cookies = append(cookies, "; "...)
			}
			cookies = append(cookies, f.Value...)
			joined++
			continue
		case f.Name == "host" && r.Authority != "":
			continue
		}
		a.Field(f.Name, f.Value)
	}
	hc.cookies = cookies
	if joined > 0 {
		a.FieldBytes("cookie", cookies)
	}
	return a.Finish(http1.Version20)
}

// Malformed is the codec's word of a request it refused (RST_STREAM
// PROTOCOL_ERROR): logged, at most a line a logInterval for the loop.
func (hc *h2conn) Malformed(id uint32, reason string) {
	l := hc.loop
	if n, ok := l.h2Malformed.allow(l.now); ok {
		l.cfg.Logf("m0serve: a malformed HTTP/2 request from %v (stream %d: %s): stream reset (%d since the last report)",
			l.slots[hc.index].remoteAddr(), id, reason, n)
	}
}

// Data is the codec's call with a piece of a stream's body: into the
// job's inbox, its credit returned as the handler reads it.
func (hc *h2conn) Data(st *http2.Stream, p []byte, end bool) {
	l := hc.loop
	if c, ok := st.Value.(*WebSocket); ok {
		l.streamWebSocketData(c, p)
		return
	}
	if _, ok := st.Value.(*hold); ok {
		hc.conn.Consumed(st, len(p)) // a held stream's client has nothing to say
		return
	}
	j, _ := st.Value.(*Job)
	if j == nil || j.h2 != hc {
		hc.conn.Consumed(st, len(p))
		return
	}
	j.mu.Lock()
	if j.detached || j.aborted || j.bodyDone {
		j.mu.Unlock()
		hc.conn.Consumed(st, len(p))
		return
	}
	j.h2Received += int64(len(p))
	j.h2BodyAt = l.now
	if l.cfg.MaxBodySize >= 0 && j.h2Received > l.cfg.MaxBodySize {
		l.refuseStreamBody(hc, j, 413, "request body too large", ErrBodyTooLarge)
		return
	}
	j.inbox = append(j.inbox, p...)
	j.h2Unacked += len(p)
	if end {
		j.bodyDone = true
		// The codec checked them (§8.1): regular fields only, by §8.2's
		// rules. Their strings are HPACK's, the job's until released.
		j.h2Trailers = append(j.h2Trailers[:0], st.Trailers...)
	}
	l.tellReader(j)
	queue := j.buffering && (j.bodyDone || len(j.inbox) >= inboxLimit)
	if queue {
		j.buffering = false
	}
	j.mu.Unlock()
	if queue {
		l.queueJob(j)
	}
}

// Reset is the codec's call for a stream reset by either side or cut by
// the connection's end: its job is aborted (the handler's reads and
// writes fail), and the stream is given back once the handler finishes.
func (hc *h2conn) Reset(st *http2.Stream, _ http2.ErrCode) {
	if c, ok := st.Value.(*WebSocket); ok {
		hc.loop.streamWebSocketReset(c)
		return
	}
	if sub, ok := st.Value.(*hold); ok {
		hc.loop.releaseStreamHold(sub)
		return
	}
	j, _ := st.Value.(*Job)
	if j == nil || j.h2 != hc {
		hc.conn.Done(st)
		return
	}
	hc.loop.detachJob(j, ErrAborted)
}

// WindowOpened is the codec's call once a stream that ran out of send
// window may send again.
func (hc *h2conn) WindowOpened(st *http2.Stream) {
	hc.progress = hc.loop.now
	if c, ok := st.Value.(*WebSocket); ok {
		c.stream.sendAt = hc.loop.now
		hc.markWebSocket(c)
		return
	}
	if sub, ok := st.Value.(*hold); ok {
		sub.stream.sendAt = hc.loop.now
		hc.markHold(sub)
		return
	}
	if j, _ := st.Value.(*Job); j != nil && j.h2 == hc {
		j.h2SendAt = hc.loop.now
		hc.markReady(j)
	}
}
