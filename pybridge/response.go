package pybridge

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/m0serve/m0serve/http1"
)

// Outcome is what became of a response.
type Outcome uint8

const (
	// Complete: status, headers and the whole body are in the Response.
	Complete Outcome = 1
	// Streamed: the head and the body went to the job's BodyWriter, and
	// the body ended well; the server ends the framing (last chunk).
	Streamed Outcome = 2
	// Aborted: the head went out, then the app failed or the client
	// left; the server closes the connection without a valid end.
	Aborted Outcome = 3
	// Upgraded: an ASGI app accepted a WebSocket (Port.AcceptWebSocket);
	// the job is the connection's now: finish nothing.
	Upgraded Outcome = 4
	// Suspended: without a Writer, the body passed the job's GatherLimit;
	// the head and the body so far are in the Response, and the rest of
	// the app's iterable waits in it for a job with a Writer and Resume.
	Suspended Outcome = 5
)

// BodyWriter takes a response whose body the app produces piece by piece
// (any iterable but a list or tuple of bytes, or write()). Each method
// may block for back-pressure: the handler thread releases the GIL first.
// An error means the client is gone: the response aborts.
type BodyWriter interface {
	// WriteHead is called once, at the first body byte: resp's status and
	// headers are final. The body's length is unknown to the bridge (the
	// app may have sent Content-Length).
	WriteHead(resp *Response) error
	// Write takes one block of the body and sends it without waiting for
	// the next, as PEP 3333 asks. p is valid only during the call.
	Write(p []byte) (int, error)
}

// Response is a job-owned arena in C memory that the bridge writes the
// response into. The byte slices its methods return point into it and are
// valid until the next request served into it or Free.
type Response struct {
	c *C.m0_response
}

// NewResponse allocates an empty arena; it grows to the largest response
// it holds and keeps that capacity across requests.
func NewResponse() *Response {
	c := C.m0_response_new()
	if c == nil {
		panic("pybridge: out of memory for a response arena")
	}
	return &Response{c: c}
}

// Free releases the arena.
func (r *Response) Free() {
	C.m0_response_free(r.c)
	r.c = nil
}

// Release ends the response held (its slices are invalid from here on)
// and gives back the buffer of a large one at once, rather than at the
// next request served into the arena: an idle server does not hold its
// largest response's memory.
func (r *Response) Release() {
	C.m0_response_reset(r.c)
	C.m0_response_trim(r.c)
}

func (r *Response) bytes(s C.m0_span) []byte {
	if s.end == s.start {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(r.c.buf)), int(r.c.len))[s.start:s.end:s.end]
}

// Outcome says how to finish the response.
func (r *Response) Outcome() Outcome { return Outcome(r.c.outcome) }

// AppError reports that the app failed: the 500 (Complete) or the abort is
// the bridge's, and the traceback went to stderr.
func (r *Response) AppError() bool { return r.c.app_error != 0 }

// Status is the status code.
func (r *Response) Status() int { return int(r.c.status) }

// Reason is the reason phrase the app gave (latin-1).
func (r *Response) Reason() []byte { return r.bytes(r.c.reason) }

// HeaderLen is the number of header fields.
func (r *Response) HeaderLen() int { return int(r.c.nheaders) }

// Header returns the i-th field as the app gave it (latin-1, validated: a
// token name; no CR, LF, NUL or other control in the value; no hop-by-hop
// field).
func (r *Response) Header(i int) (name, value []byte) {
	pair := unsafe.Slice(r.c.headers, 2*int(r.c.nheaders))[2*i:]
	return r.bytes(pair[0]), r.bytes(pair[1])
}

// Body is the whole body of a Complete response.
func (r *Response) Body() []byte { return r.bytes(r.c.body) }

// ContentLength is the body's length: of a Complete response; of a
// streamed list body over the job's BufferLimit (set before WriteHead);
// -1 for a streamed body of unknown length. A Content-Length field the
// app set is among the headers (AppContentLength); for HEAD it is the
// one to send.
func (r *Response) ContentLength() int64 { return int64(r.c.content_length) }

// File reports a body that is a file: a wsgi.file_wrapper over a regular
// file, answered with the file itself so its bytes never pass through
// Python. The server sends length bytes of fd from offset (sendfile), with
// ContentLength == length. The descriptor stays the arena's, closed at
// the next request or Free, unless TakeFile takes it.
func (r *Response) File() (fd int, offset, length int64, ok bool) {
	if r.c.file_fd < 0 {
		return -1, 0, 0, false
	}
	return int(r.c.file_fd), int64(r.c.file_offset), int64(r.c.file_length), true
}

// TakeFile is File, with the descriptor now the caller's to close (for a
// send that outlives the next request served into this arena).
func (r *Response) TakeFile() (fd int, offset, length int64, ok bool) {
	fd, offset, length, ok = r.File()
	r.c.file_fd = -1
	return fd, offset, length, ok
}

// AppContentLength is the value of the Content-Length field the app set:
// -1 when there is none or it is not a plain decimal number.
func (r *Response) AppContentLength() int64 {
	for i := 0; i < r.HeaderLen(); i++ {
		name, value := r.Header(i)
		if !http1.EqualFold(name, "content-length") {
			continue
		}
		if len(value) == 0 || len(value) > 18 {
			return -1
		}
		var n int64
		for _, c := range value {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int64(c-'0')
		}
		return n
	}
	return -1
}

// capacity is the arena's buffer size, for tests.
func (r *Response) capacity() int { return int(r.c.cap) }

// Close reports that the app set "Connection: close": the connection
// should end after this response.
func (r *Response) Close() bool { return r.c.close != 0 }

// DroppedField is the name of the first other hop-by-hop field the app
// set (Keep-Alive, Upgrade, Transfer-Encoding, ...), which is not among
// the headers; nil if none.
func (r *Response) DroppedField() []byte { return r.bytes(r.c.dropped) }
