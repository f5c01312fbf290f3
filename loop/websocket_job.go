package loop

import (
	"errors"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/ws"
)

// A deferred WebSocket: the handler thread decides whether to accept (an
// ASGI app's websocket.accept comes after its task has run a while), so
// the handshake travels as a Job. DeferWebSocket checks the handshake on
// the loop thread and defers it; the handler then either answers the Job
// as any HTTP request (a denial: 403, or the app's own response) or calls
// Job.AcceptWebSocket, which the loop applies when it next services the
// job: it writes the 101 and the connection runs as an inline accept's
// would, with the Remote the call returned.

// DeferWebSocket hands a WebSocket opening handshake to the deferred path
// (Job.IsWebSocket reports it). A request that is not a valid handshake
// is answered here, as AcceptWebSocket answers it, and its error returned.
func (w *ResponseWriter) DeferWebSocket() error {
	if w.responded || w.deferred {
		return errors.New("loop: DeferWebSocket after the request was answered")
	}
	req := Request{Request: w.req, slot: w.slot, loop: w.loop}
	if err := w.checkHandshake(req.wsRequest()); err != nil {
		return err
	}
	w.deferred, w.webSocket = true, true
	return nil
}

// checkHandshake answers a request that is not a valid opening handshake
// (400, or 426 for another version) and returns its error.
func (w *ResponseWriter) checkHandshake(wr *ws.Request) error {
	_, err := ws.Accept(wr, ws.Options{})
	if err == nil && w.req.HasBody() {
		err = &ws.HandshakeError{Status: 400, Reason: "upgrade request has a body"}
	}
	if herr, ok := err.(*ws.HandshakeError); ok {
		w.fields = append(w.fields, herr.Header...)
		w.Respond(herr.Status, []byte(herr.Reason+"\n"))
	}
	return err
}

// IsWebSocket reports whether the job is an opening handshake handed on
// with DeferWebSocket: AcceptWebSocket may complete it.
func (j *Job) IsWebSocket() bool { return j.webSocket }

// WebSocketProtocols appends the subprotocols the client offers, in its
// order of preference, to dst; they alias Head.
func (j *Job) WebSocketProtocols(dst [][]byte) [][]byte {
	return j.wsRequest().Protocols(dst)
}

// wsRequest is the job's handshake as the ws package reads it.
func (j *Job) wsRequest() *ws.Request {
	wr := &ws.Request{}
	wr.Method = j.Request.Bytes(j.Request.Method)
	wr.HTTP11 = j.Request.Version >= http1.Version11
	for i := 0; i < j.Request.Header.Len(); i++ {
		wr.AddHeader(j.Request.Header.Field(i))
	}
	if j.h2 != nil && j.Request.Upgrade {
		wsRequestH2(wr, &j.Request)
	}
	return wr
}

// AcceptWebSocket completes a deferred opening handshake: the 101 carries
// protocol (nil for none; one the client offered, else
// ErrProtocolNotOffered and nothing changes) and the fields set with
// SetHeader, and h serves the connection on the loop thread. The job ends
// here, as with Finish; the returned Remote is the connection's handle
// for the caller's goroutines, usable at once (sends wait for the 101).
// If the connection is gone before the loop writes the 101, h.OnClose
// gets ws.CloseAbnormal.
func (j *Job) AcceptWebSocket(h WebSocketHandler, protocol []byte) (*WebSocketRemote, error) {
	if !j.webSocket {
		return nil, errors.New("loop: AcceptWebSocket on a job that is not a WebSocket handshake")
	}
	wr := j.wsRequest()
	if len(protocol) > 0 && !wr.OffersProtocol(protocol) {
		return nil, ErrProtocolNotOffered
	}
	l := j.loop
	hs, err := ws.Accept(wr, ws.Options{Compression: !l.cfg.WebSocket.NoCompression})
	if err != nil {
		return nil, err // DeferWebSocket checked it: not expected
	}
	j.mu.Lock()
	defer j.unlock()
	if j.finished || j.headPosted {
		return nil, errors.New("loop: AcceptWebSocket after the job was answered")
	}
	if j.aborted {
		return nil, ErrAborted
	}
	r := &WebSocketRemote{loop: l, deflate: hs.Compression}
	r.drained.L = &r.mu
	j.wsHandler = h
	j.wsProtocol = append(j.wsProtocol[:0], protocol...)
	j.wsRemote = r
	j.finished = true
	j.notify()
	return r, nil
}

// acceptJobWebSocket writes the 101 of a job the handler accepted and
// turns the connection over to the job's WebSocket handler. j.mu is held;
// the job is released.
func (l *Loop) acceptJobWebSocket(s *slot, j *Job) {
	hs, _ := ws.Accept(j.wsRequest(), ws.Options{Compression: j.wsRemote.deflate})
	fields := j.fields
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	c := l.openWebSocket(s, &hs, j.wsProtocol, fields, j.fieldsSet, j.wsHandler)
	l.holdWebSocketJob(s, j)
	r := j.wsRemote
	j.wsHandler, j.wsRemote = nil, nil
	s.job = nil
	j.mu.Unlock()
	l.releaseJob(j)
	c.remote = r
	r.mu.Lock()
	r.socket = c
	// What the handler's goroutines asked before the 101 was written.
	if len(r.pending) > 0 || r.taken > 0 || r.closeAsked {
		r.notify()
	}
	r.mu.Unlock()
	l.touch(s)
}

// jobWebSocketGone: the connection of an accepted job closed before the
// loop wrote its 101. The handler hears of it as of any connection that
// died.
func (l *Loop) jobWebSocketGone(j *Job) {
	r, h := j.wsRemote, j.wsHandler
	if r == nil {
		return
	}
	j.wsHandler, j.wsRemote = nil, nil
	c := &WebSocket{loop: l, handler: h, state: wsClosed, remote: r, notified: true}
	r.mu.Lock()
	r.socket = c
	r.mu.Unlock()
	l.wsRemoteClosed(c)
	h.OnClose(c, ws.CloseAbnormal, nil)
}
