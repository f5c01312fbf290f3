package loop

import (
	"errors"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/ws"
)

// WebSocketConfig is the loop's WebSocket policy. Zero values take the
// defaults below.
type WebSocketConfig struct {
	// Disabled makes Request.IsWebSocket false: upgrade requests reach the
	// handler as plain HTTP requests (--ws none).
	Disabled bool
	// MaxMessage bounds a message's payload, checked against each frame's
	// declared length before any of it is buffered; over it the
	// connection is closed with 1009. <0: no limit.
	MaxMessage int64
	// MaxQueue is how many messages a handler may hold untaken
	// (WebSocketHandler.OnMessage returning true) before the loop stops
	// reading the connection.
	MaxQueue int
	// MaxQueueBytes bounds the same queue by the messages' payload bytes,
	// as delivered (inflated): past it the loop stops reading too. One
	// message is always let through, whatever its size (up to
	// MaxMessage). A count alone let 32 messages of 16 MiB that arrived
	// as 20 KB each under permessage-deflate hold 512 MiB per connection.
	MaxQueueBytes int
	// PingInterval is the time between the loop's pings; <0: no pings.
	PingInterval time.Duration
	// PingTimeout is how long a ping may go unanswered before the
	// connection is closed with 1011.
	PingTimeout time.Duration
	// CloseTimeout bounds the close handshake: how long the loop waits for
	// the client's Close after sending its own.
	CloseTimeout time.Duration
	// NoCompression declines permessage-deflate.
	NoCompression bool
}

// WebSocket defaults (uvicorn's, but for the close timeout).
const (
	DefaultWebSocketMaxMessage   = 16 << 20
	DefaultWebSocketMaxQueue     = 32
	DefaultWebSocketMaxQueueSize = 1 << 20
	DefaultWebSocketPingInterval = 20 * time.Second
	DefaultWebSocketPingTimeout  = 20 * time.Second
	DefaultWebSocketCloseTimeout = 5 * time.Second
)

func (c *WebSocketConfig) applyDefaults() {
	if c.MaxMessage == 0 {
		c.MaxMessage = DefaultWebSocketMaxMessage
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = DefaultWebSocketMaxQueue
	}
	if c.MaxQueueBytes <= 0 {
		c.MaxQueueBytes = DefaultWebSocketMaxQueueSize
	}
	if c.PingInterval == 0 {
		c.PingInterval = DefaultWebSocketPingInterval
	}
	if c.PingTimeout <= 0 {
		c.PingTimeout = DefaultWebSocketPingTimeout
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultWebSocketCloseTimeout
	}
}

// WebSocketHandler serves an accepted WebSocket connection. Its methods run
// on the loop thread and must not block.
type WebSocketHandler interface {
	// OnMessage receives a whole text or binary message; payload is valid
	// only during the call. It returns false when it is done with the
	// message (an inline handler), or true when it queued a copy for a
	// consumer that has not taken it yet: it then calls WebSocket.Taken
	// once that consumer has, and the loop stops reading the connection
	// while MaxQueue messages are untaken (back-pressure).
	OnMessage(c *WebSocket, op ws.Opcode, payload []byte) (queued bool)
	// OnClose is called once, after every message, when the connection
	// ends: with the client's close code and reason (ws.CloseNoStatus when
	// its Close had none), the code the server failed the connection with
	// (1009, 1002, ...), or ws.CloseAbnormal when the transport died or the
	// close handshake timed out. reason is valid only during the call.
	OnClose(c *WebSocket, code ws.CloseCode, reason []byte)
}

// ErrWebSocketClosed is returned by Send once the connection is closing or
// closed.
var ErrWebSocketClosed = errors.New("loop: websocket is closed")

// ErrProtocolNotOffered refuses to accept a subprotocol the client did not
// offer (RFC 6455 §4.2.2).
var ErrProtocolNotOffered = errors.New("loop: websocket subprotocol was not offered by the client")

// wsState is where an upgraded connection stands.
type wsState uint8

const (
	wsOpen    wsState = iota + 1
	wsClosing         // the server sent its Close and waits for the client's
	wsClosed          // the close handshake is done (or failed): closing the socket
)

