package server

import (
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
	"golang.org/x/sys/unix"
)

// inlineWSGI runs WSGI requests on the loop thread itself, with no
// handoff to a handler thread and back. With --threads 0 it runs every
// request without a body (bjoern's model); with --wsgi-inline auto, those
// its policy allows (inline_policy.go), handing the rest to the handler
// threads. At one connection the handoff (two thread wakes) is most of
// what a Python request costs above the native hello; from 16 connections
// up each wake carries a batch and it nearly vanishes (README.md,
// "Handler threads", has the figures).
//
// The price is the loop's: while the app runs, no other connection of
// the worker is read or written, and a response is gathered before it is
// sent. A request with a body is deferred to a handler thread as usual,
// since its body arrives through the loop.
type inlineWSGI struct {
	pool *bridgePool
	ip   *pybridge.Interpreter
	// policy decides which requests run inline (--wsgi-inline auto); nil:
	// every request without a body (--threads 0).
	policy *inlinePolicy
	// in is attached on the loop thread at the first request (the loop
	// thread exists only once Run has started) and detached by exit.
	in        *pybridge.Inline
	attachErr error

	job      pybridge.Job
	remote   []byte
	file     []byte // a file body, read whole
	logLine  []byte
	logEntry accessEntry
	lines    *loopLines // set before the loop starts
}

func newInlineWSGI(pool *bridgePool, ip *pybridge.Interpreter) *inlineWSGI {
	h := &inlineWSGI{pool: pool, ip: ip, remote: make([]byte, 0, 64)}
	h.job.App = pool.app
	h.job.Response = pybridge.NewResponse()
	h.job.GatherLimit, h.job.GatherTime = inlineGatherLimit, inlineBudget
	return h
}

// ServeInline implements loop.Handler.
func (h *inlineWSGI) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	if h.attachErr != nil || req.HasBody() || h.policy != nil && !h.policy.allow(req) {
		w.Defer()
		return
	}
	if h.in == nil {
		in, err := h.ip.AttachInline()
		if err != nil {
			// Serve on the handler thread from now on; say so once.
			h.attachErr = err
			h.pool.logf("m0serve: warning: --threads 0: %v; requests go to the handler thread", err)
			w.Defer()
			return
		}
		h.in = in
	}
	var arrived time.Time
	if h.policy != nil || h.pool.accessLog && h.pool.logFormat.timed {
		arrived = time.Now()
	}
	j := &h.job
	j.Request.FromHTTP1(req.Request, req.Head())
	h.remote, j.Request.RemotePort, j.Request.Scheme = h.pool.proxy.client(h.remote, req.RemoteAddr(), &req.Request.Header)
	j.Request.RemoteAddr = h.remote
	j.Request.TLS = req.TLS()
	record := h.pool.inFlight.Claim(req.Request.Bytes(req.Request.Method), req.Request.Bytes(req.Request.Target))
	if h.policy != nil {
		h.policy.inAppSince.Store(arrived.UnixNano())
		h.policy.inApp.Store(true)
	}
	if h.pool.inApp != nil {
		// Busy for the siblings: the I/O thread cannot adopt meanwhile.
		h.pool.inApp.Add(1)
	}
	taken := h.pool.stats.Start()
	h.in.Serve(j)
	h.pool.stats.Served(taken)
	if h.pool.inApp != nil {
		h.pool.inApp.Add(-1)
	}
	if h.policy != nil {
		h.policy.inApp.Store(false)
	}
	h.pool.inFlight.Release(record)
	if h.policy != nil {
		h.policy.ranInline(time.Since(arrived))
	}

	resp := j.Response
	if resp.Outcome() == pybridge.Suspended || h.fileTooLarge(resp, req) {
		// Past what the loop thread gathers: a handler thread sends the
		// rest with back-pressure (bridgePool.wrap takes the response).
		w.DeferWith(resp)
		j.Response = h.pool.spareResponse()
		return
	}
	status, body := resp.Status(), resp.Body()
	if resp.Outcome() != pybridge.Complete {
		// Without a writer every outcome is Complete; anything else is a
		// bridge bug, answered as the app's error would be.
		status, body = 500, []byte("Internal Server Error\n")
	} else {
		h.pool.noteHopByHop(resp)
		if resp.Close() {
			w.SetClose()
		}
		for i := 0; i < resp.HeaderLen(); i++ {
			name, value := resp.Header(i)
			if http1.FramingField(name) {
				continue
			}
			if err := w.AddHeaderBytes(name, value); err != nil {
				// start_response validated it: a refusal here is a bug.
				h.pool.logf("m0serve: error: response header %q refused: %v", name, err)
			}
		}
		if fd, offset, length, ok := resp.TakeFile(); ok {
			if req.MethodIs("HEAD") {
				unix.Close(fd) // the length is known; no byte is sent
			} else {
				body = h.readFile(fd, offset, length)
			}
		}
	}
	if h.pool.accessLog {
		sent := int64(len(body))
		if req.MethodIs("HEAD") {
			sent = 0
		}
		e := &h.logEntry
		e.setResponse(h.remote, req.Request, resp, status, sent)
		if format := h.pool.logFormat; format.timed {
			e.duration = time.Since(arrived)
		}
		h.logLine = h.pool.logFormat.append(h.logLine[:0], e)
		h.lines.add(h.logLine)
	}
	if req.MethodIs("HEAD") {
		length := int64(len(body))
		if resp.Outcome() == pybridge.Complete {
			length = framedLength(resp, true)
		}
		w.RespondHead(status, length)
	} else {
		w.Respond(status, body) // copies body into the connection's send buffer
	}
	resp.Release()
	if cap(h.file) > inlineFileKeep {
		h.file = nil // one large file must not pin its buffer for good
	}
}

