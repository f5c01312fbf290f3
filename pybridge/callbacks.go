package pybridge

/*
#include <stddef.h>
*/
import "C"

import (
	"errors"
	"io"
	"unsafe"
)

// Calls from C, made with the GIL released: they may block.

// m0goBodyRead reads at most n body bytes into dst: the count, 0 at the
// end of the body, -1 when the reader failed.
//
//export m0goBodyRead
func m0goBodyRead(thread C.int, dst *C.char, n C.size_t) (got C.long) {
	t := threads[thread].Load()
	if t == nil || t.job == nil || t.job.Body == nil {
		return 0
	}
	defer catch(t, &got)
	p := unsafe.Slice((*byte)(unsafe.Pointer(dst)), int(n))
	for {
		k, err := t.job.Body.Read(p)
		if k > 0 {
			return C.long(k)
		}
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			t.job.BodyErr = err
			return -1
		}
	}
}

// TrailerSource is a BodyReader that holds the request's trailer fields
// (HTTP/2's, RFC 9113 §8.1) once Read has returned io.EOF: loop.Job.
// RequestTrailers calls f with each, names in lower case, in the order
// received; the strings are the reader's until its job completes.
type TrailerSource interface {
	RequestTrailers(f func(name, value string))
}

// m0goBodyTrailers waits for the end of the body and writes its trailers
// into dst as "name\0value\0" pairs: the bytes they need, which may be
// more than n (C calls again with room); 0 without any, -1 when the body
// failed first.
//
//export m0goBodyTrailers
func m0goBodyTrailers(thread C.int, dst *C.char, n C.size_t) (need C.long) {
	t := threads[thread].Load()
	if t == nil || t.job == nil || t.job.Body == nil {
		return 0
	}
	defer catch(t, &need)
	source, ok := t.job.Body.(TrailerSource)
	if !ok {
		return 0
	}
	for {
		// Past a declared length nothing but the end can come: the
		// codec refuses more (RFC 9113 §8.1.1).
		_, err := t.job.Body.Read(t.drain[:])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return -1
		}
	}
	t.trailers, t.trailersAt = nil, 0
	if dst != nil {
		t.trailers = unsafe.Slice((*byte)(unsafe.Pointer(dst)), int(n))
	}
	if t.addTrailer == nil {
		t.addTrailer = t.appendTrailer
	}
	source.RequestTrailers(t.addTrailer)
	t.trailers = nil // C memory: not kept past the call
	return C.long(t.trailersAt)
}

// m0goStream passes the head (op 1) or a body block (op 2) to the job's
// BodyWriter: 0, or -1 when the client is gone.
//
//export m0goStream
func m0goStream(thread C.int, op C.int, p *C.char, n C.size_t) (rc C.int) {
	t := threads[thread].Load()
	if t == nil || t.job == nil || t.job.Writer == nil {
		return -1
	}
	defer catch(t, &rc)
	w := t.job.Writer
	var err error
	switch op {
	case 1:
		err = w.WriteHead(t.job.Response)
	case 2:
		_, err = w.Write(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
	default:
		err = errors.New("unknown stream op")
	}
	if err != nil {
		return -1
	}
	return 0
}

// catch stops a panic in a BodyReader or BodyWriter at the callback: a
// panic must not unwind through the C and Python frames below it. The
// call fails (the request aborts) and serve panics again with the same
// value once the cgo call has returned.
func catch[T C.int | C.long](t *thread, ret *T) {
	if p := recover(); p != nil {
		t.panicked = p
		*ret = -1
	}
}