// largeMessage: a message past this is counted in the buffer pool's
// released bytes once its copies are garbage (bufferPool.trim).
const largeMessage = 64 << 10

// outboxHighWater is how much a connection's unsent output may hold before
// the loop stops reading it: a client that does not read its echoes is not
// given more to echo. Handlers check WebSocket.Writable.
const outboxHighWater = 256 << 10

// WebSocket is one upgraded connection, used on the loop thread only.
type WebSocket struct {
	loop *Loop
	// slot is an upgraded connection's (HTTP/1.1); an RFC 8441 one runs
	// on an HTTP/2 stream instead (websocket_h2.go) and slot is nil.
	slot    *slot
	stream  *h2WebSocket
	handler WebSocketHandler
	reader  ws.Reader
	deflate bool // permessage-deflate was negotiated
	state   wsState

	// outbox gathers frames while the slot's send buffer is with the
	// backend; it becomes the next send.
	outbox []byte

	queued int // messages the handler holds untaken
	// queuedBytes is their payloads' bytes; queuedSizes[queuedHead:]
	// each one's, in order (they are taken in the order delivered).
	queuedBytes int
	queuedSizes []int
	queuedHead  int
	delivering  bool // inside a handler call: Taken must not re-enter the reader
	notified    bool // OnClose was called

	nextPing int64 // unix ns: when to send the next ping
	pingSent int64 // unix ns: the unanswered ping's time; 0: none

	remote *WebSocketRemote // set once Remote was called
}

// Writable reports whether the connection's unsent output is below the
// high-water mark; above it a handler should hold further sends.
func (c *WebSocket) Writable() bool {
	return c.unsent() < outboxHighWater
}

// unsent is the output the loop holds for the client, not yet sent.
func (c *WebSocket) unsent() int {
	if c.stream != nil {
		return len(c.outbox)
	}
	return len(c.slot.send) + len(c.outbox)
}

// output is where frames go now: the slot's send buffer (or the outbox
// while the backend owns that), or the stream's outbox.
func (c *WebSocket) output() *[]byte {
	if c.stream != nil {
		return &c.outbox
	}
	return c.loop.wsOutput(c.slot)
}

// live: the transport is still this WebSocket's.
func (c *WebSocket) live() bool {
	if c.stream != nil {
		return !c.stream.done
	}
	return c.slot != nil && c.slot.ws == c && c.slot.open && !c.slot.closing
}

// wake has the loop move the output and read on (Taken, a send).
func (c *WebSocket) wake(read bool) {
	if c.stream != nil {
		c.loop.h2WSWake(c)
		return
	}
	if read {
		c.loop.advance(c.slot)
	}
	c.loop.touch(c.slot)
}

// finish ends the transport once the close handshake is done or failed:
// the socket is closed (the server closes first, RFC 6455 §7.1.1), or
// the stream ended (RFC 8441 §5.1).
func (l *Loop) wsFinish(c *WebSocket, linger bool) {
	if c.stream != nil {
		l.h2WSFinish(c)
		return
	}
	s := c.slot
	s.closeAfter = true
	if linger {
		s.linger = true
	}
	s.deadline, s.deadlineKind = 0, deadlineNone
}

// Compressed reports whether permessage-deflate was negotiated.
func (c *WebSocket) Compressed() bool { return c.deflate }

// Send queues a whole message (ws.OpText or ws.OpBinary), compressed when
// permessage-deflate was negotiated and it is worth it.
func (c *WebSocket) Send(op ws.Opcode, payload []byte) error {
	if c.state != wsOpen {
		return ErrWebSocketClosed
	}
	var d *ws.Deflater
	if c.deflate {
		d = c.loop.deflater()
	}
	out := c.output()
	*out = ws.AppendMessage(*out, op, payload, d)
	c.wake(false)
	return nil
}

// Close starts the close handshake with code and reason (cut to 123 bytes).
// Messages that arrive before the client's Close are dropped.
func (c *WebSocket) Close(code ws.CloseCode, reason string) {
	if c.state == wsOpen {
		c.loop.wsStartClose(c, code, reason)
	}
}

