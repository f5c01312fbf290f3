package loop

import (
	"sync"

	"github.com/m0serve/m0serve/ws"
)

// WebSocketRemote is a WebSocket's handle for other goroutines, such as
// the threads of the Python bridge: a handler whose OnMessage queues
// messages for such a consumer gives it the Remote. Sends are encoded (and
// compressed) on the caller's thread and handed to the loop through a
// ring, like a deferred job's news; Send waits while the connection's
// unsent output is above the high-water mark, so a client that does not
// read holds its sender, not the server's memory. All methods are safe
// from any goroutine.
type WebSocketRemote struct {
	loop   *Loop
	socket *WebSocket // touched by the loop thread only

	// sendMu orders senders; only they take it, so the loop never waits
	// while one encodes or compresses (into encoded, theirs alone).
	sendMu   sync.Mutex
	encoded  []byte
	deflate  bool
	deflater ws.Deflater

	mu      sync.Mutex
	drained sync.Cond // the loop took pending output, or the connection ended
	// pending holds frames encoded by senders, not yet taken by the loop;
	// spare is the buffer the loop gave back, reused for the next ones.
	pending []byte
	spare   []byte
	// buffered is the output the loop holds unsent, as it last said.
	buffered    int
	taken       int // Taken calls the loop has not applied yet
	closeAsked  bool
	closeCode   ws.CloseCode
	closeReason string
	closed      bool // closing or closed: Send fails
	queued      bool // in the loop's ring
	// onWritten (SetOnWritten) hears, once per Post that left the output
	// above the high-water mark (writtenWanted), that it is below again,
	// or that the connection closed.
	onWritten     func(closed bool)
	writtenWanted bool
}

// Remote returns the connection's handle for other goroutines. Call it on
// the loop thread (in AcceptWebSocket's caller or a handler method).
func (c *WebSocket) Remote() *WebSocketRemote {
	if c.remote == nil {
		r := &WebSocketRemote{loop: c.loop, socket: c, deflate: c.deflate, closed: c.state != wsOpen}
		r.drained.L = &r.mu
		c.remote = r
	}
	return c.remote
}

// Send queues a whole message (ws.OpText or ws.OpBinary), waiting while
// the connection's unsent output is above the high-water mark. Once the
// connection is closing or closed it returns ErrWebSocketClosed.
func (r *WebSocketRemote) Send(op ws.Opcode, payload []byte) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	r.mu.Lock()
	for !r.closed && len(r.pending)+r.buffered >= outboxHighWater {
		r.drained.Wait()
	}
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return ErrWebSocketClosed
	}
	return r.queue(op, payload)
}

// TrySend is Send without the wait, for a caller on the loop thread (an
// event loop the loop steps): above the high-water mark it reports false
// and sends nothing; otherwise it queues the message as Send does.
func (r *WebSocketRemote) TrySend(op ws.Opcode, payload []byte) (bool, error) {
	if !r.sendMu.TryLock() {
		return false, nil
	}
	defer r.sendMu.Unlock()
	r.mu.Lock()
	closed, full := r.closed, len(r.pending)+r.buffered >= outboxHighWater
	r.mu.Unlock()
	if closed {
		return true, ErrWebSocketClosed
	}
	if full {
		return false, nil
	}
	return true, r.queue(op, payload)
}

// SetOnWritten gives a poster (Post) the function the loop calls, on the
// loop thread and with nothing of the remote's held, once the output a
// Post left above the high-water mark is below it again (closed false),
// or the connection has closed (closed true). Call it before the first
// Post.
func (r *WebSocketRemote) SetOnWritten(f func(closed bool)) {
	r.mu.Lock()
	r.onWritten = f
	r.mu.Unlock()
}

// Post queues a whole message as Send does, but never waits on the loop:
// the port of an event loop, which must not block. full reports that the
// output is above the high-water mark with it: the poster should post
// nothing more until the loop calls the SetOnWritten function. It takes
// the senders' lock for its encoding only, which another sender holds
// while encoding (never while waiting).
func (r *WebSocketRemote) Post(op ws.Opcode, payload []byte) (full bool, err error) {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	if err := r.queue(op, payload); err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false, ErrWebSocketClosed
	}
	if len(r.pending)+r.buffered >= outboxHighWater && r.onWritten != nil {
		r.writtenWanted = true
		return true, nil
	}
	return false, nil
}

