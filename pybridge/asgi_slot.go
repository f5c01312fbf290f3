package pybridge

/*
#include "asgi.h"
*/
import "C"

import (
	"errors"
	"io"
	"sync"
	"unsafe"
)

// asgiSlot is the Go half of one request in flight on an ASGI executor:
// the job, its Port, its C connection, and what an op out waits on. The
// request's protocol state, and the slot's life, are the C connection's
// (asgi_conn.c): C counts the read and the write out and decides, in its
// settle alone, when the job goes back (m0goASGIComplete) and when the id
// is free again (m0goASGIFree). Go keeps no flag of its own for either.
// The table of slots is this file's alone: C calls back by id, Go calls
// C with the connection.
//
// Nothing here blocks, by construction: a body read is a TryRead of the
// job's Body (a TryReader), a streamed response piece is posted to its
// Writer (a Port), a WebSocket message to the accepted WebSocketConn,
// all on the executor's thread (driven, the loop thread)
// with the GIL held. A read that finds nothing waits for the server's
// Readable; a post that fills the output waits for its Written (or the
// conn's written function): that wait is the back-pressure, and no
// thread blocks on it. One read and one write at a time per request: a
// send awaits its post (bounded memory: one piece per request past the
// output's limit, and one per other task sending on it meanwhile, queued
// in asgi_conn.c). A read whose piece is in, and a post with room, are
// answered inside the call; the rest come back as events, delivered in
// the same batch as new jobs.
//
// Fields are the executor thread's; ex is written under asgiSlotsMu too,
// for abandonWaits' look across the table.
type asgiSlot struct {
	id   int
	ex   *ASGIExecutor
	job  *Job
	port Port // the job's Writer as a Port; nil: none, or not a Port
	// conn is the C connection, holding the reference C's settle lets
	// go of in m0goASGIFree (nil from then: news for it is dropped).
	conn *C.m0_asgi_conn

	// readWaits: the read out is a TryRead that found nothing yet:
	// Readable (or ClientGone) tries again.
	readWaits bool
	// writeWaits: the write out is a piece the Port took that left its
	// output full: Written (the conn's written function for a WebSocket
	// message) or ClientGone resumes it.
	writeWaits bool

	// ws is the accepted WebSocket's event sink, wsConn its handle.
	ws     *asgiWebSocket
	wsConn WebSocketConn

	readBuf []byte // lent by the executor while a read is out
}

type asgiWrite struct {
	head     bool
	p        unsafe.Pointer // C memory: the bytes object the slot holds
	n        int
	trailers *Response
	// message: a WebSocket message (binary or text) rather than a body
	// piece.
	message, binary bool
}

type asgiEventKind uint8

const (
	eventWrite      asgiEventKind = iota + 1 // a write that failed
	eventGone                                // the server says the client left (ClientGone)
	eventInputEnded                          // the client ended its side (ClientInputEnded)
	eventWSMessage                           // a WebSocket message from the client
	eventWSClosed                            // the WebSocket ended
	eventWritten                             // the server moved a posted piece on (Written)
	eventWSWritten                           // a posted WebSocket message's output went on (WebSocketConn.SetWritten)
	eventReadable                            // the server has body news for a pending TryRead (Readable)
)

type asgiEvent struct {
	slot *asgiSlot
	job  *Job // eventGone, eventInputEnded, eventWritten, eventReadable: the slot is looked up on the executor's thread
	kind asgiEventKind
	n    int   // WebSocket: binary (1), or the close code
	err  error // eventWSWritten: the connection ended (ErrWebSocketGone)
	ws   *asgiWebSocket
	data []byte // a WebSocket message, or the close reason
}

// asgiReadSize is the largest request body piece one receive returns.
const asgiReadSize = 64 << 10

var (
	asgiSlots     [C.M0_ASGI_MAX_SLOTS]*asgiSlot
	asgiSlotsMu   sync.Mutex
	asgiFreeSlots []*asgiSlot
	asgiSlotCount int
)