// Taken tells the loop that the handler's consumer took one message it
// had queued (OnMessage returned true): reading resumes below MaxQueue.
func (c *WebSocket) Taken() {
	if c.queued == 0 {
		return
	}
	c.took(1)
	if c.delivering || !c.live() {
		return
	}
	c.wake(true)
}

// took forgets the n oldest queued messages.
func (c *WebSocket) took(n int) {
	n = min(n, c.queued)
	c.queued -= n
	for ; n > 0 && c.queuedHead < len(c.queuedSizes); n-- {
		c.queuedBytes -= c.queuedSizes[c.queuedHead]
		c.queuedHead++
	}
	if c.queuedHead == len(c.queuedSizes) {
		c.queuedSizes, c.queuedHead = c.queuedSizes[:0], 0
	}
}

// queueFull: the handler holds as many messages, or as many bytes of
// them, as it may.
func (c *WebSocket) queueFull(cfg *WebSocketConfig) bool {
	return c.queued >= cfg.MaxQueue || c.queuedBytes >= cfg.MaxQueueBytes
}

// IsWebSocket reports whether the request asks to upgrade to WebSocket
// (and WebSockets are enabled); AcceptWebSocket checks the rest.
func (r *Request) IsWebSocket() bool {
	return r.Upgrade && !r.loop.cfg.WebSocket.Disabled && r.wsRequest().IsWebSocket()
}

// WebSocketProtocols appends the subprotocols the client offers, in its
// order of preference, to dst; they alias the head (valid during
// ServeInline).
func (r *Request) WebSocketProtocols(dst [][]byte) [][]byte {
	return r.wsRequest().Protocols(dst)
}

// wsRequest fills the loop's reusable ws.Request from the request head.
func (r *Request) wsRequest() *ws.Request {
	wr := &r.loop.wsRequest
	wr.Reset()
	wr.Method = r.Bytes(r.Method)
	wr.HTTP11 = r.Version >= http1.Version11
	for i := 0; i < r.Header.Len(); i++ {
		wr.AddHeader(r.Header.Field(i))
	}
	if r.slot != nil && r.slot.h2 != nil && r.Upgrade {
		wsRequestH2(wr, r.Request)
	}
	return wr
}

// AcceptWebSocket completes the opening handshake (RFC 6455 §4.2.2) and
// hands the connection to h: the 101 response carries protocol (nil for
// none; it must be one the client offered) and the fields added with
// AddHeader. A request that is not a valid opening handshake is answered
// here with 400, or 426 for another protocol version, and its
// *ws.HandshakeError returned; ErrProtocolNotOffered answers nothing, so
// the handler still responds.
func (w *ResponseWriter) AcceptWebSocket(h WebSocketHandler, protocol []byte) (*WebSocket, error) {
	if w.responded || w.deferred {
		return nil, errors.New("loop: AcceptWebSocket after the request was answered")
	}
	l, s := w.loop, w.slot
	req := Request{Request: w.req, slot: s, loop: l}
	wr := req.wsRequest()
	hs, err := ws.Accept(wr, ws.Options{Compression: !l.cfg.WebSocket.NoCompression})
	if err == nil && w.req.HasBody() {
		err = &ws.HandshakeError{Status: 400, Reason: "upgrade request has a body"}
	}
	if err != nil {
		if herr, ok := err.(*ws.HandshakeError); ok {
			w.fields = append(w.fields, herr.Header...)
			w.Respond(herr.Status, []byte(herr.Reason+"\n"))
		}
		return nil, err
	}
	if len(protocol) > 0 && !wr.OffersProtocol(protocol) {
		return nil, ErrProtocolNotOffered
	}
	w.responded = true
	if w.stream != nil {
		w.webSocket = true
		return l.openStreamWebSocket(w.h2, w.stream, &hs, protocol, w.fields, w.spans, w.fieldsSet, h, nil), nil
	}
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	c := l.openWebSocket(s, &hs, protocol, w.fields, w.fieldsSet, h)
	return c, nil
}

