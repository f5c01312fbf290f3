// Package tls is the event loop's TLS room: one connection's TLS state
// over package tlsrec's record layer, and what the loop asks of it when
// bytes arrive, when it has room to send, when news comes from the
// handshake's goroutine, and at the close. It knows nothing of slots,
// requests or the backend: the loop moves the bytes and keeps the
// connection's state machine; this package says what they mean for TLS.
package tls

import (
	cryptotls "crypto/tls"

	"github.com/m0serve/m0serve/tlsrec"
)

// inboxHigh bounds the ciphertext a connection buffers ahead of its
// handler: past it the loop queues no receive, as its recvHighWater does
// for plaintext.
const inboxHigh = 64 << 10

// receiveRoom is the least room a receive is given in the record layer's
// input.
const receiveRoom = 4 << 10

// Conn is one connection's TLS state. The zero value is unused; Init
// starts one. A Conn lives in the loop's slot and is used by the loop
// thread only (the record layer's handshake goroutine reaches the loop
// through the notify function given to Init).
type Conn struct {
	rec *tlsrec.Conn
	// ready: the handshake is done and records carry the application's
	// bytes.
	ready bool
	// notified: close_notify is sent.
	notified bool
	// ackOwed: the handshake just ended; unless a send leaves with it,
	// the client's Finished is acknowledged at once (Output).
	ackOwed bool
	// room is the record layer's space a pending receive fills.
	room []byte
	// out is the ciphertext being sent.
	out []byte
}

// Init gives an accepted connection its record layer; notify is called
// from the handshake's goroutine when it has news (a flight to send, its
// end, input read).
func (c *Conn) Init(server *tlsrec.Server, notify func()) {
	*c = Conn{rec: server.NewConn(nil, notify)}
}

// Ready reports whether the handshake is done.
func (c *Conn) Ready() bool { return c.ready }

// Arrival is what received bytes mean for the connection.
type Arrival uint8

const (
	// Handshaking: the bytes went to the handshake; nothing to parse yet.
	Handshaking Arrival = iota
	// Records: the handshake is done and records wait to be opened
	// (Open).
	Records
	// PlainHTTP: the first bytes are a plain HTTP request, not TLS. The
	// record layer is closed; the loop answers in the clear.
	PlainHTTP
	// NotTLS: the first bytes are neither TLS nor HTTP. The record layer
	// is closed; the loop closes the connection.
	NotTLS
)

// Received takes n received bytes: data when the backend delivered into
// its own buffer, else they are in the room ReceiveBuffer gave.
func (c *Conn) Received(data []byte, n int) Arrival {
	if !c.rec.Started() {
		first := data
		if first == nil {
			first = c.room[:n]
		}
		tlsLike, plainHTTP := tlsrec.Sniff(first)
		if !tlsLike {
			c.rec.Close()
			c.room = nil
			if plainHTTP {
				return PlainHTTP
			}
			return NotTLS
		}
	}
	if data != nil {
		c.rec.Feed(data)
	} else {
		c.rec.Received(n)
	}
	c.room = nil
	if !c.rec.Started() {
		c.rec.Start()
	}
	if c.ready {
		return Records
	}
	return Handshaking
}

// Full reports whether the connection holds as much ciphertext not yet
// opened as it may: the loop pauses its receives.
func (c *Conn) Full() bool { return c.rec.InputFull(inboxHigh) }

// ReceiveBuffer is where the next receive goes (the record layer's
// input), or nil when the connection holds enough not yet opened (during
// the handshake, its reads post a note to go on).
func (c *Conn) ReceiveBuffer() []byte {
	if c.Full() {
		return nil
	}
	c.room = c.rec.Room(receiveRoom)
	return c.room
}

// Handshake takes the handshake's news: done once it has ended, with err
// when it failed (its alert, if any, is in Output).
func (c *Conn) Handshake() (done bool, err error) {
	done, err = c.rec.Handshake()
	if done && err == nil {
		c.ready, c.ackOwed = true, true
	}
	return done, err
}

// Open opens records into dst. It returns the bytes written and nil
// while it may go on, ErrWouldBlock once no whole record is left, io.EOF
// at the client's close_notify, and another error for a record that does
// not authenticate or an alert (crypto/tls queued its own alert: the
// loop sends it and closes).
func (c *Conn) Open(dst []byte) (int, error) {
	n, err := c.rec.Open(dst)
	if err == tlsrec.ErrWouldBlock && c.room == nil {
		c.rec.Trim()
	}
	return n, err
}

// ErrWouldBlock is Open's answer once no whole record is left.
var ErrWouldBlock = tlsrec.ErrWouldBlock

// Seal seals plaintext into the output, once the handshake is done.
func (c *Conn) Seal(plaintext []byte) error {
	if !c.ready || len(plaintext) == 0 {
		return nil
	}
	return c.rec.Seal(plaintext)
}

// Output returns the ciphertext to send now, which stays the
// connection's until Sent, or nil. With nothing to send, ackNow says the
// client's Finished must be acknowledged at once: TLS 1.3's server sends
// its tickets in its own flight, before it, and a client with Nagle's
// algorithm on (Python's ssl) holds its first request until that
// Finished is acknowledged, which the kernel's delayed ACK would hold
// back (tcp(7), TCP_QUICKACK).
func (c *Conn) Output() (out []byte, ackNow bool) {
	out = c.rec.Output()
	if out == nil {
		ackNow, c.ackOwed = c.ackOwed, false
		return nil, ackNow
	}
	c.ackOwed = false // the send carries the ACK
	c.out = out
	return out, false
}

// Sent gives the record layer back the output a send has taken.
func (c *Conn) Sent() {
	if c.out != nil {
		c.rec.Sent(c.out)
		c.out = nil
	}
}

// Idle lets the record layer drop its output buffer between requests.
func (c *Conn) Idle() { c.rec.Idle() }

// CloseNotify queues TLS's close_notify alert (RFC 8446 §6.1) before a
// close the server decided on, so a client tells the end of the response
// from a truncation (OpenSSL 3 reports an EOF without it as an error). It
// reports false when there is none to send: the handshake is not done,
// or the alert is already sent.
func (c *Conn) CloseNotify() bool {
	if !c.ready || c.notified {
		return false
	}
	c.notified = true
	c.rec.CloseNotify()
	return true
}

// Close ends the record layer as the connection closes; a handshake
// still running fails at its next read.
func (c *Conn) Close() { c.rec.Close() }

// State is the handshake's outcome (ALPN's choice among others).
func (c *Conn) State() cryptotls.ConnectionState { return c.rec.State() }

// Facts is the connection's TLS facts for the application (tlsrec.Conn's
// Facts).
func (c *Conn) Facts() []byte { return c.rec.Facts() }
