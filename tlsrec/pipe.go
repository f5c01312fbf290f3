package tlsrec

import (
	"io"
	"net"
	"sync"
	"time"
)

// wouldBlock is the pipe's answer to a read with nothing buffered once
// the handshake is done. crypto/tls keeps a connection usable after a
// read error that is a net.Error with Temporary() true (conn.go,
// readRecordOrCCS: only other errors are stored in c.in.err), so this is
// what makes tls.Conn.Read non-blocking over the pipe: a partial record
// stays in its rawInput until the next bytes come.
type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tlsrec: no more input buffered" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// ErrWouldBlock is what Conn.Open returns when every buffered record is
// open: more input must arrive first.
var ErrWouldBlock net.Error = wouldBlock{}

// inboxMin is the least an input buffer is made: a request's record
// fits, and an idle connection holds no more (a bigger record takes a few
// receives, and grows the buffer while it does).
const inboxMin = 4 << 10

// spareLimit: an output buffer grown past this is not kept for the next
// send; spareIdle: nor past this once the connection is idle (trimOutput),
// so a big body's sends reuse one buffer and an idle connection holds
// little.
const (
	spareLimit = 1 << 20
	spareIdle  = 16 << 10
)

// pipe is the in-memory net.Conn a tls.Conn runs over. Its input is the
// ciphertext the loop received; its output is the ciphertext the loop is
// to send. During the handshake a goroutine reads it and blocks while it
// is empty; after, only the loop thread uses it, and a read finding it
// empty returns ErrWouldBlock.
type pipe struct {
	mu       sync.Mutex
	cond     sync.Cond
	in       []byte // in[inStart:inEnd] is received and not yet read
	inStart  int
	inEnd    int
	out      []byte // written, not yet taken by the loop
	spare    []byte // the last sent output buffer, for reuse
	blocking bool   // the handshake goroutine reads: wait for bytes
	eof      bool   // the peer ended its stream
	closed   bool
	notify   func() // called after a write while blocking (the handshake's flights)
	// wakeBelow, while blocking, asks for a notify once a read leaves
	// fewer bytes than this unread (full); 0: none asked.
	wakeBelow int
	remote    net.Addr
}

func (p *pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	for p.blocking && p.inStart == p.inEnd && !p.eof && !p.closed {
		p.cond.Wait()
	}
	if p.inStart == p.inEnd {
		p.mu.Unlock()
		switch {
		case p.closed:
			return 0, net.ErrClosed
		case p.eof:
			return 0, io.EOF
		}
		return 0, ErrWouldBlock
	}
	// The offsets are not reset when the input empties: a receive may be
	// filling in[inEnd:] right now. Only makeRoom, on the loop thread
	// before the next receive, moves them.
	n := copy(b, p.in[p.inStart:p.inEnd])
	p.inStart += n
	wake := p.wakeBelow > 0 && p.inEnd-p.inStart < p.wakeBelow
	if wake {
		p.wakeBelow = 0
	}
	p.mu.Unlock()
	if wake && p.notify != nil {
		p.notify()
	}
	return n, nil
}

func (p *pipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return 0, net.ErrClosed
	}
	if p.out == nil && p.spare != nil {
		p.out, p.spare = p.spare[:0], nil
	}
	p.out = append(p.out, b...)
	notify := p.blocking
	p.mu.Unlock()
	if notify && p.notify != nil {
		p.notify()
	}
	return len(b), nil
}

// room returns at least min free bytes at the end of the input, for a
// receive to fill; the caller then reports how many with received. Only
// the loop calls it, and not while a receive into it is pending.
func (p *pipe) room(min int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.makeRoom(min)
	return p.in[p.inEnd:]
}

func (p *pipe) makeRoom(min int) {
	if p.inStart == p.inEnd {
		p.inStart, p.inEnd = 0, 0
	}
	if p.inStart > 0 && len(p.in)-p.inEnd < min {
		n := copy(p.in, p.in[p.inStart:p.inEnd])
		p.inStart, p.inEnd = 0, n
	}
	if len(p.in)-p.inEnd < min {
		grown := make([]byte, max(2*len(p.in), p.inEnd+min, inboxMin))
		copy(grown, p.in[:p.inEnd])
		p.in = grown
	}
}

// trim drops an input buffer a big body grew, once it is read, so an idle
// connection holds inboxMin at most. Not while a receive fills it.
func (p *pipe) trim() {
	p.mu.Lock()
	if p.inStart == p.inEnd && len(p.in) > inboxMin {
		p.in, p.inStart, p.inEnd = nil, 0, 0
	}
	p.mu.Unlock()
}

func (p *pipe) received(n int) {
	p.mu.Lock()
	p.inEnd += n
	p.cond.Signal()
	p.mu.Unlock()
}

func (p *pipe) feed(b []byte) {
	p.mu.Lock()
	p.makeRoom(len(b))
	p.inEnd += copy(p.in[p.inEnd:], b)
	p.cond.Signal()
	p.mu.Unlock()
}

// full reports whether limit or more received bytes are unread. While
// the handshake's goroutine reads, a true answer asks for a notify once
// it has read below limit: the loop stops receiving at the limit, and
// only that goroutine's reads make room again.
func (p *pipe) full(limit int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inEnd-p.inStart < limit {
		return false
	}
	if p.blocking {
		p.wakeBelow = limit
	}
	return true
}

// buffered is how many received bytes are not yet read.
func (p *pipe) buffered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inEnd - p.inStart
}

func (p *pipe) endInput() {
	p.mu.Lock()
	p.eof = true
	p.cond.Broadcast()
	p.mu.Unlock()
}

// take hands over what was written; the caller gives the buffer back
// with sent once the backend is done with it.
func (p *pipe) take() []byte {
	p.mu.Lock()
	out := p.out
	if len(out) == 0 {
		out = nil
	} else {
		p.out = nil
	}
	p.mu.Unlock()
	return out
}

func (p *pipe) sent(buf []byte) {
	if cap(buf) > spareLimit {
		return
	}
	p.mu.Lock()
	p.spare = buf[:0]
	p.mu.Unlock()
}

func (p *pipe) trimOutput() {
	p.mu.Lock()
	if cap(p.spare) > spareIdle {
		p.spare = nil
	}
	p.mu.Unlock()
}

func (p *pipe) Close() error {
	p.mu.Lock()
	p.closed = true
	p.in, p.out, p.spare = nil, nil, nil
	p.inStart, p.inEnd = 0, 0
	p.cond.Broadcast()
	p.mu.Unlock()
	return nil
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "tcp" }
func (pipeAddr) String() string  { return "loop" }

func (p *pipe) LocalAddr() net.Addr { return pipeAddr{} }
func (p *pipe) RemoteAddr() net.Addr {
	if p.remote != nil {
		return p.remote
	}
	return pipeAddr{}
}
func (p *pipe) SetDeadline(time.Time) error      { return nil }
func (p *pipe) SetReadDeadline(time.Time) error  { return nil }
func (p *pipe) SetWriteDeadline(time.Time) error { return nil }