// openWebSocket writes the 101 (protocol, fields, and the fields every
// response gets: --header, Server, Date, unless the handler set its own)
// into s's send buffer and makes s an open WebSocket served by h.
func (l *Loop) openWebSocket(s *slot, hs *ws.Handshake, protocol, fields []byte, fieldsSet uint64, h WebSocketHandler) *WebSocket {
	fields, server, date := l.appendDefaults(fields, fieldsSet)
	if server != nil {
		fields = append(append(append(fields, "Server: "...), server...), "\r\n"...)
	}
	if date != nil {
		fields = append(date.AppendDate(append(fields, "Date: "...)), "\r\n"...)
	}
	s.send = hs.AppendResponse(s.send, protocol, fields)

	c := &WebSocket{loop: l, slot: s, handler: h, deflate: hs.Compression, state: wsOpen}
	c.reader.MaxMessage = max(l.cfg.WebSocket.MaxMessage, 0)
	c.reader.Compression = hs.Compression
	if hs.Compression {
		c.reader.Inflater = l.inflater()
	}
	if l.cfg.WebSocket.PingInterval > 0 {
		c.nextPing = l.now + int64(l.cfg.WebSocket.PingInterval)
	}
	s.ws = c
	s.state = stateWebSocket
	s.keepAlive = false
	return c
}

// inflater and deflater are the loop's, shared by its connections: the
// server imposes no context takeover, so no connection keeps any state.
func (l *Loop) inflater() *ws.Inflater {
	if l.wsInflater == nil {
		l.wsInflater = ws.NewInflater()
	}
	return l.wsInflater
}

func (l *Loop) deflater() *ws.Deflater {
	if l.wsDeflater == nil {
		l.wsDeflater = &ws.Deflater{}
	}
	return l.wsDeflater
}

// wsOutput is where frames for s go now: its send buffer, or the outbox
// while the backend owns that.
func (l *Loop) wsOutput(s *slot) *[]byte {
	if s.sending {
		return &s.ws.outbox
	}
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	return &s.send
}

// wsSent runs when a send completes: the outbox becomes the next send,
// and a buffer left empty goes back to the pool (which drops one a big
// message grew), so an idle connection holds no output buffer.
func (l *Loop) wsSent(s *slot) {
	c := s.ws
	if len(c.outbox) > 0 {
		s.send, c.outbox = c.outbox, s.send[:0]
	}
	if c.outbox != nil {
		l.buffers.putSend(c.outbox)
		c.outbox = nil
	}
	if len(s.send) == 0 {
		l.buffers.putSend(s.send)
		s.send = nil
	}
	l.wsBuffered(c)
}

// serveWebSocket reads frames from an upgraded connection's input and acts
// on each message. It always reports false: there is no next request.
func (l *Loop) serveWebSocket(s *slot) bool {
	c := s.ws
	for s.open && !s.closing && !s.closeAfter && c.state != wsClosed {
		if c.state == wsOpen && (c.queueFull(&l.cfg.WebSocket) || !c.Writable()) {
			// Back-pressure: Taken or the send's completion resumes.
			return false
		}
		in := s.input()
		if len(in) == 0 {
			if s.peerEOF {
				l.wsEnd(c, ws.CloseAbnormal, nil)
				s.closeAfter = true
				return false
			}
			s.recvWanted = true
			return false
		}
		n, m, err := c.reader.Feed(in)
		// The message may alias the consumed bytes: consuming only moves
		// offsets, and nothing overwrites them before the next receive.
		s.consume(n)
		if err != nil {
			l.wsFail(c, err)
			return false
		}
		if m.Opcode != 0 {
			l.wsMessage(c, &m)
		} else if n == 0 {
			s.recvWanted = true
			return false
		}
	}
	return false
}

