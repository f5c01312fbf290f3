package server

import (
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// logAccess writes one line in the Common Log Format (the NCSA httpd
// format Apache, nginx and gunicorn default to) to stderr:
//
//	127.0.0.1 - - [30/Nov/2026:09:52:33 +0000] "GET /path HTTP/1.1" 200 13
//
// The line is built in the job's reused buffer and written in one call,
// so lines from several handler threads never interleave (a write of up
// to PIPE_BUF bytes to a pipe is atomic).
//
// It must run before the loop job is finished: the loop reuses it after.
func (w *wsgiJob) logAccess(status int) {
	if !w.pool.accessLog || errors.Is(w.job.BodyErr, loop.ErrBodyTooLarge) {
		// A body over the limit: the loop answered 413 and logged it
		// (loopAccessLog); the app's response never went out.
		return
	}
	w.logLine = appendAccessLine(w.logLine[:0], w.remote, &w.loopJob.Request, status, w.sent)
	unix.Write(int(accessLogFD.Load()), w.logLine)
}

// loopAccessLog logs the responses the loop answers itself (a malformed
// or oversized request, a header timeout: loop.Config.OnLoopResponse) in
// the same format. It runs on the loop thread only, so one buffer does.
type loopAccessLog struct {
	proxy  *proxyTrust // --proxy-headers; nil: off
	remote []byte
	line   []byte
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
	a.line = appendAccessLine(a.line[:0], a.remote, req, status, int64(body))
	unix.Write(int(accessLogFD.Load()), a.line)
}

// appendAccessLine appends one Common Log Format line; sent is the body
// bytes written (0 logs "-"). A nil req (a head that did not parse) logs
// the request line as "-".
func appendAccessLine(b, remote []byte, req *http1.Request, status int, sent int64) []byte {
	if len(remote) == 0 {
		remote = dash // a Unix socket's peer
	}
	b = append(b, remote...)
	b = append(b, " - - ["...)
	b = time.Now().UTC().AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	if req == nil {
		b = append(b, "] \"-\" "...)
	} else {
		b = append(b, "] \""...)
		b = appendPrintable(b, req.Bytes(req.Method))
		b = append(b, ' ')
		b = appendPrintable(b, req.Bytes(req.Target))
		b = append(b, ' ')
		b = append(b, req.Version.String()...)
		b = append(b, "\" "...)
	}
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if sent > 0 {
		b = strconv.AppendInt(b, sent, 10)
	} else {
		b = append(b, '-')
	}
	return append(b, '\n')
}

var dash = []byte("-")

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
