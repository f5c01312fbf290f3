package loop

import (
	"net/netip"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/http2"
)

// Handler answers requests. ServeInline runs on the loop thread for every
// request and must not block: it either answers through w (the inline
// shape: native handlers) or calls w.Defer to hand the request to a
// handler thread through the Config's JobQueue (the deferred shape: the
// Python bridge, or anything that blocks).
type Handler interface {
	ServeInline(req *Request, w *ResponseWriter)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(req *Request, w *ResponseWriter)

// ServeInline calls f.
func (f HandlerFunc) ServeInline(req *Request, w *ResponseWriter) { f(req, w) }

// Request is the request an inline handler sees. Its spans point into the
// connection's receive buffer and are valid only during ServeInline. An
// inline handler does not see the body; one that needs it defers.
type Request struct {
	*http1.Request
	slot *slot
	head []byte
	loop *Loop
}

// RemoteAddr returns the client's address (the zero value if unknown).
func (r *Request) RemoteAddr() netip.AddrPort { return r.slot.remoteAddr() }

// JobsInFlight is how many deferred requests are out (queued or held by
// a handler, and not yet released by the loop). At 0 no handler thread
// holds one, so an inline handler that runs a request itself cannot run
// beside one of its own deferred requests.
func (r *Request) JobsInFlight() int { return r.loop.jobsOut }

// HeldStreams is how many connections the loop holds for realtime
// publishes (SSE and WebSocket holds), for an inline handler's report.
func (r *Request) HeldStreams() int { return r.loop.Holds() }

// PassReceives is how many receives completed in the loop's current pass:
// about how many requests the pass dispatches, this one among them (a
// receive may hold two pipelined requests, or half of one).
func (r *Request) PassReceives() int { return r.loop.passReceives }

// TLS returns the connection's TLS facts (tlsrec.Conn.Facts), nil when
// it is plain HTTP; read only.
func (r *Request) TLS() []byte {
	if r.slot.tls == nil {
		return nil
	}
	return r.slot.tls.Facts()
}

// Head returns the request's head as received, which the Request's spans
// index into; valid only during ServeInline.
func (r *Request) Head() []byte { return r.head }

// ResponseWriter builds an inline response straight into the connection's
// send buffer. Add fields with AddHeader, then call Respond once.
type ResponseWriter struct {
	loop      *Loop
	slot      *slot
	req       *http1.Request
	fields    []byte
	fieldsSet uint64 // Loop.fieldBit of each field's name
	close     bool   // SetClose
	responded bool
	deferred  bool
	status    int // Respond's, for Responded
	bodyLen   int
	queue     *JobQueue // DeferTo's; nil: Config.Jobs
	webSocket bool      // DeferWebSocket: the job is a checked opening handshake
	carried   any       // DeferWith's
	// stream: the request is an HTTP/2 stream of h2 (http2.go), answered
	// in frames rather than HTTP/1.1.
	stream *http2.Stream
	h2     *h2conn

	// spans: each field's place in fields, for an HTTP/2 head.
	spans []http1.FieldSpan
}

func (w *ResponseWriter) reset(s *slot, req *http1.Request) {
	w.slot, w.req = s, req
	w.fields, w.spans = w.fields[:0], w.spans[:0]
	w.fieldsSet = 0
	w.close, w.responded, w.deferred, w.webSocket = false, false, false, false
	w.queue, w.carried = nil, nil
	w.stream, w.h2 = nil, nil
}

// AddHeader adds a response field; an invalid name or value is refused
// (never written). Framing fields are the loop's: do not set them; a Date
// or Server field replaces the loop's.
func (w *ResponseWriter) AddHeader(name, value string) error {
	fields, spans, err := http1.AppendFieldSpanString(w.fields, w.spans, name, value)
	if err != nil {
		return err
	}
	w.fields, w.spans = fields, spans
	w.fieldsSet |= fieldBit(w.loop, name)
	return nil
}

// AddHeaderBytes is AddHeader for byte slices.
func (w *ResponseWriter) AddHeaderBytes(name, value []byte) error {
	fields, spans, err := http1.AppendFieldSpan(w.fields, w.spans, name, value)
	if err != nil {
		return err
	}
	w.fields, w.spans = fields, spans
	w.fieldsSet |= fieldBit(w.loop, name)
	return nil
}

// SetClose asks for the connection to close after this response (an
// application's "Connection: close"); call it before Respond.
func (w *ResponseWriter) SetClose() { w.close = true }

// Respond writes the whole response: status, the fields added so far, the
// framing, and body (left out for HEAD and for statuses without a body).
func (w *ResponseWriter) Respond(status int, body []byte) {
	if w.responded || w.deferred {
		return
	}
	w.responded = true
	w.status, w.bodyLen = status, len(body)
	if w.req.MethodIs("HEAD") {
		w.bodyLen = 0
	}
	if w.stream != nil {
		w.loop.respondStream(w, status, body, int64(len(body)))
		return
	}
	w.loop.writeResponse(w.slot, w.req, status, w.fields, w.fieldsSet, body, int64(len(body)), w.close)
}

// RespondHead answers a HEAD request: the status, the fields added so far
// and framing that announces contentLength, the length a GET would carry
// (-1: not known, and no Content-Length is sent, RFC 9110 §9.3.2). For
// any other method it is Respond(status, nil).
func (w *ResponseWriter) RespondHead(status int, contentLength int64) {
	if !w.req.MethodIs("HEAD") {
		contentLength = 0
	}
	if w.responded || w.deferred {
		return
	}
	w.responded = true
	w.status, w.bodyLen = status, 0
	if w.stream != nil {
		w.loop.respondStream(w, status, nil, contentLength)
		return
	}
	w.loop.writeResponse(w.slot, w.req, status, w.fields, w.fieldsSet, nil, contentLength, w.close)
}

// Responded reports the status and body length Respond wrote, for an
// access log wrapped around an inline handler; ok is false when the
// handler deferred or did not respond.
func (w *ResponseWriter) Responded() (status, bodyLen int, ok bool) {
	return w.status, w.bodyLen, w.responded
}

// Defer hands the request to the deferred path: a Job on the Config's
// JobQueue. Nothing may be written through w after it.
func (w *ResponseWriter) Defer() {
	if !w.responded {
		w.deferred = true
	}
}

// DeferWith is Defer with v handed to the job as Job.Carried: a request
// the inline handler began and a handler thread is to finish (a response
// too large to gather on the loop thread).
func (w *ResponseWriter) DeferWith(v any) {
	if !w.responded {
		w.deferred, w.carried = true, v
	}
}

// DeferTo is Defer onto q rather than the Config's JobQueue: requests a
// handler of another kind serves (static files beside an app).
func (w *ResponseWriter) DeferTo(q *JobQueue) {
	if !w.responded {
		w.deferred, w.queue = true, q
	}
}

// Stepper is an event loop the loop thread drives between its own I/O
// (Config.Stepper). Its methods run on the loop thread.
type Stepper interface {
	// Step runs what is due, given the loop's clock (unix ns), and
	// returns when the next Step is due: a time at or before now for the
	// next pass at once, 0 for no time of its own (news from other
	// goroutines comes through Pending and Loop.Kick).
	Step(now int64) (due int64)
	// Pending reports news posted from another goroutine since the last
	// Step. The loop asks after it has marked itself about to wait, so
	// news posted later finds it marked and wakes it with Loop.Kick.
	Pending() bool
}
