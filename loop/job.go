package loop

import (
	"errors"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/http2"
	"golang.org/x/net/http2/hpack"
)

// Errors a deferred handler sees.
var (
	// ErrAborted: the connection is gone (client reset, timeout, shutdown
	// deadline) or the job was aborted; stop working on it and call Finish.
	ErrAborted = errors.New("loop: request aborted")
	// ErrBodyTooLarge: the request body, or a chunk size it declared,
	// passed --max-body-size. The loop has answered 413 itself when no
	// response had started.
	ErrBodyTooLarge = errors.New("loop: request body too large")
	// ErrBodyTooSlow: the request body arrived slower than
	// Config.BodyMinRate. The loop has answered 408 itself when no
	// response had started.
	ErrBodyTooSlow = errors.New("loop: request body slower than the minimum rate")
	// ErrHeadWritten: a header change after the response head was posted.
	ErrHeadWritten = errors.New("loop: response head already written")
)

// Flow-control sizes of a deferred job. The body inbox bounds how far the
// loop reads ahead of the handler; the outbox bounds how far a handler
// writes ahead of the socket (a full outbox blocks Write).
const (
	inboxLimit  = 64 << 10
	outboxLimit = 64 << 10
)

// Job is one request handed off by the loop to a handler thread: the
// deferred handler shape. A handler takes it from a JobQueue, reads the
// request (Request, Head, RemoteAddr are its own copies), streams the body
// with Read, answers with SetHeader/WriteHeader/Write (and SetTrailer for
// fields after a chunked body) and ends with Finish or Abort. After Finish
// or Abort the job belongs to the loop again and must not be touched.
//
// Read blocks while the loop receives more body; Write blocks while the
// response outbox is full (back-pressure from a slow client). Neither holds
// anything the loop needs, so the loop never waits for a handler.
type Job struct {
	// Request is the parsed head; its spans point into Head.
	Request http1.Request
	// Head is a copy of the request head's bytes.
	Head []byte
	// RemoteAddr is the client's address (the zero value if unknown).
	RemoteAddr netip.AddrPort
	// TLS is the connection's TLS facts (tlsrec.Conn.Facts), nil when it
	// is plain HTTP; read only.
	TLS []byte
	// Arrived is when the loop read the head and queued the job (unix
	// nanoseconds, the loop's clock of that pass): an access log's request
	// duration, and where Config.RequestTimeout counts from.
	Arrived int64
	// Carried is what the inline handler passed to DeferWith: work it
	// began on the loop thread for the handler thread to finish.
	Carried any

	loop  *Loop
	queue *JobQueue // the one the job was pushed to
	// taken: a handler took the job off its queue (Taken).
	taken atomic.Bool
	// clientWaiting: the handler is blocked on the client, its thread
	// lent to a spare (waitClient).
	clientWaiting atomic.Bool
	// hold: the handler asked to hold the connection (Hold, hold.go).
	hold *holdAsk
	// inbound: a held WebSocket's message as a request (hold_websocket.go):
	// no connection takes its response, which Write drops.
	inbound bool

	mu   sync.Mutex
	cond sync.Cond

	// Body, filled by the loop and drained by Read.
	inbox     []byte
	inboxRead int
	bodyDone  bool
	bodyErr   error
	wantBody  bool

	// Response, filled by the handler and drained by the loop.
	status        int
	contentLength int64
	fields        []byte
	fieldSpans    []http1.FieldSpan // each field of fields, for HTTP/2
	fieldsSet     uint64            // Loop.fieldBit of each field's name
	trailers      []byte            // encoded trailer fields (SetTrailer)
	trailerSpans  []http1.FieldSpan
	file          fileBody
	headPosted    bool
	closeAfter    bool // SetClose: the connection ends after this response
	outbox        []byte
	finished      bool
	aborted       bool

	// owner is the handler's own record of this job (SetOwner), handed
	// to Config.OnJobGone; inputEnded: the client ended its side while
	// the job ran.
	owner      any
	inputEnded bool
	// clientWaiter hears of the handler blocking on its client.
	clientWaiter ClientWaiter
	// writtenWanted: a Post left the outbox full; the loop calls
	// Config.OnJobWritten once it has emptied it.
	writtenWanted bool
	// readableWanted: a TryRead came back pending; the loop calls
	// Config.OnJobReadable once the inbox has news.
	readableWanted bool

	// webSocket: a checked opening handshake (DeferWebSocket); once
	// AcceptWebSocket is called, wsRemote is set until the loop writes
	// the 101 and hands the connection to wsHandler.
	webSocket  bool
	wsHandler  WebSocketHandler
	wsProtocol []byte
	wsRemote   *WebSocketRemote

	// queued: the job sits in the loop's notification ring (at most once).
	queued bool
	// kickOwed: notify queued the job; unlock wakes the loop.
	kickOwed bool

	// Loop-side state, touched only by the loop thread.
	slot        uint32
	gen         uint32
	detached    bool // the connection is gone; release once finished
	buffering   bool // held by the loop until its body is in (Config.BufferBodies)
	headWritten bool
	mode        http1.BodyMode
	bodySent    int64 // body bytes sent of a BodyLength response
	expect100   bool
	sent100     bool

	// HTTP/2 (http2_job.go): the connection and stream the job answers;
	// h2Ready: in the connection's ready list; h2Unacked: body octets
	// put in the inbox whose credit the client has not had back;
	// h2Received: body octets received; h2Ended: END_STREAM is sent;
	// h2Broken: the body cannot be completed, so the stream is reset.
	h2         *h2conn
	stream     *http2.Stream
	h2Ready    bool
	h2Unacked  int
	h2Received int64
	h2BodyAt   int64               // when its body last arrived (or the job began)
	h2SendAt   int64               // when its stream's window last opened, or was not what held it
	h2Trailers []hpack.HeaderField // the request's trailers (http2_trailers.go)
	h2Ended    bool
	h2Broken   bool
}