func (l *Loop) wsMessage(c *WebSocket, m *ws.Message) {
	switch m.Opcode {
	case ws.OpText, ws.OpBinary:
		if c.state != wsOpen {
			// After our Close, data is dropped (§7.1.2).
			l.buffers.released += c.reader.Shrink()
			return
		}
		c.delivering = true
		queued := c.handler.OnMessage(c, m.Opcode, m.Payload)
		c.delivering = false
		if queued {
			c.queued++
			c.queuedBytes += len(m.Payload)
			c.queuedSizes = append(c.queuedSizes, len(m.Payload))
			if len(m.Payload) > largeMessage {
				// The handler's copy is garbage once taken: counted
				// like a dropped buffer, so the tick returns it.
				l.buffers.released += len(m.Payload)
			}
		}
		l.buffers.released += c.reader.Shrink()
	case ws.OpPing:
		if c.state == wsOpen {
			out := c.output()
			*out = ws.AppendFrame(*out, ws.OpPong, true, m.Payload)
		}
	case ws.OpPong:
		// An unsolicited pong is a heartbeat (§5.5.3): nothing to do.
		if c.pingSent != 0 {
			c.pingSent = 0
			c.nextPing = l.now + int64(l.cfg.WebSocket.PingInterval)
		}
	case ws.OpClose:
		if c.state == wsOpen {
			// The client closes: echo its code (§5.5.1; none for 1005).
			out := c.output()
			*out = ws.AppendClose(*out, m.Code, "")
		}
		c.state = wsClosed
		l.wsEnd(c, m.Code, m.Reason)
		l.wsFinish(c, false)
	}
}

// wsFail fails the connection (§7.1.7): a Close with the error's code,
// then the socket is closed, lingering so the Close is not lost to a reset.
func (l *Loop) wsFail(c *WebSocket, err error) {
	code, reason := ws.CloseProtocolError, "protocol error"
	if werr, ok := err.(*ws.Error); ok {
		code, reason = werr.Code, werr.Reason
	}
	if c.state == wsOpen {
		out := c.output()
		*out = ws.AppendClose(*out, code, reason)
	}
	c.state = wsClosed
	l.wsEnd(c, code, nil)
	l.wsFinish(c, true)
}

// wsStartClose sends the server's Close and waits CloseTimeout for the
// client's.
func (l *Loop) wsStartClose(c *WebSocket, code ws.CloseCode, reason string) {
	out := c.output()
	*out = ws.AppendClose(*out, code, reason)
	c.state = wsClosing
	c.pingSent = 0
	l.wsRemoteClosed(c)
	if c.stream != nil {
		c.stream.closeBy = l.now + int64(l.cfg.WebSocket.CloseTimeout)
		c.wake(false)
		return
	}
	s := c.slot
	s.deadline, s.deadlineKind = l.now+int64(l.cfg.WebSocket.CloseTimeout), deadlineWSClose
	l.touch(s)
	if !s.recvPending {
		s.recvWanted = true
	}
}

// wsEnd tells the handler, once, that the connection ended.
func (l *Loop) wsEnd(c *WebSocket, code ws.CloseCode, reason []byte) {
	if c == nil || c.notified {
		return
	}
	c.notified = true
	c.state = wsClosed
	l.wsRemoteClosed(c)
	c.delivering = true
	c.handler.OnClose(c, code, reason)
	c.delivering = false
}

// wsTick runs once a second for an upgraded connection: the loop's pings
// and their timeout.
func (l *Loop) wsTick(c *WebSocket) {
	cfg := &l.cfg.WebSocket
	if c.state != wsOpen || cfg.PingInterval <= 0 {
		return
	}
	if c.pingSent != 0 {
		// Frames wait unread while a send is in flight: the pong may be
		// among them, so a client that sent anything is given until the
		// send completes (the send timeout bounds that).
		waiting := c.slot != nil && c.slot.sending && len(c.slot.input()) > 0
		if l.now-c.pingSent >= int64(cfg.PingTimeout) && !waiting {
			l.wsStartClose(c, ws.CloseInternalError, "keepalive ping timeout")
		}
		return
	}
	if l.now >= c.nextPing {
		c.pingSent = l.now
		out := c.output()
		*out = ws.AppendFrame(*out, ws.OpPing, true, nil)
		c.wake(false)
	}
}

// wsGoingAway starts the close handshake when the loop drains: 1001 (going
// away) on a server shutdown, 1012 (service restart) for a worker being
// replaced (Drain), whose client may reconnect at once.
func (l *Loop) wsGoingAway(c *WebSocket) {
	if c.state != wsOpen {
		return
	}
	if l.gentleDrain {
		l.wsStartClose(c, ws.CloseServiceRestart, "worker restarting")
	} else {
		l.wsStartClose(c, ws.CloseGoingAway, "server shutting down")
	}
}
