package loop

import (
	"errors"

	"github.com/m0serve/m0serve/http1"
	"golang.org/x/sys/unix"
)

// ErrFileRange is SendFile's answer to a negative descriptor, offset or
// length.
var ErrFileRange = errors.New("loop: SendFile: negative descriptor, offset or length")

// fileBody is a file range a handler handed to the loop with SendFile.
// It lives on the job, under the job's lock, until the loop has sent it.
type fileBody struct {
	fd     int
	offset int64
	length int64 // the range given; once queued, what the backend sends
	set    bool  // SendFile took fd: the loop (or the backend) closes it
	framed bool  // the chunk-size line of a chunked body is written
	queued bool  // the backend has fd and closes it at the completion
	// read: over TLS, the goroutine reading the file for sealing
	// (tls_file.go); it owns fd once set.
	read *fileRead
}

// SendFile ends the response with length bytes of the file fd from
// offset, sent by the loop without copying them through user space
// (Backend.QueueSendFile). Call it after WriteHeader (and any Write): the
// head and the outbox go out first, in order. Without a posted head it
// posts 200 with Content-Length length.
//
// It returns at once. On nil the job is finished, as after Finish: the job
// and fd are the loop's, and the handler must touch neither again; the
// loop closes fd once the range is sent or the send ended early. If the
// file turns out shorter than length, or the client leaves, the
// connection closes without a valid end (the client sees a short body).
// A range longer than a declared Content-Length is cut to it and the
// connection closes after it; HEAD, 204 and 304 send none of it.
//
// On an error nothing was taken: fd is still the caller's to close, and
// the job still the handler's to end with Abort (ErrAborted: the client
// has gone) or Finish.
func (j *Job) SendFile(fd int, offset, length int64) error {
	if fd < 0 || offset < 0 || length < 0 {
		return ErrFileRange
	}
	j.mu.Lock()
	defer j.unlock()
	if j.aborted {
		return ErrAborted
	}
	if j.finished {
		return errors.New("loop: SendFile after Finish")
	}
	if !j.headPosted {
		if err := j.writeHeaderLocked(200, length); err != nil {
			return err
		}
	}
	j.file = fileBody{fd: fd, offset: offset, length: length, set: true}
	j.finished = true
	j.notify()
	return nil
}

// serviceFile moves a job's file body to the backend once the head and
// everything before it is sent, and accounts for it once the backend has
// sent it. Called by serviceJob with j.mu held and the head written; it
// reports whether the file is done and the job can finish.
func (l *Loop) serviceFile(s *slot, j *Job) bool {
	f := &j.file
	if f.queued {
		// advance runs only when no send is in flight, so the backend has
		// completed it, and with success: a failure closes the slot.
		j.bodySent += f.length
		if j.mode == http1.BodyChunked && f.length > 0 {
			s.send = append(s.send, '\r', '\n')
		}
		j.file = fileBody{}
		return true
	}
	length := f.length
	switch j.mode {
	case http1.BodyNone:
		length = 0
	case http1.BodyLength:
		if rest := j.contentLength - j.bodySent; length > rest {
			// The excess would be read as the next response: cut it,
			// and let the close end the connection as sendOutbox does.
			length = max(rest, 0)
			s.keepAlive = false
		}
	case http1.BodyChunked:
		if !f.framed {
			s.send = http1.AppendChunkHeader(s.send, int(length))
			f.framed = true
		}
	}
	if length == 0 {
		unix.Close(f.fd)
		j.file = fileBody{}
		return true
	}
	if s.tls != nil {
		return l.sealFile(s, j, length)
	}
	if len(s.send) > 0 {
		// The head, the outbox and the chunk-size line go first: flush
		// sends them, and their completion brings the loop back here.
		return false
	}
	f.length = length
	f.queued = true
	s.sending = true
	l.sendQueued(s)
	l.backend.QueueSendFile(s.fd, s.index, s.gen, f.fd, f.offset, length)
	return false
}

// dropFileBody closes the file of a job released before its body was
// handed to the backend (the client left first); once handed over, the
// backend closes it.
func dropFileBody(j *Job) {
	if r := j.file.read; r != nil {
		r.drop()
		j.file = fileBody{}
		return
	}
	if j.file.set && !j.file.queued {
		unix.Close(j.file.fd)
	}
	j.file = fileBody{}
}