func (j *Job) reset() {
	j.inbox = j.inbox[:0]
	j.inboxRead = 0
	j.bodyDone, j.bodyErr, j.wantBody = false, nil, false
	j.status, j.contentLength = 0, -1
	j.fields, j.fieldSpans = j.fields[:0], j.fieldSpans[:0]
	j.fieldsSet = 0
	j.trailers, j.trailerSpans = j.trailers[:0], j.trailerSpans[:0]
	j.outbox = j.outbox[:0]
	j.headPosted, j.finished, j.aborted = false, false, false
	j.closeAfter = false
	j.detached, j.headWritten, j.expect100, j.sent100 = false, false, false, false
	j.buffering = false
	j.mode = http1.BodyNone
	j.bodySent = 0
	j.RemoteAddr = netip.AddrPort{}
	j.owner, j.inputEnded = nil, false
	j.Carried = nil
	j.clientWaiter = nil
	j.writtenWanted, j.readableWanted = false, false
	j.webSocket, j.wsHandler, j.wsRemote = false, nil, nil
	j.h2, j.stream, j.h2Ready = nil, nil, false
	j.h2Unacked, j.h2Received, j.h2Ended, j.h2Broken, j.h2BodyAt, j.h2SendAt = 0, 0, false, false, 0, 0
	clear(j.h2Trailers)
	j.h2Trailers = j.h2Trailers[:0]
	j.hold, j.inbound = nil, false
	j.taken.Store(false)
}

// Taken reports whether a handler has taken the job off its queue; a job
// not taken is queued, behind busy handlers (a stuck request's, for
// --request-timeout's log line). A handler that takes a batch takes jobs
// it runs later in it.
func (j *Job) Taken() bool { return j.taken.Load() }

// notify tells the loop this job has news (body wanted or drained, output
// ready, finished): the job enters the loop's ring, at most once until the
// loop takes it. Called with j.mu held; the wake is left to unlock (or to
// kickNow before a wait). A wake under j.mu let the loop, woken on the
// handler's own core, preempt the handler and then block on the lock the
// handler still held: the loop's locked thread parked in the Go scheduler
// (a P hand-off, a spinning M and two more switches per request).
func (j *Job) notify() {
	if j.queued {
		return
	}
	j.queued = true
	if j.loop.enqueue(j) {
		j.kickOwed = true
	}
}

// unlock releases j.mu, then wakes the loop if notify asked for it.
// j.loop is fixed for the job's life, so reading it after the unlock is
// safe even if the loop has reused the job.
func (j *Job) unlock() {
	kick := j.kickOwed
	j.kickOwed = false
	l := j.loop
	j.mu.Unlock()
	if kick {
		l.kick()
	}
}

// kickNow wakes the loop for a notify before waiting on j.cond (the
// loop's answer is what ends the wait). j.mu is held.
func (j *Job) kickNow() {
	if j.kickOwed {
		j.kickOwed = false
		j.loop.kick()
	}
}