// writtenLocked calls the poster's function if a Post waits for it; r.mu is
// held, and released here.
func (r *WebSocketRemote) writtenLocked(closed bool) {
	f := r.onWritten
	call := r.writtenWanted && f != nil
	r.writtenWanted = false
	r.mu.Unlock()
	if call {
		f(closed)
	}
}

// queue encodes a message and hands it to the loop; r.sendMu is held, so
// r.encoded is this call's alone.
func (r *WebSocketRemote) queue(op ws.Opcode, payload []byte) error {
	var d *ws.Deflater
	if r.deflate {
		d = &r.deflater
	}
	r.encoded = ws.AppendMessage(r.encoded[:0], op, payload, d)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrWebSocketClosed
	}
	r.pending = append(r.pending, r.encoded...)
	r.notify()
	if cap(r.encoded) > keepEncoded {
		r.encoded = nil // a big message's buffer is not kept
	}
	return nil
}

// keepEncoded is the largest encoding buffer a Remote keeps between sends.
const keepEncoded = 64 << 10

// Taken is WebSocket.Taken from another goroutine.
func (r *WebSocketRemote) Taken() {
	r.mu.Lock()
	if !r.closed {
		r.taken++
		r.notify()
	}
	r.mu.Unlock()
}

// Close is WebSocket.Close from another goroutine: output queued before
// it is sent first.
func (r *WebSocketRemote) Close(code ws.CloseCode, reason string) {
	r.mu.Lock()
	if !r.closed {
		r.closed, r.closeAsked = true, true
		r.closeCode, r.closeReason = code, reason
		r.drained.Broadcast()
		r.notify()
	}
	r.mu.Unlock()
}

// notify puts r in the loop's ring once; r.mu is held.
func (r *WebSocketRemote) notify() {
	if r.queued {
		return
	}
	r.queued = true
	if r.loop.enqueueWebSocket(r) {
		r.loop.kick()
	}
}

// enqueueWebSocket is enqueue for a WebSocket's news.
func (l *Loop) enqueueWebSocket(r *WebSocketRemote) bool {
	l.wsNotes.push(r)
	return !l.exited.Load()
}

// drainWebSocketNotes applies what other goroutines asked of their
// connections: output, messages taken, closes.
func (l *Loop) drainWebSocketNotes() {
	for {
		r, ok := l.wsNotes.pop()
		if !ok {
			return
		}
		r.mu.Lock()
		r.queued = false
		c := r.socket
		if c == nil || c.slot == nil && c.stream == nil {
			// Accepted from a job, the 101 not yet written (its news
			// waits for it), or the connection died before it.
			r.mu.Unlock()
			continue
		}
		out := r.pending
		r.pending, r.spare = r.spare[:0], nil
		taken := r.taken
		r.taken = 0
		closeAsked, code, reason := r.closeAsked, r.closeCode, r.closeReason
		r.closeAsked = false
		r.mu.Unlock()

		live := c.live() && c.state == wsOpen
		if live && len(out) > 0 {
			o := c.output()
			*o = append(*o, out...)
		}
		if cap(out) > 2*outboxHighWater {
			out = nil // a big message's buffer is not kept
		}
		r.mu.Lock()
		r.spare = out[:0]
		r.mu.Unlock()
		if !live {
			continue
		}
		if closeAsked {
			c.Close(code, reason)
		}
		c.took(taken)
		c.wake(true)
		l.wsBuffered(c)
	}
}

// wsBuffered tells a connection's remote how much output the loop holds
// unsent, waking senders once it is below the high-water mark.
func (l *Loop) wsBuffered(c *WebSocket) {
	r := c.remote
	if r == nil {
		return
	}
	r.mu.Lock()
	r.buffered = c.unsent()
	if len(r.pending)+r.buffered >= outboxHighWater {
		r.mu.Unlock()
		return
	}
	r.drained.Broadcast()
	r.writtenLocked(false)
}

// wsRemoteClosed fails the remote's later sends and wakes those waiting.
func (l *Loop) wsRemoteClosed(c *WebSocket) {
	r := c.remote
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	r.drained.Broadcast()
	r.writtenLocked(true)
}
