package loop

import (
	"slices"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/http2"
	"github.com/m0serve/m0serve/ws"
	"golang.org/x/net/http2/hpack"
)

// WebSockets over HTTP/2 (RFC 8441): when the connection's SETTINGS offer
// ENABLE_CONNECT_PROTOCOL, a stream opened by an extended CONNECT with
// :protocol websocket is a WebSocket's transport, as an upgraded socket
// is for HTTP/1.1. The request reaches the handler as an upgrade request
// (IsWebSocket, the same scope or handshake), the accept is a 200 HEADERS
// without Sec-WebSocket-Accept, and the frames, decoded and answered by
// websocket.go as for a socket, travel in the stream's DATA frames under
// its flow control: the credit of what arrives is returned as the reader
// takes it, so a handler that holds its queue full holds the client. The
// close handshake ends the stream with END_STREAM; a reset or the
// connection's end is the transport dying (1006).

// h2WebSocket is what a WebSocket on a stream has instead of a slot.
type h2WebSocket struct {
	hc *h2conn
	st *http2.Stream
	// in holds DATA received and not yet decoded, from inRead.
	in     []byte
	inRead int
	// closeBy is when the client's Close is due after the server's.
	closeBy int64
	// sendAt is when the stream's window last opened, or was not what
	// held its output (--send-timeout, http2_timeout.go).
	sendAt int64
	ready  bool // in hc.wsReady
	ending bool // the handshake is over: END_STREAM follows the outbox
	done   bool // the stream is given back
}

// extendedWebSocket reports whether a stream's request is RFC 8441's.
func extendedWebSocket(r *http2.Request) bool {
	return r.Method == "CONNECT" && r.Protocol == "websocket"
}

// openStreamWebSocket answers an extended CONNECT with its 200 (protocol,
// the negotiated extension, the handler's fields and the defaults) and
// makes the stream h's WebSocket. in is what the client sent before the
// accept.
func (l *Loop) openStreamWebSocket(hc *h2conn, st *http2.Stream, hs *ws.Handshake, protocol, fields []byte,
	spans []http1.FieldSpan, set uint64, h WebSocketHandler, in []byte) *WebSocket {
	var negotiated []hpack.HeaderField
	if len(protocol) > 0 && http1.ValidFieldValue(protocol) {
		negotiated = append(negotiated, hpack.HeaderField{Name: "sec-websocket-protocol", Value: l.intern(protocol)})
	}
	if ext := hs.Extension(); ext != "" {
		negotiated = append(negotiated, hpack.HeaderField{Name: "sec-websocket-extensions", Value: ext})
	}
	list, _ := l.streamFields(fields, spans, set, nil, negotiated...)
	hc.conn.WriteHeaders(st, 200, list, false)
	l.cfg.Stats.response(200)

	c := &WebSocket{loop: l, handler: h, deflate: hs.Compression, state: wsOpen}
	c.stream = &h2WebSocket{hc: hc, st: st, sendAt: l.now, in: append([]byte(nil), in...)}
	c.reader.MaxMessage = max(l.cfg.WebSocket.MaxMessage, 0)
	c.reader.Compression = hs.Compression
	if hs.Compression {
		c.reader.Inflater = l.inflater()
	}
	if l.cfg.WebSocket.PingInterval > 0 {
		c.nextPing = l.now + int64(l.cfg.WebSocket.PingInterval)
	}
	st.Value = c
	hc.sockets = append(hc.sockets, c)
	if len(in) > 0 || st.RemoteClosed() {
		l.h2WSWake(c)
	}
	return c
}

// acceptStreamJobWebSocket is acceptJobWebSocket for a stream's job: the
// job lets go of the stream, which becomes the WebSocket's. j.mu is held;
// the job is released.
func (l *Loop) acceptStreamJobWebSocket(hc *h2conn, j *Job) {
	st := j.stream
	hs, _ := ws.Accept(j.wsRequest(), ws.Options{Compression: j.wsRemote.deflate})
	// Body read before the accept was already credited back as read; what
	// is left carries on as the WebSocket's input.
	in := j.inbox[j.inboxRead:]
	unacked := j.h2Unacked
	j.h2Unacked = 0
	c := l.openStreamWebSocket(hc, st, &hs, j.wsProtocol, j.fields, j.fieldSpans, j.fieldsSet, j.wsHandler, in)
	if read := unacked - len(in); read > 0 {
		hc.conn.Consumed(st, read) // what the job read; the rest as c reads
	}
	r := j.wsRemote
	j.wsHandler, j.wsRemote = nil, nil
	j.h2, j.stream, j.h2Ready = nil, nil, false
	if i := slices.Index(hc.jobs, j); i >= 0 {
		last := len(hc.jobs) - 1
		hc.jobs[i], hc.jobs[last] = hc.jobs[last], nil
		hc.jobs = hc.jobs[:last]
	}
	j.mu.Unlock()
	l.releaseJob(j)
	c.remote = r
	r.mu.Lock()
	r.socket = c
	if len(r.pending) > 0 || r.taken > 0 || r.closeAsked {
		r.notify()
	}
	r.mu.Unlock()
}

// h2WSWake queues c to have its input read and output moved at its
// connection's next round.
func (l *Loop) h2WSWake(c *WebSocket) {
	t := c.stream
	if t.done {
		return
	}
	if !t.ready {
		t.ready = true
		t.hc.wsReady = append(t.hc.wsReady, c)
	}
	l.h2Kick(t.hc)
}

// h2WSFinish ends a WebSocket's stream once its output is out.
func (l *Loop) h2WSFinish(c *WebSocket) {
	c.stream.ending = true
	l.h2WSWake(c)
}

