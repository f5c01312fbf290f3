package pybridge

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/m0serve/m0serve/internal/threadsched"
)

// maxThreads bounds handler threads per process: the C side names a
// thread by its index in threads.
const maxThreads = 1024

// threads maps a thread id to its state, for the callbacks from C.
var (
	threads    [maxThreads]atomic.Pointer[thread]
	threadsMu  sync.Mutex
	threadUsed [maxThreads]bool
)

// thread is one handler thread: a goroutine locked to its OS thread, with
// one Python thread state for life.
type thread struct {
	id       int
	c        *C.m0_thread
	job      *Job
	creq     C.m0_request
	panicked any // a callback's panic, raised again after the cgo call
	// batch: the jobs taken and not yet served; those after the one
	// being served go to spare threads if it waits on its client.
	batch []*Job
	// drain reads a body past its declared length to its end, where the
	// trailers are; trailers and trailersAt are where they are written,
	// by addTrailer (m0goBodyTrailers), made once: a method value made
	// per call would be an allocation.
	drain      [1]byte
	trailers   []byte
	trailersAt int
	addTrailer func(name, value string)
}

// appendTrailer writes a trailer field into t.trailers as "name\0value\0"
// where there is room, and counts the bytes it needs either way.
func (t *thread) appendTrailer(name, value string) {
	at, p := t.trailersAt, t.trailers
	if at+len(name)+len(value)+2 <= len(p) {
		copy(p[at:], name)
		p[at+len(name)] = 0
		copy(p[at+len(name)+1:], value)
		p[at+len(name)+1+len(value)] = 0
	}
	t.trailersAt = at + len(name) + len(value) + 2
}

func newThreadID() (int, error) {
	threadsMu.Lock()
	defer threadsMu.Unlock()
	for i := range threadUsed {
		if !threadUsed[i] {
			threadUsed[i] = true
			return i, nil
		}
	}
	return 0, fmt.Errorf("pybridge: more than %d handler threads", maxThreads)
}

func freeThreadID(id int) {
	threadsMu.Lock()
	threadUsed[id] = false
	threadsMu.Unlock()
}

// attach must run on the locked OS thread; it returns holding the GIL.
func attach() (*thread, error) {
	id, err := newThreadID()
	if err != nil {
		return nil, err
	}
	// Best effort, as the loop's (threadsched says why).
	_ = threadsched.Batch()
	t := &thread{id: id}
	t.c = C.m0_thread_new(C.int(id))
	if t.c == nil {
		freeThreadID(id)
		return nil, errors.New("pybridge: cannot create a Python thread state")
	}
	threads[id].Store(t)
	return t, nil
}

// detach runs with the GIL held and ends with it released.
func (t *thread) detach() {
	threads[t.id].Store(nil)
	C.m0_thread_free(t.c)
	t.c = nil
	freeThreadID(t.id)
}

func (t *thread) release() { C.m0_thread_release(t.c) }
func (t *thread) acquire() { C.m0_thread_acquire(t.c) }

// serve runs one job: one cgo call, the GIL held.
func (t *thread) serve(j *Job, mode C.int) {
	fillRequest(&t.creq, j)
	r := &j.Request
	if j.Resume {
		t.resume(j)
		return
	}
	t.job = j
	j.thread = t
	// Each pointer passed points at memory holding no Go pointer (bytes,
	// spans, the pointer-free request record), as cgo requires.
	C.m0_wsgi_serve(t.c, j.App.c, &t.creq,
		(*C.char)(unsafe.Pointer(unsafe.SliceData(r.cHead()))),
		(*C.m0_field)(unsafe.Pointer(unsafe.SliceData(r.Fields))),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(r.RemoteAddr))),
		j.Response.c, mode)
	t.job = nil
	if p := t.panicked; p != nil {
		t.panicked = nil
		panic(p)
	}
}

// resume goes on with a response Inline.Serve suspended: one cgo call,
// the GIL held. A Complete one (a file body too large to read on the
// loop thread) has nothing left to run.
func (t *thread) resume(j *Job) {
	if j.Response.Outcome() != Suspended {
		return
	}
	t.job = j
	C.m0_wsgi_resume(t.c, &t.creq, (*C.char)(unsafe.Pointer(unsafe.SliceData(j.Request.Head))), j.Response.c)
	t.job = nil
	if p := t.panicked; p != nil {
		t.panicked = nil
		panic(p)
	}
}

// The scheme's numbers are the C side's (a compile-time check).
var _ = [1]struct{}{}[int(SchemeHTTP)-C.M0_SCHEME_HTTP+int(SchemeHTTPS)-C.M0_SCHEME_HTTPS]

