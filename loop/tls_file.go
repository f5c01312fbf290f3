package loop

import (
	"errors"
	"sync"

	"github.com/m0serve/m0serve/http1"
	"golang.org/x/sys/unix"
)

// A file body over TLS cannot go by splice or sendfile: its bytes must be
// sealed. A goroutine reads it a chunk at a time (a read may wait on the
// disk, which the loop thread never does) and posts a note; the loop
// appends the chunk to the slot's output, which flush seals, and asks for
// the next once that is sent.

// fileChunk is what one read brings: large enough that a big file costs
// few hops, small enough that an idle connection does not hold much.
const fileChunk = 256 << 10

// fileRead is one sealed file body's reader. The loop and the reading
// goroutine share it under mu; whoever is last closes fd.
type fileRead struct {
	mu      sync.Mutex
	fd      int
	buf     []byte
	n       int   // bytes read into buf, not yet taken
	err     error // the read failed, or the file ended early
	start   int   // where in buf the bytes not taken begin (HTTP/2 takes a chunk in parts)
	busy    bool  // a read is in flight
	dropped bool  // the slot let go: the goroutine closes fd
}

var errFileEnded = errors.New("loop: file ended before its range")

func (r *fileRead) drop() {
	r.mu.Lock()
	r.dropped = true
	if !r.busy {
		unix.Close(r.fd)
	}
	r.mu.Unlock()
}

// sealFile moves the next part of a file body into the slot's output.
// Called by serviceFile with j.mu held; it reports whether the file is
// done.
func (l *Loop) sealFile(s *slot, j *Job, length int64) bool {
	f := &j.file
	if f.read == nil {
		f.length = length
		f.read = &fileRead{fd: f.fd, buf: make([]byte, min(int64(fileChunk), length))}
	}
	r := f.read
	r.mu.Lock()
	busy, n, err := r.busy, r.n, r.err
	r.n = 0
	r.mu.Unlock()
	if busy {
		return false
	}
	if n > 0 {
		s.send = append(s.send, r.buf[:n]...)
		f.offset += int64(n)
		f.length -= int64(n)
		j.bodySent += int64(n)
	}
	if err != nil {
		// The client gets a short body and a close, as with splice.
		r.drop()
		j.file = fileBody{}
		s.keepAlive = false
		s.closeAfter = true
		return false
	}
	if f.length == 0 {
		r.drop()
		if j.mode == http1.BodyChunked {
			s.send = append(s.send, '\r', '\n')
		}
		j.file = fileBody{}
		return true
	}
	if len(s.send) > 0 {
		// Sealed and sent first; the send's completion brings us back.
		return false
	}
	r.busy = true
	note := tlsNote{index: s.index, gen: s.gen}
	go l.readChunk(r, f.offset, min(int64(len(r.buf)), f.length), note)
	return false
}

// readChunk reads the next chunk on its own goroutine and posts a note.
func (l *Loop) readChunk(r *fileRead, offset, want int64, note tlsNote) {
	var got int
	var err error
	for int64(got) < want {
		n, rerr := unix.Pread(r.fd, r.buf[got:want], offset+int64(got))
		if rerr == unix.EINTR {
			continue
		}
		if n <= 0 {
			err = rerr
			if err == nil {
				err = errFileEnded
			}
			break
		}
		got += n
	}
	r.mu.Lock()
	r.busy = false
	r.n, r.err = got, err
	if r.dropped {
		unix.Close(r.fd)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	l.postTLS(note)
}
