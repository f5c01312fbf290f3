package loop

import (
	"slices"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

// The response side of an HTTP/2 stream (http2.go): a job's head, outbox,
// file and trailers become HEADERS and DATA frames on its stream, as far
// as the client's flow-control windows let them; what does not fit waits
// in the outbox (whose limit then holds the handler's Write, as a slow
// HTTP/1.1 client's socket does) until the codec says the window opened.

// startStreamJob hands a stream's request to the JobQueue, as startJob
// does a connection's.
func (l *Loop) startStreamJob(s *slot, hc *h2conn, st *http2.Stream, webSocket bool) {
	j := l.newJob(s, hc.assembler.Buf, &hc.req)
	j.webSocket = webSocket
	j.h2, j.stream = hc, st
	st.Value = j
	hc.jobs = append(hc.jobs, j)
	j.h2BodyAt, j.h2SendAt = l.now, l.now
	// An extended CONNECT's stream carries no body (RFC 8441 §4): a
	// WebSocket job's DATA is its WebSocket's input, kept for the accept;
	// a handler that does not take the WebSocket (a WSGI app) reads none.
	j.bodyDone = st.RemoteClosed() || !webSocket && !j.Request.HasBody()
	j.expect100 = j.Request.Expect100 && !j.bodyDone
	j.queue = l.deferQueue()
	if l.cfg.BufferBodies && !j.bodyDone && !j.expect100 && !webSocket &&
		(j.Request.Chunked || j.Request.ContentLength <= inboxLimit) {
		j.buffering = true // Data queues it once the body is in
		return
	}
	l.queueJob(j)
}

// serviceStream moves a stream job's news: body credit back to the
// client, the head, the outbox and file, and the stream's end, after
// which the job is released and the stream given back.
func (l *Loop) serviceStream(s *slot, hc *h2conn, j *Job) {
	c, st := hc.conn, j.stream
	j.mu.Lock()
	if j.detached {
		j.mu.Unlock() // released once the handler finishes (drainNotes)
		return
	}
	if j.aborted {
		// The handler gave up: a 500 if nothing was answered yet, else
		// the stream is reset (Done on a stream not ended).
		if !j.headWritten {
			l.writeStreamError(hc, st, 500, "handler aborted\n")
			j.h2Ended = true
		}
		j.detached = true
		j.cond.Broadcast()
		j.mu.Unlock()
		l.releaseJob(j)
		return
	}
	if j.wsRemote != nil {
		l.acceptStreamJobWebSocket(hc, j)
		return
	}
	// What the handler read is credit for the client (§6.9): the window
	// follows the app, so an upload runs as fast as the app takes it.
	if pending := len(j.inbox) - j.inboxRead; j.h2Unacked > pending {
		c.Consumed(st, j.h2Unacked-pending)
		j.h2Unacked = pending
	}
	if j.expect100 && j.wantBody && !j.sent100 && !j.headWritten {
		c.WriteHeaders(st, 100, nil, false)
		j.sent100 = true
	}
	if j.headPosted && !j.headWritten {
		l.writeStreamHead(hc, j)
	}
	if j.headWritten && (!l.sendStreamOutbox(s, hc, j) || j.file.set && !l.sendStreamFile(s, hc, j)) {
		j.mu.Unlock()
		return
	}
	if !j.finished {
		queue := j.buffering && (j.bodyDone || len(j.inbox) >= inboxLimit)
		if queue {
			j.buffering = false
		}
		j.mu.Unlock()
		if queue {
			l.queueJob(j)
		}
		return
	}
	if j.hold != nil && !j.h2Ended && !j.h2Broken {
		l.startStreamHold(hc, j)
		return
	}
	l.endStream(hc, j)
	j.mu.Unlock()
	l.releaseJob(j)
}

// writeStreamHead sends a job's response head as HEADERS. Called with
// j.mu held.
func (l *Loop) writeStreamHead(hc *h2conn, j *Job) {
	head := http1.ResponseHead{
		Status:        j.status,
		Version:       http1.Version11,
		ContentLength: j.contentLength,
		HeadRequest:   j.Request.MethodIs("HEAD"),
	}
	var extra []hpack.HeaderField
	if j.hold != nil {
		extra = holdStreamFields
	}
	fields, mode := l.streamFields(j.fields, j.fieldSpans, j.fieldsSet, &head, extra...)
	j.mode = mode
	end := mode == http1.BodyNone
	hc.conn.WriteHeaders(j.stream, j.status, fields, end)
	l.cfg.Stats.response(j.status)
	l.cfg.Stats.observe(time.Duration(l.now - j.Arrived))
	j.headWritten = true
	j.h2Ended = end
}

// sendStreamOutbox moves the outbox into DATA frames, within the declared
// length and the windows. It reports whether the outbox is empty; if
// not, the codec's WindowOpened (or the send's completion) brings the
// job back. Called with j.mu held.
func (l *Loop) sendStreamOutbox(s *slot, hc *h2conn, j *Job) bool {
	if len(j.outbox) == 0 {
		return true
	}
	want := len(j.outbox)
	switch {
	case j.mode == http1.BodyNone || j.h2Ended:
		want = 0
	case j.mode == http1.BodyLength:
		// Never past the declared length: the client would take the
		// stream for malformed (§8.1.1). The excess is dropped.
		want = int(min(int64(want), j.contentLength-j.bodySent))
	}
	limit, paused := want, false
	if room := h2SendHighWater - len(s.send) - len(hc.conn.Output()); limit > room {
		limit, paused = max(room, 0), true
	}
	n := 0
	if limit > 0 {
		n = hc.conn.WriteData(j.stream, j.outbox[:limit], false)
	}
	j.bodySent += int64(n)
	if n < want {
		j.outbox = j.outbox[:copy(j.outbox, j.outbox[n:want])]
		j.cond.Broadcast()
		if paused && n == limit {
			hc.markReady(j) // the rest after this send; else WindowOpened
		}
		return false
	}
	j.outbox = j.outbox[:0]
	j.cond.Broadcast()
	l.tellWriter(j)
	return true
}

// sendStreamFile sends a job's file body as DATA frames: the frames go
// between the file's bytes, so sendfile(2) cannot send it, and a read
// may wait on the disk, which the loop thread never does. A goroutine
// reads it a chunk at a time (tls_file.go's readChunk, whose note brings
// the job back: fileRead), and the loop frames each chunk as the windows
// let it. It reports whether the file is done. Called with j.mu held.
func (l *Loop) sendStreamFile(s *slot, hc *h2conn, j *Job) bool {
	f := &j.file
	if f.read == nil {
		length := f.length
		switch {
		case j.mode == http1.BodyNone || j.h2Ended:
			length = 0
		case j.mode == http1.BodyLength:
			length = min(length, max(j.contentLength-j.bodySent, 0))
		}
		if length == 0 {
			unix.Close(f.fd)
			j.file = fileBody{}
			return true
		}
		f.length = length
		f.read = &fileRead{fd: f.fd, buf: make([]byte, min(int64(fileChunk), length))}
	}
	r := f.read
	r.mu.Lock()
	busy, err := r.busy, r.err
	r.mu.Unlock()
	if busy {
		return false
	}
	// The goroutine is idle: the chunk (r.buf[r.start:][:r.n]) is the
	// loop's.
	for r.n > 0 {
		room := h2SendHighWater - len(s.send) - len(hc.conn.Output())
		if room <= 0 {
			hc.markReady(j) // the rest after this send
			return false
		}
		chunk := r.buf[r.start : r.start+min(r.n, room)]
		sent := hc.conn.WriteData(j.stream, chunk, false)
		r.start += sent
		r.n -= sent
		f.offset += int64(sent)
		f.length -= int64(sent)
		j.bodySent += int64(sent)
		if sent < len(chunk) || hc.conn.Err() != nil {
			return false // WindowOpened brings it back
		}
	}
	if err != nil || f.length == 0 {
		// A file shorter than said: the stream is reset (endStream
		// sends no END_STREAM for a short body).
		j.h2Broken = err != nil
		r.drop()
		j.file = fileBody{}
		return true
	}
	r.busy, r.start = true, 0
	go l.readChunk(r, f.offset, min(int64(len(r.buf)), f.length), tlsNote{index: s.index, gen: s.gen})
	return false
}

// fileRead marks ready the jobs of the connection whose file chunk a
// goroutine may have read.
func (hc *h2conn) fileRead() {
	for _, j := range hc.jobs {
		if j.file.read != nil {
			hc.markReady(j)
		}
	}
}

// endStream ends a finished job's response: its trailers, or an empty
// DATA frame with END_STREAM. A body shorter than its declared length is
// not ended: Done resets the stream, as a close ends a short HTTP/1.1
// response. Called with j.mu held.
func (l *Loop) endStream(hc *h2conn, j *Job) {
	if j.h2Ended || j.h2Broken || j.mode == http1.BodyLength && j.bodySent < j.contentLength {
		return
	}
	j.h2Ended = true
	if len(j.trailers) > 0 {
		hc.conn.WriteTrailers(j.stream, l.trailerFields(j.trailers, j.trailerSpans))
		return
	}
	hc.conn.WriteData(j.stream, nil, true)
}

// releaseStream gives a released job's stream back to the codec.
func (l *Loop) releaseStream(j *Job) {
	hc, st := j.h2, j.stream
	j.h2, j.stream, j.h2Ready = nil, nil, false
	st.Value = nil
	if i := slices.Index(hc.jobs, j); i >= 0 {
		last := len(hc.jobs) - 1
		hc.jobs[i], hc.jobs[last] = hc.jobs[last], nil
		hc.jobs = hc.jobs[:last]
	}
	if !hc.closed {
		hc.conn.Done(st)
		l.h2Kick(hc)
	}
}

// refuseStreamBody ends a stream job whose body cannot be accepted: the
// status is answered when no response has started, else the stream is
// reset. Called with j.mu held; returns with it released.
func (l *Loop) refuseStreamBody(hc *h2conn, j *Job, status int, reason string, err error) {
	if !j.headWritten {
		l.writeStreamError(hc, j.stream, status, reason+"\n")
		j.h2Ended = true
		if l.cfg.OnLoopResponse != nil {
			l.cfg.OnLoopResponse(j.RemoteAddr, &j.Request, status, len(reason)+1)
		}
	}
	j.mu.Unlock()
	l.detachJob(j, err)
}

// respondStream sends an inline handler's whole response on its stream.
// A body the stream's window cannot take at once is carried by a job
// that holds nothing but that rest, sent as the window opens.
func (l *Loop) respondStream(w *ResponseWriter, status int, body []byte, contentLength int64) {
	hc, st := w.h2, w.stream
	head := http1.ResponseHead{
		Status:        status,
		Version:       http1.Version11,
		ContentLength: contentLength,
		HeadRequest:   w.req.MethodIs("HEAD"),
	}
	fields, mode := l.streamFields(w.fields, w.spans, w.fieldsSet, &head)
	l.cfg.Stats.response(status)
	l.cfg.Stats.observe(0)
	if mode == http1.BodyNone || len(body) == 0 {
		hc.conn.WriteHeaders(st, status, fields, true)
		hc.conn.Done(st)
		return
	}
	hc.conn.WriteHeaders(st, status, fields, false)
	n := hc.conn.WriteData(st, body, true)
	if n == len(body) {
		hc.conn.Done(st)
		return
	}
	j := l.getJob()
	j.slot, j.gen = hc.index, hc.gen
	j.h2, j.stream = hc, st
	st.Value = j
	// Among the connection's jobs, for --send-timeout.
	hc.jobs = append(hc.jobs, j)
	j.h2SendAt = l.now
	j.status, j.contentLength, j.mode = status, contentLength, mode
	j.bodySent = int64(n)
	j.headPosted, j.headWritten, j.finished, j.bodyDone = true, true, true, true
	j.outbox = append(j.outbox, body[n:]...)
}

// writeStreamError answers a stream with status and a plain-text reason.
func (l *Loop) writeStreamError(hc *h2conn, st *http2.Stream, status int, reason string) {
	head := http1.ResponseHead{Status: status, Version: http1.Version11, ContentLength: int64(len(reason))}
	fields, _ := l.streamFields(errorFieldText, errorFieldSpans, 0, &head)
	hc.conn.WriteHeaders(st, status, fields, false)
	l.cfg.Stats.response(status)
	l.h2Reason = append(l.h2Reason[:0], reason...)
	hc.conn.WriteData(st, l.h2Reason, true)
}

// h2Error is the loop's own answer to a stream no handler will serve
// (dispatch's answerError): the stream is answered and given back.
func (l *Loop) h2Error(hc *h2conn, st *http2.Stream, req *http1.Request, status int, reason string) {
	l.writeStreamError(hc, st, status, reason+"\n")
	hc.conn.Done(st)
	if l.cfg.OnLoopResponse != nil {
		l.cfg.OnLoopResponse(l.slots[hc.index].remoteAddr(), req, status, len(reason)+1)
	}
}