// serviceStreamWebSocket reads what the stream brought, then moves the
// output into DATA frames; once the close handshake is over, END_STREAM
// follows and the stream is given back.
func (l *Loop) serviceStreamWebSocket(s *slot, hc *h2conn, c *WebSocket) {
	t := c.stream
	if t.done {
		return
	}
	l.streamWebSocketRead(c)
	if len(c.outbox) > 0 {
		limit := len(c.outbox)
		if room := h2SendHighWater - len(s.send) - len(hc.conn.Output()); limit > room {
			limit = max(room, 0)
			hc.markWebSocket(c) // the send's completion brings it back
		}
		n := hc.conn.WriteData(t.st, c.outbox[:limit], false)
		c.outbox = c.outbox[:copy(c.outbox, c.outbox[n:])]
		if len(c.outbox) == 0 && cap(c.outbox) > 2*outboxHighWater {
			c.outbox = nil
		}
		l.wsBuffered(c)
	}
	if t.ending && len(c.outbox) == 0 {
		hc.conn.WriteData(t.st, nil, true)
		l.h2WSRelease(c)
	}
}

// streamWebSocketRead decodes the frames in c's input, as serveWebSocket
// does a socket's, returning their credit to the client.
func (l *Loop) streamWebSocketRead(c *WebSocket) {
	t := c.stream
	for c.state != wsClosed && !t.ending {
		if c.state == wsOpen && (c.queueFull(&l.cfg.WebSocket) || !c.Writable()) {
			return // Taken or the output's progress resumes
		}
		in := t.in[t.inRead:]
		if len(in) == 0 {
			if t.st.RemoteClosed() {
				// END_STREAM without a Close: the transport ended.
				l.wsEnd(c, ws.CloseAbnormal, nil)
				l.wsFinish(c, false)
			}
			break
		}
		n, m, err := c.reader.Feed(in)
		t.inRead += n
		t.hc.conn.Consumed(t.st, n)
		if err != nil {
			l.wsFail(c, err)
			break
		}
		if m.Opcode != 0 {
			l.wsMessage(c, &m)
		} else if n == 0 {
			break
		}
	}
	if t.inRead == len(t.in) {
		t.in, t.inRead = t.in[:0], 0
		if cap(t.in) > h2RecvSize {
			t.in = nil
		}
	}
}

// markWebSocket queues c for the connection's next round without a kick
// (serveHTTP2 is running).
func (hc *h2conn) markWebSocket(c *WebSocket) {
	if !c.stream.ready {
		c.stream.ready = true
		hc.wsReady = append(hc.wsReady, c)
	}
}

// h2WSRelease gives the stream back: after END_STREAM the codec reads
// and drops what the client still sends until its own END_STREAM.
func (l *Loop) h2WSRelease(c *WebSocket) {
	t := c.stream
	if t.done {
		return
	}
	t.done = true
	t.st.Value = nil
	hc := t.hc
	if i := slices.Index(hc.sockets, c); i >= 0 {
		last := len(hc.sockets) - 1
		hc.sockets[i], hc.sockets[last] = hc.sockets[last], nil
		hc.sockets = hc.sockets[:last]
	}
	if !hc.closed {
		hc.conn.Done(t.st)
	}
	c.outbox, t.in = nil, nil
}

// streamWebSocketData is the codec's Data for a WebSocket's stream.
func (l *Loop) streamWebSocketData(c *WebSocket, p []byte) {
	t := c.stream
	if t.done || c.state == wsClosed {
		t.hc.conn.Consumed(t.st, len(p))
		return
	}
	t.in = append(t.in, p...)
	t.hc.markWebSocket(c)
}

// streamWebSocketReset: the client reset the stream, or the connection
// ended under it; the WebSocket died (1006).
func (l *Loop) streamWebSocketReset(c *WebSocket) {
	l.wsEnd(c, ws.CloseAbnormal, nil)
	l.h2WSRelease(c)
}

// tickStreamWebSockets runs the once-a-second WebSocket timers of an
// HTTP/2 connection's streams: pings, and the close handshake's timeout.
func (l *Loop) tickStreamWebSockets(hc *h2conn) {
	for i := 0; i < len(hc.sockets); i++ {
		c := hc.sockets[i]
		if c.state == wsClosing && l.now >= c.stream.closeBy {
			l.wsEnd(c, ws.CloseAbnormal, nil)
			c.outbox = c.outbox[:0]
			l.h2WSRelease(c) // reset: the client never closed
			i--
			continue
		}
		l.wsTick(c)
	}
}

// goingAwayStreamWebSockets starts the close handshake of a draining
// connection's WebSockets (wsGoingAway); the GOAWAY lets them finish.
func (l *Loop) goingAwayStreamWebSockets(hc *h2conn) {
	for _, c := range slices.Clone(hc.sockets) {
		l.wsGoingAway(c)
	}
}

// closeStreamWebSockets: the connection is gone; its WebSockets died.
func (l *Loop) closeStreamWebSockets(hc *h2conn) {
	for _, c := range slices.Clone(hc.sockets) {
		l.wsEnd(c, ws.CloseAbnormal, nil)
		c.stream.done = true
	}
	hc.sockets, hc.wsReady = nil, nil
}

// wsRequestH2 marks a handshake read from an HTTP/2 request as RFC
// 8441's: only an extended CONNECT's request is marked an upgrade there.
func wsRequestH2(wr *ws.Request, req *http1.Request) {
	wr.Extended = true
	wr.HTTP11, wr.Host = true, true
	wr.Method = req.Bytes(req.Method)
}