// Read reads request body bytes. It returns io.EOF after the last byte,
// ErrBodyTooLarge past --max-body-size, ErrAborted when the connection is
// gone. The first Read is what sends "100 Continue" to a client that
// asked for it.
func (j *Job) Read(p []byte) (int, error) {
	j.mu.Lock()
	defer j.unlock()
	for {
		if n, err, ok := j.readLocked(p); ok {
			return n, err
		}
		j.kickNow()
		j.waitClient()
	}
}

// TryRead is Read that never waits: the port of an event-loop handler,
// which must not block. With no body bytes in yet it returns pending,
// and the loop calls Config.OnJobReadable with the job's owner (SetOwner)
// once bytes, the body's end or an error have arrived; a client that
// leaves first is heard of through OnJobGone as well.
func (j *Job) TryRead(p []byte) (n int, pending bool, err error) {
	j.mu.Lock()
	defer j.unlock()
	if n, err, ok := j.readLocked(p); ok {
		return n, false, err
	}
	j.readableWanted = true
	return 0, true, nil
}

// readLocked takes what the inbox holds; ok is false when a reader must
// wait for the loop. j.mu is held.
func (j *Job) readLocked(p []byte) (n int, err error, ok bool) {
	if !j.wantBody {
		j.wantBody = true
		j.notify()
	}
	if j.inboxRead < len(j.inbox) {
		if len(p) == 0 {
			return 0, nil, true
		}
		wasFull := len(j.inbox) >= inboxLimit
		n := copy(p, j.inbox[j.inboxRead:])
		j.inboxRead += n
		if j.inboxRead == len(j.inbox) {
			j.inbox = j.inbox[:0]
			j.inboxRead = 0
			if wasFull || !j.bodyDone {
				// The loop stops reading when the inbox is full; say
				// there is room again.
				j.notify()
			}
		}
		return n, nil, true
	}
	switch {
	case j.bodyErr != nil:
		return 0, j.bodyErr, true
	case j.aborted:
		return 0, ErrAborted, true
	case j.bodyDone:
		return 0, io.EOF, true
	}
	return 0, nil, false
}

// tellWriter tells a poster whose Post left the outbox full that the
// loop has moved it on (Config.OnJobWritten). j.mu is held.
func (l *Loop) tellWriter(j *Job) {
	if j.writtenWanted {
		j.writtenWanted = false
		if j.owner != nil && l.cfg.OnJobWritten != nil {
			l.cfg.OnJobWritten(j.owner)
		}
	}
}

// tellReader wakes a reader waiting for body news: Read's wait, or a
// TryRead that came back pending (Config.OnJobReadable). j.mu is held.
func (l *Loop) tellReader(j *Job) {
	j.cond.Broadcast()
	if j.readableWanted {
		j.readableWanted = false
		if j.owner != nil && l.cfg.OnJobReadable != nil {
			l.cfg.OnJobReadable(j.owner)
		}
	}
}

// SetHeader adds a response header field. Framing fields (Content-Length,
// Transfer-Encoding, Connection) are the loop's: do not set them. A Date
// or Server field replaces the loop's.
func (j *Job) SetHeader(name, value string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.headPosted {
		return ErrHeadWritten
	}
	fields, spans, err := http1.AppendFieldSpanString(j.fields, j.fieldSpans, name, value)
	if err != nil {
		return err
	}
	j.fields, j.fieldSpans = fields, spans
	j.fieldsSet |= fieldBit(j.loop, name)
	return nil
}

// SetClose asks for the connection to close after this response (an
// application's "Connection: close"); the head then says so. It must come
// before WriteHeader.
func (j *Job) SetClose() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.headPosted {
		return ErrHeadWritten
	}
	j.closeAfter = true
	return nil
}

// WriteHeader posts the response head: status, and the body length if
// known (-1: unknown, sent chunked to HTTP/1.1 clients).
func (j *Job) WriteHeader(status int, contentLength int64) error {
	j.mu.Lock()
	defer j.unlock()
	return j.writeHeaderLocked(status, contentLength)
}

func (j *Job) writeHeaderLocked(status int, contentLength int64) error {
	if j.aborted {
		if j.bodyErr != nil {
			return j.bodyErr
		}
		return ErrAborted
	}
	if j.headPosted {
		return ErrHeadWritten
	}
	j.status, j.contentLength, j.headPosted = status, contentLength, true
	j.notify()
	return nil
}