// newASGISlot takes a free slot, or nil when every slot of the process
// is in use (executors whose MaxInFlight add up past the table).
func newASGISlot(ex *ASGIExecutor, j *Job) *asgiSlot {
	asgiSlotsMu.Lock()
	var s *asgiSlot
	if n := len(asgiFreeSlots); n > 0 {
		s = asgiFreeSlots[n-1]
		asgiFreeSlots[n-1] = nil
		asgiFreeSlots = asgiFreeSlots[:n-1]
	} else if asgiSlotCount < len(asgiSlots) {
		s = &asgiSlot{id: asgiSlotCount}
		asgiSlots[s.id] = s
		asgiSlotCount++
	}
	if s != nil {
		s.ex = ex
	}
	asgiSlotsMu.Unlock()
	if s == nil {
		return nil
	}
	s.job = j
	s.port, _ = j.Writer.(Port)
	s.readWaits, s.writeWaits = false, false
	j.slot = s
	return s
}

// handBack: C's settle says the response is final and no op is out.
func (s *asgiSlot) handBack() {
	j := s.job
	s.job, j.slot = nil, nil
	s.ex.complete(j)
}

// free: C's settle has let the connection go; the id may go out again.
func (s *asgiSlot) free() {
	s.job, s.port, s.conn = nil, nil, nil
	s.ws, s.wsConn = nil, nil
	asgiSlotsMu.Lock()
	s.ex = nil
	asgiFreeSlots = append(asgiFreeSlots, s)
	asgiSlotsMu.Unlock()
}

// read answers the app's receive with what has arrived (a piece, the
// end, an error), resumed right here, inside the call (the receive's
// future is done before the app awaits it); or, with nothing in yet,
// leaves the read out until Readable.
func (s *asgiSlot) read() {
	if s.job.Body == nil {
		s.ex.resumeRead(s, 0, nil)
		return
	}
	r, ok := s.job.Body.(TryReader)
	if !ok {
		s.job.BodyErr = errNotTryReader
		s.ex.resumeRead(s, 0, errNotTryReader)
		return
	}
	if n, err, ok := s.tryRead(r); ok {
		s.ex.resumeRead(s, n, err)
	}
}

// tryRead reads what has arrived into a lent buffer (s.readBuf); ok is
// false when nothing has, and the read waits for Readable holding no
// buffer.
func (s *asgiSlot) tryRead(r TryReader) (n int, err error, ok bool) {
	buf := s.ex.lendReadBuffer()
	n, pending, err := r.TryRead(buf)
	if pending {
		s.ex.readBufs = append(s.ex.readBufs, buf)
		s.readWaits = true
		return 0, nil, false
	}
	s.readBuf = buf
	if errors.Is(err, io.EOF) {
		return 0, nil, true
	}
	if err != nil {
		s.job.BodyErr = err
	}
	return n, err, true
}

// write posts a body piece (with the head before it and the trailers
// after, when it carries them) or a WebSocket message. done: the port
// took it with room to spare, and the send is over (C resumes nothing).
// Otherwise the write is out: until Written when the post left the
// output full, or until the next delivery when it failed (the send
// raises then, outside this call).
func (s *asgiSlot) write(w asgiWrite) (done bool) {
	var full bool
	var err error
	switch {
	case !w.message:
		full, err = s.post(&w)
	case s.wsConn == nil:
		err = ErrWebSocketGone
	default:
		full, err = s.wsConn.Post(w.binary, unsafe.Slice((*byte)(w.p), w.n))
	}
	switch {
	case err != nil:
		s.ex.postOwn(asgiEvent{slot: s, kind: eventWrite})
		return false
	case full:
		s.writeWaits = true
		return false
	}
	if !w.message {
		s.ex.streamedHere = s.ex.stepping
	}
	return true
}

// endWriteWait resumes the write waiting for Written (or, for a
// WebSocket message, the conn's written function): as failed when the
// client left or the executor stops. With no such write out it does
// nothing.
func (s *asgiSlot) endWriteWait(failed bool) {
	if !s.writeWaits {
		return
	}
	s.writeWaits = false
	rc := C.int(0)
	if failed {
		rc = -1
	}
	C.m0_asgi_resume_write(s.conn, rc)
}

// post hands a body piece to the job's Port: the head, the piece, the
// trailers, none of which blocks.
func (s *asgiSlot) post(w *asgiWrite) (full bool, err error) {
	if s.port == nil {
		return false, errNotPort
	}
	if w.head {
		if err := s.port.WriteHead(s.job.Response); err != nil {
			return false, err
		}
	}
	if w.n > 0 {
		if full, err = s.port.Post(unsafe.Slice((*byte)(w.p), w.n)); err != nil {
			return false, err
		}
	}
	if w.trailers != nil {
		return full, s.port.WriteTrailers(w.trailers)
	}
	return full, nil
}