// fillRequest describes j's request to C (WSGI and ASGI alike).
func fillRequest(c *C.m0_request, j *Job) {
	r := &j.Request
	c.method = C.m0_span{start: C.uint32_t(r.Method.Start), end: C.uint32_t(r.Method.End)}
	c.target = C.m0_span{start: C.uint32_t(r.Target.Start), end: C.uint32_t(r.Target.End)}
	c.path = C.m0_span{start: C.uint32_t(r.Path.Start), end: C.uint32_t(r.Path.End)}
	c.query = C.m0_span{start: C.uint32_t(r.Query.Start), end: C.uint32_t(r.Query.End)}
	c.content_length = C.int64_t(r.ContentLength)
	c.chunked = 0
	if r.Chunked {
		c.chunked = 1
	}
	if j.Body == nil {
		c.content_length, c.chunked = 0, 0
	}
	c.nfields = C.uint32_t(len(r.Fields))
	c.remote_len = C.uint32_t(len(r.RemoteAddr))
	c.remote_port = C.int32_t(r.RemotePort)
	c.scheme = C.uint8_t(r.Scheme)
	c.version = C.uint8_t(r.Version)
	c.websocket = 0
	if r.WebSocket {
		c.websocket = 1
	}
	c.stream = 0
	if j.Writer != nil {
		c.stream = 1
	}
	c.buffer_limit = DefaultBufferLimit
	if j.BufferLimit > 0 {
		c.buffer_limit = C.uint32_t(min(j.BufferLimit, 1<<31))
	}
	c.gather_limit = C.uint32_t(min(max(j.GatherLimit, 0), 1<<31))
	c.gather_us = C.uint32_t(min(max(j.GatherTime.Microseconds(), 0), 1<<31))
	c.tls = C.m0_span{start: C.uint32_t(len(r.Head)), end: C.uint32_t(len(r.Head) + len(r.TLS))}
	j.BodyErr = nil
}

// Handlers is a group of handler threads serving jobs from one source.
type Handlers struct {
	ip    *Interpreter
	wg    sync.WaitGroup
	ended sync.Once
	// src and done, for spare threads (spare.go).
	src    JobSource
	done   Completer
	spares spares
}

// StartHandlers starts n handler threads taking up to batch jobs at a
// time from src and handing each to done when its response is final. The
// group ends when src is closed and drained; Wait for it before Close.
func (ip *Interpreter) StartHandlers(n, batch int, src JobSource, done Completer) (*Handlers, error) {
	if n < 1 || batch < 1 {
		return nil, fmt.Errorf("pybridge: %d handler threads taking %d jobs at a time", n, batch)
	}
	h := &Handlers{ip: ip, src: src, done: done}
	if err := h.spares.enable(h, ip.clientWaits()); err != nil {
		return nil, err
	}
	if err := ip.handlerStarted(); err != nil {
		return nil, err
	}
	started := make(chan error, n)
	h.wg.Add(n)
	for i := 0; i < n; i++ {
		go h.run(batch, src, done, started)
	}
	var err error
	for i := 0; i < n; i++ {
		if e := <-started; e != nil && err == nil {
			err = e
		}
	}
	return h, err
}

func (h *Handlers) run(batch int, src JobSource, done Completer, started chan<- error) {
	defer h.wg.Done()
	runtime.LockOSThread()
	defer threadsched.Unlock() // attach set SCHED_BATCH
	t, err := attach()
	started <- err
	if err != nil {
		return
	}
	jobs := make([]*Job, batch)
	t.batch = jobs
	var yielder threadsched.Yielder
	for {
		yielder.Maybe(time.Now().UnixNano()) // threadsched.Yielder says why
		h.yield(t)                           // spare.go
		n := h.spares.takeHanded(jobs)
		if n == 0 {
			n = src.TryTake(jobs)
		}
		if n == 0 {
			// Park without the GIL, so the other handlers run Python.
			t.release()
			h.spares.parking()
			if ws, ok := src.(WaitSource); ok {
				open := ws.Wait()
				if open {
					h.spares.unparking()
				}
				t.acquire()
				if !open {
					break
				}
				continue // the job may have gone to a thread already running
			}
			n = src.Take(jobs)
			if n > 0 {
				h.spares.unparking()
			}
			t.acquire()
			if n == 0 {
				break
			}
		}
		for i, j := range jobs[:n] {
			if j == nil {
				break // the rest went to spares (BeginClientWait)
			}
			jobs[i] = nil
			t.serve(j, partFull)
			done.Complete(j)
		}
	}
	h.spares.close()
	t.detach()
}

// Wait returns when every thread of the group has ended (its source was
// closed and drained).
func (h *Handlers) Wait() {
	h.wg.Wait()
	h.ended.Do(func() {
		h.ip.mu.Lock()
		h.ip.handlers--
		h.ip.mu.Unlock()
	})
}

// Parts of a request m0_wsgi_serve can stop after, for the per-part
// benchmarks.
const (
	partFull    = C.M0_SERVE_FULL    // the whole request
	partEnviron = C.M0_SERVE_ENVIRON // build the environ and drop it
	partCall    = C.M0_SERVE_CALL    // environ, the app call, close(); no response read
)

// onThread runs fn on a thread of its own, attached and holding the GIL,
// as a handler thread is; for serving outside a Handlers group.
func onThread(fn func(t *thread)) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer threadsched.Unlock() // attach set SCHED_BATCH
		t, err := attach()
		if err != nil {
			errc <- err
			return
		}
		fn(t)
		t.detach()
		errc <- nil
	}()
	return <-errc
}

func cPart(part int) C.int { return C.int(part) }
