package server

import (
	"os"
	"strconv"
	"time"

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
	if !w.pool.accessLog {
		return
	}
	lj := w.loopJob
	req := &lj.Request
	b := w.logLine[:0]
	b = append(b, w.remote...)
	b = append(b, " - - ["...)
	b = time.Now().UTC().AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, "] \""...)
	b = appendPrintable(b, req.Bytes(req.Method))
	b = append(b, ' ')
	b = appendPrintable(b, req.Bytes(req.Target))
	b = append(b, ' ')
	b = append(b, req.Version.String()...)
	b = append(b, "\" "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if w.sent > 0 {
		b = strconv.AppendInt(b, w.sent, 10)
	} else {
		b = append(b, '-')
	}
	b = append(b, '\n')
	w.logLine = b
	unix.Write(int(os.Stderr.Fd()), b)
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