// deliver runs on the executor's thread: a finished op back to Python.
// An op's resume may end the slot (C's settle frees it): nothing here
// touches s after one.
func (ex *ASGIExecutor) deliver(e *asgiEvent) {
	s := e.slot
	switch e.kind {
	case eventWSMessage, eventWSClosed, eventWSWritten:
		ex.deliverWebSocket(e)
	case eventWritten:
		if s = e.job.slot; s != nil && s.job == e.job {
			s.endWriteWait(false)
		}
	case eventGone, eventInputEnded:
		// Only while the job is still in flight here: a job handed
		// back (and perhaps handed over again) since has nothing to tell.
		if s = e.job.slot; s == nil || s.job != e.job {
			return
		}
		switch {
		case e.kind == eventGone && s.writeWaits:
			// The posted piece will not go out: its send fails, which
			// tells the request its client left.
			s.endWriteWait(true)
		case e.kind == eventGone:
			C.m0_asgi_client_gone(s.conn)
		default:
			C.m0_asgi_input_ended(s.conn)
		}
	case eventReadable:
		if s = e.job.slot; s == nil || s.job != e.job || !s.readWaits {
			return
		}
		s.readWaits = false
		if n, err, ok := s.tryRead(s.job.Body.(TryReader)); ok {
			ex.resumeRead(s, n, err)
		}
	case eventWrite:
		// Posted for a failed write alone (write): its send raises.
		C.m0_asgi_resume_write(s.conn, -1)
	}
}

// resumeRead hands a finished read to Python: n bytes of s.readBuf, 0
// at the body's end, or the reader's error.
func (ex *ASGIExecutor) resumeRead(s *asgiSlot, n int, err error) {
	size := C.long(n)
	if err != nil {
		size = -1
	}
	// The resume may send the next read out (a second receive waits),
	// with a buffer of its own.
	buf := s.readBuf
	s.readBuf = nil
	C.m0_asgi_resume_read(s.conn, (*C.char)(unsafe.Pointer(unsafe.SliceData(buf))), size)
	if buf != nil {
		ex.readBufs = append(ex.readBufs, buf)
	}
}

// Readable tells the executor that the body a TryRead of j found empty
// has news (bytes, its end, an error): the read tries again. Safe from
// any goroutine (the server calls it on its loop thread); for a job with
// no such read out it does nothing.
func (ex *ASGIExecutor) Readable(j *Job) {
	ex.post(asgiEvent{job: j, kind: eventReadable})
}

// ClientGone tells the executor that the client of j, a job it has not
// completed yet, has gone (the connection closed): the app's receive
// returns http.disconnect, its next send raises (an OSError subclass),
// and the job completes Aborted when the app stops, with no traceback
// blamed on the app. Safe from any goroutine; a call for a job already
// completed is ignored.
func (ex *ASGIExecutor) ClientGone(j *Job) {
	ex.post(asgiEvent{job: j, kind: eventGone})
}

// Written tells the executor that the server has moved on the piece a
// Port took with its outbox full: the send waiting on it resumes.
// Call it from any goroutine (the server calls it on its loop thread,
// whose kick of itself costs nothing); for a job with no such piece out
// it does nothing.
func (ex *ASGIExecutor) Written(j *Job) {
	ex.post(asgiEvent{job: j, kind: eventWritten})
}

// ClientInputEnded tells the executor that the client of j ended its
// side of the connection (a half-close, or a close not yet known as
// one): it sends no more, and may still read. A receive waiting after
// the body returns http.disconnect, as it would for a close; sends go on
// and the response goes out (RFC 9112 §9.6). Should the connection then
// close, ClientGone follows. Safe from any goroutine.
func (ex *ASGIExecutor) ClientInputEnded(j *Job) {
	ex.post(asgiEvent{job: j, kind: eventInputEnded})
}

// lendReadBuffer lends a read its buffer for the read's duration only,
// so idle slots hold none: a thousand uploads in flight take a thousand
// buffers, returned as each piece is delivered and kept for the next
// reads (executor thread only).
func (ex *ASGIExecutor) lendReadBuffer() []byte {
	if n := len(ex.readBufs); n > 0 {
		b := ex.readBufs[n-1]
		ex.readBufs[n-1] = nil
		ex.readBufs = ex.readBufs[:n-1]
		return b
	}
	return make([]byte, asgiReadSize)
}