// inlineFileKeep is the largest file buffer kept between inline responses.
const inlineFileKeep = 1 << 20

// inlineGatherLimit bounds the body the loop thread gathers for one
// response: past it the response goes on on a handler thread, which
// streams the rest as the client takes it. (A body still coming after
// inlineBudget goes on there too: an app that yields blocks slowly has
// them sent as they come, and the loop is not held.) 1 MiB is what the loop keeps
// of a response arena or a file buffer between requests anyway (so the
// bound adds no memory), and it is sixteen of the loop's 64 KiB send
// high-water marks: a page, a JSON document or an image is still sent
// without a handoff; a download or an endless stream is not gathered.
const inlineGatherLimit = 1 << 20

// fileTooLarge reports a wsgi.file_wrapper body past inlineGatherLimit:
// a handler thread hands it to the loop's sendfile instead.
func (h *inlineWSGI) fileTooLarge(resp *pybridge.Response, req *loop.Request) bool {
	_, _, length, ok := resp.File()
	return ok && length > inlineGatherLimit && !req.MethodIs("HEAD")
}

// readFile reads a wsgi.file_wrapper body (at most inlineGatherLimit:
// fileTooLarge hands a larger one off) whole and closes fd: the loop
// cannot hand itself a file in the middle of a dispatch. A file shorter
// than announced sends what it has, framed by its real length.
func (h *inlineWSGI) readFile(fd int, offset, length int64) []byte {
	defer unix.Close(fd)
	h.file = h.file[:0]
	if cap(h.file) < int(length) {
		h.file = make([]byte, 0, length)
	}
	for int64(len(h.file)) < length {
		n, err := unix.Pread(fd, h.file[len(h.file):length], offset+int64(len(h.file)))
		if n <= 0 || err != nil {
			break
		}
		h.file = h.file[:len(h.file)+n]
	}
	return h.file
}

// exit runs on the loop thread as the loop ends (loop.Config.OnExit).
func (h *inlineWSGI) exit() {
	if h.in != nil {
		h.in.Detach()
		h.in = nil
	}
}
