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

// asgiSlot is the Go side of one request in flight on an ASGI executor:
// the job and what its ops wait on. The request's protocol
// state is the C object's of the same slot id (asgi_conn.c); this holds
// only what the job's hand-back waits on.
//
// A streamed response piece is posted to a PostWriter (the server's),
// and a WebSocket message to a WebSocketPoster: nothing blocks, and the
// send resumes at the next delivery, or once the server says the output
// it filled has gone on (Written, the poster's SetWritten function).
// The request body, and writes to a Writer or WebSocketConn without Post,
// move through goroutines of the slot's own (made at first use, kept
// with the slot), because BodyReader.Read, WebSocketConn.Send and
// BodyWriter.Write block and the event loop must not: the goroutine does the blocking call without the GIL, and its
// result comes back as an event through the wake descriptor, in the same
// batch as new jobs. One read and one write at a time per request: a
// send awaits its write, which is the back-pressure a full outbox exerts
// (bounded memory: one piece per request out, and one per other task
// sending on it meanwhile, queued in asgi_conn.c).
//
// Fields but the channels are the executor thread's.
type asgiSlot struct {
	id  int
	ex  *ASGIExecutor
	job *Job

	reading, writing bool // an op is out (on a goroutine, or posted)
	// posted: the write out is a piece the Writer took (PostWriter) that
	// left its outbox full: Written or ClientGone resumes it.
	posted    bool
	completed bool // the response is final; done waits for the ops
	released  bool // the task ended

	// ws is the accepted WebSocket's event sink, conn its handle.
	ws     *asgiWebSocket
	wsConn WebSocketConn

	reads   chan *Job
	writes  chan asgiWrite
	readBuf []byte // lent by the executor while a read is out
}

type asgiWrite struct {
	job      *Job
	head     bool
	p        unsafe.Pointer // C memory: the bytes object the slot holds
	n        int
	trailers *Response
	// conn: a WebSocket message (binary or text) rather than a body piece.
	conn   WebSocketConn
	binary bool
}

type asgiEventKind uint8

const (
	eventRead asgiEventKind = iota + 1
	eventWrite
	eventGone       // the server says the client left (ClientGone)
	eventInputEnded // the client ended its side (ClientInputEnded)
	eventWSMessage  // a WebSocket message from the client
	eventWSClosed   // the WebSocket ended
	eventWritten    // the server moved a posted piece on (Written)
	eventWSWritten  // a posted WebSocket message's output went on (WebSocketPoster)
)

type asgiEvent struct {
	slot *asgiSlot
	job  *Job // eventGone, eventInputEnded, eventWritten: the slot is looked up on the executor's thread
	kind asgiEventKind
	n    int   // read: bytes in readBuf; 0 end of body; WebSocket: binary (1) or the close code
	err  error // read: the reader failed; write: the client is gone
	ws   *asgiWebSocket
	data []byte // a WebSocket message, or the close reason
}

// asgiReadSize is the largest request body piece one receive returns.
const asgiReadSize = 64 << 10

// TrailerWriter is what a BodyWriter implements to send ASGI trailers
// (http.response.trailers): called once after the last body block, with
// the trailer fields as a Response's headers. Without it trailers are
// dropped.
type TrailerWriter interface {
	WriteTrailers(trailers *Response) error
}

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
	asgiSlotsMu.Unlock()
	if s == nil {
		return nil
	}
	s.ex, s.job = ex, j
	j.slot = s
	s.reading, s.writing, s.completed, s.released, s.posted = false, false, false, false, false
	return s
}

func (s *asgiSlot) free() {
	s.ex, s.job = nil, nil
	s.ws, s.wsConn = nil, nil
	asgiSlotsMu.Lock()
	asgiFreeSlots = append(asgiFreeSlots, s)
	asgiSlotsMu.Unlock()
}

// settle finishes what waited on the slot's ops: the job's completion,
// then the slot's reuse.
func (s *asgiSlot) settle() {
	if s.reading || s.writing {
		return
	}
	if s.completed && s.job != nil {
		j := s.job
		s.job, j.slot = nil, nil
		s.ex.complete(j)
	}
	if s.released && s.job == nil {
		s.free()
	}
}

// complete: the response is final (C has set the outcome). The job goes
// back once no goroutine still uses its reader or writer.
func (s *asgiSlot) complete() {
	s.completed = true
	s.settle()
}

func (s *asgiSlot) release() {
	s.released = true
	s.settle()
}

func (s *asgiSlot) read() {
	if s.reads == nil {
		s.reads = make(chan *Job, 1)
		go s.readLoop()
	}
	s.readBuf = s.ex.lendReadBuffer()
	s.reading = true
	s.reads <- s.job
}

// readLoop serves the slot's reads for its life. s.ex is read after each
// receive: it changes only while no op is out.
func (s *asgiSlot) readLoop() {
	for j := range s.reads {
		n, err := readPiece(j.Body, s.readBuf)
		e := asgiEvent{slot: s, kind: eventRead, n: n, err: err}
		if err != nil {
			j.BodyErr = err
		}
		s.ex.post(e)
	}
}