// Write appends body bytes to the response, posting a 200 head with an
// unknown length first if none was posted. It blocks while the outbox is
// full.
func (j *Job) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.unlock()
	if !j.headPosted {
		if err := j.writeHeaderLocked(200, -1); err != nil {
			return 0, err
		}
	}
	written := 0
	for len(p) > 0 {
		if j.aborted {
			return written, ErrAborted
		}
		room := outboxLimit - len(j.outbox)
		if room <= 0 && j.inbound {
			j.outbox, room = j.outbox[:0], outboxLimit
		}
		if room <= 0 {
			j.kickNow()
			j.waitClient()
			continue
		}
		n := min(room, len(p))
		j.outbox = append(j.outbox, p[:n]...)
		p = p[n:]
		written += n
		j.notify()
	}
	return written, nil
}

// Post appends all of p to the response and never waits: the port of an
// event-loop handler, which must not block. It posts a 200 head with an
// unknown length first if none was posted. full reports that the outbox
// is at or past its limit with p: the loop then calls
// Config.OnJobWritten with the job's owner (SetOwner) once it has moved
// the outbox to the connection, and the handler should post nothing more
// until then (that wait is the back-pressure). The outbox holds at most
// one piece past its limit that way.
func (j *Job) Post(p []byte) (full bool, err error) {
	j.mu.Lock()
	defer j.unlock()
	if !j.headPosted {
		if err := j.writeHeaderLocked(200, -1); err != nil {
			return false, err
		}
	}
	if j.aborted {
		return false, ErrAborted
	}
	if len(p) > 0 {
		j.outbox = append(j.outbox, p...)
		j.notify()
	}
	if len(j.outbox) >= outboxLimit {
		j.writtenWanted = true
		return true, nil
	}
	return false, nil
}

// WriteWhole appends all of p to the response and never waits, whatever
// the outbox holds: for a body already whole in memory, handed over by a
// caller that must not block (a completion on the loop thread, or with
// the GIL held). The caller bounds p (the bridge's BufferLimit); the
// outbox is the loop's to empty.
func (j *Job) WriteWhole(p []byte) (int, error) {
	j.mu.Lock()
	defer j.unlock()
	if !j.headPosted {
		if err := j.writeHeaderLocked(200, -1); err != nil {
			return 0, err
		}
	}
	if j.aborted {
		return 0, ErrAborted
	}
	if len(p) > 0 {
		j.outbox = append(j.outbox, p...)
		j.notify()
	}
	return len(p), nil
}

// Finish ends the response. A job finished without a posted head answers
// 200 with an empty body.
func (j *Job) Finish() error {
	j.mu.Lock()
	defer j.unlock()
	var err error
	if !j.headPosted && !j.aborted {
		err = j.writeHeaderLocked(200, 0)
	}
	j.finished = true
	j.notify()
	return err
}

// Abort ends the job without completing the response: the connection
// closes (after a 500 when no head was posted yet).
func (j *Job) Abort() {
	j.mu.Lock()
	defer j.unlock()
	j.aborted = true
	j.finished = true
	j.notify()
}

// JobGone says how a job's client left (Config.OnJobGone, SetOwner).
type JobGone uint8

const (
	// InputEnded: the client ended its side (a half-close, or the first
	// half of a close: the two look the same). It is done sending, not
	// gone: the connection still takes the response (RFC 9112 §9.6).
	InputEnded JobGone = iota + 1
	// ConnectionClosed: the connection is gone; the job's writes fail.
	ConnectionClosed
)

// SetOwner records the handler's own state for this job, which
// Config.OnJobGone receives if the client goes before Finish or Abort.
// It reports how the client had gone already (0 if it had not) before
// the handler took the job: OnJobGone will not be called for that.
func (j *Job) SetOwner(owner any) JobGone {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.owner = owner
	switch {
	case j.aborted:
		return ConnectionClosed
	case j.inputEnded:
		return InputEnded
	}
	return 0
}

// SetHeaderBytes is SetHeader for byte slices: a bridge copying fields out
// of its own buffers needs no string per field.
func (j *Job) SetHeaderBytes(name, value []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.headPosted {
		return ErrHeadWritten
	}
	fields, spans, err := http1.AppendFieldSpan(j.fields, j.fieldSpans, name, value)
	if err != nil {
		return err
	}
	j.fields, j.fieldSpans = fields, spans
	j.fieldsSet |= fieldBit(j.loop, name)
	return nil
}
