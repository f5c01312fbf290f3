package server

import (
	"errors"
	"net/netip"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// logAccess writes one line in --access-log-format (by default the Common
// Log Format, the NCSA httpd format Apache, nginx and gunicorn default
// to) to the access log:
//
//	127.0.0.1 - - [30/Nov/2026:09:52:33 +0000] "GET /path HTTP/1.1" 200 13
//
// The line is built in the job's reused buffer and written in one call,
// so lines from several handler threads never interleave (a write of up
// to PIPE_BUF bytes to a pipe is atomic).
//
// It must run before the loop job is finished: the loop reuses it after.
func (w *bridgeJob) logAccess(status int) {
	p := w.pool
	if !p.accessLog || errors.Is(w.job.BodyErr, loop.ErrBodyTooLarge) {
		// A body over the limit: the loop answered 413 and logged it
		// (loopAccessLog); the app's response never went out.
		return
	}
	e := &w.logEntry
	e.setResponse(w.remote, &w.loopJob.Request, w.job.Response, status, w.sent)
	if p.logFormat.timed {
		e.duration = time.Duration(time.Now().UnixNano() - w.loopJob.Arrived)
	}
	w.logLine = p.logFormat.append(w.logLine[:0], e)
	unix.Write(int(accessLogFD.Load()), w.logLine)
}

// loopLines gathers the access-log lines made on the loop thread (the
// loop's own responses, native handlers', --threads 0's) and writes them
// once per pass (loop.Config.OnPassEnd): one write for a pass's
// responses rather than one each. A write stays within PIPE_BUF, so it
// never interleaves with a handler thread's line in a pipe.
type loopLines struct {
	buf []byte
}

const pipeBuf = 4096

func (b *loopLines) add(line []byte) {
	if len(b.buf)+len(line) > pipeBuf {
		b.flush()
	}
	if len(line) > pipeBuf {
		unix.Write(int(accessLogFD.Load()), line)
		return
	}
	b.buf = append(b.buf, line...)
}

func (b *loopLines) flush() {
	if len(b.buf) > 0 {
		unix.Write(int(accessLogFD.Load()), b.buf)
		b.buf = b.buf[:0]
	}
}

// loopAccessLog logs the responses the loop answers itself (a malformed
// or oversized request, a header timeout: loop.Config.OnLoopResponse) in
// the same format. It runs on the loop thread only, so one buffer does.
type loopAccessLog struct {
	lines  *loopLines
	format *accessFormat
	proxy  *proxyTrust // --proxy-headers; nil: off
	remote []byte
	line   []byte
	entry  accessEntry
}

func (a *loopAccessLog) log(remote netip.AddrPort, req *http1.Request, status, body int) {
	switch {
	case req != nil:
		a.remote, _, _ = a.proxy.client(a.remote, remote, &req.Header)
	case remote.IsValid():
		a.remote = remote.Addr().AppendTo(a.remote[:0])
	default:
		a.remote = append(a.remote[:0], '-')
	}
	a.entry.setResponse(a.remote, req, nil, status, int64(body))
	a.line = a.format.append(a.line[:0], &a.entry)
	a.lines.add(a.line)
}

// appendPrintable appends p with quotes, backslashes and bytes outside
// printable ASCII escaped as \xHH, so a request cannot forge log lines.
func appendPrintable(b, p []byte) []byte {
	const hex = "0123456789abcdef"
	for _, c := range p {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}

// nativeAccessLog logs the responses an inline handler answers itself
// (a native handler, the ASGI handler's refusals). It runs on the loop
// thread only, so one buffer does.
type nativeAccessLog struct {
	lines  *loopLines
	next   loop.Handler
	format *accessFormat
	proxy  *proxyTrust
	remote []byte
	line   []byte
	entry  accessEntry
}

// ServeInline implements loop.Handler.
func (a *nativeAccessLog) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	var arrived int64
	if a.format.timed {
		arrived = time.Now().UnixNano()
	}
	a.next.ServeInline(req, w)
	status, sent, ok := w.Responded()
	if !ok {
		return // deferred: not logged (the native deferred handlers are tests' tools)
	}
	a.remote, _, _ = a.proxy.client(a.remote, req.RemoteAddr(), &req.Request.Header)
	a.entry.setResponse(a.remote, req.Request, nil, status, int64(sent))
	if a.format.timed {
		a.entry.duration = time.Duration(time.Now().UnixNano() - arrived)
	}
	a.line = a.format.append(a.line[:0], &a.entry)
	a.lines.add(a.line)
}