func readPiece(r BodyReader, p []byte) (int, error) {
	if r == nil {
		return 0, nil
	}
	for {
		n, err := r.Read(p)
		if n > 0 {
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// PostWriter is a BodyWriter that takes a piece without blocking, called
// on the executor's thread (or, driven, the loop thread) with the GIL
// held: the executor needs no goroutine for its writes. Post copies all
// of p; full says the Writer is past its limit with it, and the send
// waits until the server calls ASGIExecutor.Written for the job (or
// ClientGone). WriteHead and a TrailerWriter's WriteTrailers must not
// block either.
type PostWriter interface {
	Post(p []byte) (full bool, err error)
}

func (s *asgiSlot) write(w asgiWrite) {
	if p, ok := w.conn.(WebSocketPoster); ok {
		// A WebSocket message, posted as a body piece is below.
		s.writing = true
		full, err := p.Post(w.binary, unsafe.Slice((*byte)(w.p), w.n))
		if full && err == nil {
			s.posted = true
			return
		}
		s.ex.postOwn(asgiEvent{slot: s, kind: eventWrite, err: err})
		return
	}
	// A body piece (not a WebSocket message, whose job is done with):
	// posted, with no goroutine. The send resumes at the next delivery,
	// or once the server has moved a full outbox on (Written).
	if pw, ok := s.postWriter(w); ok {
		s.writing = true
		full, err := s.post(&w, pw)
		if full && err == nil {
			s.posted = true
			return
		}
		s.ex.postOwn(asgiEvent{slot: s, kind: eventWrite, err: err})
		return
	}
	if s.writes == nil {
		s.writes = make(chan asgiWrite, 1)
		go s.writeLoop()
	}
	s.writing = true
	w.job = s.job
	s.writes <- w
}

func (s *asgiSlot) postWriter(w asgiWrite) (PostWriter, bool) {
	if w.conn != nil {
		return nil, false
	}
	pw, ok := s.job.Writer.(PostWriter)
	return pw, ok
}

// post hands w to a PostWriter: the head, the piece, the trailers, none
// of which blocks.
func (s *asgiSlot) post(w *asgiWrite, pw PostWriter) (full bool, err error) {
	bw := s.job.Writer
	if w.head {
		if err := bw.WriteHead(s.job.Response); err != nil {
			return false, err
		}
	}
	if w.n > 0 {
		if full, err = pw.Post(unsafe.Slice((*byte)(w.p), w.n)); err != nil {
			return false, err
		}
	}
	if w.trailers != nil {
		if t, ok := bw.(TrailerWriter); ok {
			return full, t.WriteTrailers(w.trailers)
		}
	}
	return full, nil
}

func (s *asgiSlot) writeLoop() {
	for w := range s.writes {
		err := writePiece(w)
		s.ex.post(asgiEvent{slot: s, kind: eventWrite, err: err})
	}
}

func writePiece(w asgiWrite) error {
	if w.conn != nil {
		return w.conn.Send(w.binary, unsafe.Slice((*byte)(w.p), w.n))
	}
	bw := w.job.Writer
	if bw == nil {
		return errors.New("no writer")
	}
	if w.head {
		if err := bw.WriteHead(w.job.Response); err != nil {
			return err
		}
	}
	if w.n > 0 {
		if _, err := bw.Write(unsafe.Slice((*byte)(w.p), w.n)); err != nil {
			return err
		}
	}
	if w.trailers != nil {
		if tw, ok := bw.(TrailerWriter); ok {
			return tw.WriteTrailers(w.trailers)
		}
	}
	return nil
}

// deliver runs on the executor's thread: a finished op back to Python.
func (ex *ASGIExecutor) deliver(e *asgiEvent) {
	s := e.slot
	switch e.kind {
	case eventWSMessage, eventWSClosed, eventWSWritten:
		ex.deliverWebSocket(e)
		return
	case eventWritten:
		if s = e.job.slot; s == nil || s.job != e.job || !s.posted {
			return
		}
		s.posted, s.writing = false, false
		C.m0_asgi_resume_write(C.int(s.id), 0)
	case eventGone, eventInputEnded:
		// Only while the job is still in flight here: a job completed
		// (and perhaps handed over again) since has nothing to tell.
		if s = e.job.slot; s == nil || s.job != e.job || s.completed {
			return
		}
		if e.kind == eventGone && s.posted {
			// The posted piece will not go out: its send fails, which
			// tells the request its client left.
			s.posted, s.writing = false, false
			C.m0_asgi_resume_write(C.int(s.id), -1)
			break
		}
		if e.kind == eventGone {
			C.m0_asgi_client_gone(C.int(s.id))
		} else {
			C.m0_asgi_input_ended(C.int(s.id))
		}
	case eventRead:
		s.reading = false
		n := C.long(e.n)
		if e.err != nil {
			n = -1
		}
		// The resume may send the next read out (a second receive
		// waits), with a buffer of its own.
		buf := s.readBuf
		s.readBuf = nil
		// Released or not: C drops its reference once no op is out.
		C.m0_asgi_resume_read(C.int(s.id), (*C.char)(unsafe.Pointer(unsafe.SliceData(buf))), n)
		ex.readBufs = append(ex.readBufs, buf)
	case eventWrite:
		s.writing = false
		rc := C.int(0)
		if e.err != nil {
			rc = -1
		}
		// Always: it drops the held bytes, released or not.
		C.m0_asgi_resume_write(C.int(s.id), rc)
	}
	s.settle()
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
// PostWriter took with its outbox full: the send waiting on it resumes.
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
