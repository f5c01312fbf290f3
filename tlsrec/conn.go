package tlsrec

import (
	"crypto/tls"
	"net"
	"sync"
)

// Conn is one TLS connection as the loop drives it: the loop hands it
// the ciphertext it receives (Room/Received or Feed) and sends what Output
// returns. The handshake runs on a goroutine (Start), so its public-key
// operations never stall the loop thread; once Handshake reports it done,
// the loop opens records (Open) and seals its output (Seal) inline, on its
// own thread, without another hop.
type Conn struct {
	p       pipe
	tls     *tls.Conn
	server  *Server
	started bool // Start ran (loop thread only)

	hsMu   sync.Mutex
	hsDone bool
	hsErr  error

	info *Info // built on first use, after the handshake
}

// NewConn makes the connection for a client at remote (nil: unknown).
// notify is called, from the handshake goroutine, whenever there is news
// for the loop: handshake output to send, or the handshake's end. It must
// not block.
func (s *Server) NewConn(remote net.Addr, notify func()) *Conn {
	c := &Conn{server: s}
	c.p.cond.L = &c.p.mu
	c.p.blocking = true
	c.p.notify = notify
	c.p.remote = remote
	c.tls = tls.Server(&c.p, s.config)
	return c
}

// Start begins the handshake on a goroutine. The loop calls it at the
// first bytes from the client, so a connection that never says hello
// costs no goroutine.
func (c *Conn) Start() {
	if c.started {
		return
	}
	c.started = true
	go c.handshake()
}

// Started reports whether Start ran.
func (c *Conn) Started() bool { return c.started }

func (c *Conn) handshake() {
	err := c.tls.Handshake()
	c.p.mu.Lock()
	c.p.blocking, c.p.wakeBelow = false, 0
	c.p.mu.Unlock()
	c.hsMu.Lock()
	c.hsDone, c.hsErr = true, err
	c.hsMu.Unlock()
	if c.p.notify != nil {
		c.p.notify()
	}
}

// Handshake reports whether the handshake has ended, and how. Once it
// reports done with a nil error, the connection is the loop thread's
// alone.
func (c *Conn) Handshake() (done bool, err error) {
	c.hsMu.Lock()
	defer c.hsMu.Unlock()
	return c.hsDone, c.hsErr
}

// Room returns free space for a receive of at least min bytes; Received
// then reports how many it filled. Not while a receive into it is pending.
func (c *Conn) Room(min int) []byte { return c.p.room(max(min, 1)) }

// Trim drops an input buffer grown past its usual size once it is empty.
// Not while a receive into it (Room) is pending.
func (c *Conn) Trim() { c.p.trim() }

// Received reports n bytes written into the space Room returned.
func (c *Conn) Received(n int) { c.p.received(n) }

// Feed copies received ciphertext in (a backend's provided buffer).
func (c *Conn) Feed(b []byte) { c.p.feed(b) }

// InputFull reports whether limit or more received bytes wait unread: a
// loop that holds its receives at such a limit asks here. During the
// handshake a true answer also has notify called once the handshake's
// reads bring the input below limit, so that the loop receives again: a
// client's flight may be larger than any such limit (a Certificate
// message of a long chain runs to crypto/tls's 256 KiB).
func (c *Conn) InputFull(limit int) bool { return c.p.full(limit) }

// Buffered is how many received bytes the record layer has not yet read.
func (c *Conn) Buffered() int { return c.p.buffered() }

// EndInput reports the client's end of stream.
func (c *Conn) EndInput() { c.p.endInput() }

// Open decrypts buffered records into dst. It returns ErrWouldBlock when
// nothing more can be opened until more input comes; another error is the
// connection's end (io.EOF after the client's close_notify, or a record
// that fails to authenticate: crypto/tls has then queued its alert in
// Output). Records that carry no application data (a TLS 1.3 KeyUpdate,
// a session ticket) are handled inside and may queue output.
func (c *Conn) Open(dst []byte) (int, error) {
	return c.tls.Read(dst)
}

// Seal encrypts plaintext into records queued for Output.
func (c *Conn) Seal(plaintext []byte) error {
	_, err := c.tls.Write(plaintext)
	return err
}

// CloseNotify queues the close_notify alert: nothing more will be sealed.
func (c *Conn) CloseNotify() { c.tls.CloseWrite() }

// Output takes the ciphertext waiting to be sent (nil: none). The buffer
// is the caller's until it gives it back with Sent.
func (c *Conn) Output() []byte { return c.p.take() }

// Sent gives back a buffer Output returned, once sent.
func (c *Conn) Sent(buf []byte) { c.p.sent(buf) }

// Idle drops an output buffer a big response grew: the connection waits
// for its next request.
func (c *Conn) Idle() { c.p.trimOutput() }

// Close ends the connection's record layer: a handshake still running
// fails at its next read. No close_notify is sent (the socket closes).
func (c *Conn) Close() { c.p.Close() }

// State is the negotiated state; valid once the handshake is done.
func (c *Conn) State() tls.ConnectionState { return c.tls.ConnectionState() }

// recordTypeHandshake is a TLS record's content type 22 (RFC 8446 §5.1).
const recordTypeHandshake = 0x16

// Sniff looks at a connection's first bytes: a TLS client's hello opens
// with a handshake record; a plain HTTP request with a method's letters.
// It reports whether the bytes may be TLS, and whether they look like
// plain HTTP (so the loop can answer as nginx does, in the clear).
func Sniff(first []byte) (tlsLike, plainHTTP bool) {
	if len(first) == 0 {
		return true, false
	}
	if first[0] == recordTypeHandshake {
		return true, false
	}
	n := 0
	for n < len(first) && n < 16 && first[n] >= 'A' && first[n] <= 'Z' {
		n++
	}
	return false, n > 0 && (n == len(first) || first[n] == ' ')
}
