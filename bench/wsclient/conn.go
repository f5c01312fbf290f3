// Package wsclient is the WebSocket client of make bench-ws: just enough
// of RFC 6455 to drive a server hard at little cost to the client. It
// sends one message, pre-framed and pre-masked, over and over, reads
// the server's frames into a reused buffer, answers pings and never
// offers an extension, so every server frames messages the same way.
package wsclient

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Opcodes of RFC 6455 section 5.2.
const (
	OpContinuation = 0x0
	OpText         = 0x1
	OpBinary       = 0x2
	OpClose        = 0x8
	OpPing         = 0x9
	OpPong         = 0xA
)

// acceptGUID is the key suffix of RFC 6455 section 1.3.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// Handshake is what the server answered to the upgrade request.
type Handshake struct {
	Status int
	// ResponseBytes is the size of the whole 101 response head.
	ResponseBytes int
	// HeaderOrder is the response's header names in wire order.
	HeaderOrder []string
}

// Conn is one client connection. It is not safe for concurrent use,
// except that one goroutine may write while another reads.
type Conn struct {
	conn   net.Conn
	reader *bufio.Reader
	mask   [4]byte
	// message is the last frame Prepare built, masked, ready to write.
	message []byte
	payload []byte // its payload, unmasked, for echo checks
	// buffer holds the payload of the message being read.
	buffer []byte
	// lastLength is the payload length of the frame readFrame appended.
	lastLength int
	// control is a reused buffer for framing pongs and closes.
	control []byte
}

// Dial opens a TCP connection to addr and upgrades it at path.
func Dial(addr, path string, timeout time.Duration) (*Conn, Handshake, error) {
	var handshake Handshake
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, handshake, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &Conn{conn: conn, reader: bufio.NewReaderSize(conn, 64<<10)}
	if handshake, err = c.upgrade(addr, path, timeout); err != nil {
		conn.Close()
		return nil, handshake, err
	}
	// A fresh mask per connection; reusing it for every frame of the
	// connection is what lets Prepare mask a message once. Servers
	// cannot tell (they unmask whatever key comes), and the caches the
	// per-frame key guards against are not on a loopback benchmark path.
	if _, err := rand.Read(c.mask[:]); err != nil {
		conn.Close()
		return nil, handshake, fmt.Errorf("mask key: %w", err)
	}
	return c, handshake, nil
}

// upgrade sends the upgrade request and checks the 101 answer.
func (c *Conn) upgrade(addr, path string, timeout time.Duration) (Handshake, error) {
	var handshake Handshake
	if err := c.conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return handshake, fmt.Errorf("handshake deadline: %w", err)
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return handshake, fmt.Errorf("handshake key: %w", err)
	}
	key := base64.StdEncoding.EncodeToString(nonce[:])
	request := "GET " + path + " HTTP/1.1\r\nHost: " + addr +
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
		"\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c.conn, request); err != nil {
		return handshake, fmt.Errorf("send upgrade to %s%s: %w", addr, path, err)
	}
	var head bytes.Buffer
	response, err := http.ReadResponse(bufio.NewReader(io.TeeReader(&headReader{c.reader}, &head)), nil)
	if err != nil {
		return handshake, fmt.Errorf("read upgrade answer from %s%s: %w", addr, path, err)
	}
	handshake.Status = response.StatusCode
	handshake.ResponseBytes = head.Len()
	handshake.HeaderOrder = HeaderOrder(head.Bytes())
	if response.StatusCode != http.StatusSwitchingProtocols {
		return handshake, fmt.Errorf("%s%s answered the upgrade with status %d, want 101", addr, path, response.StatusCode)
	}
	if !strings.EqualFold(response.Header.Get("Upgrade"), "websocket") {
		return handshake, fmt.Errorf("%s%s answered Upgrade: %q, want websocket", addr, path, response.Header.Get("Upgrade"))
	}
	if got, want := response.Header.Get("Sec-WebSocket-Accept"), acceptKey(key); got != want {
		return handshake, fmt.Errorf("%s%s answered Sec-WebSocket-Accept %q, want %q", addr, path, got, want)
	}
	if ext := response.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		return handshake, fmt.Errorf("%s%s chose extension %q, which was not offered", addr, path, ext)
	}
	return handshake, c.conn.SetDeadline(time.Time{})
}

// headReader hands http.ReadResponse the response head one line at a
// time, so the frames that may follow it in the same segment stay in
// the connection's buffered reader.
type headReader struct{ r *bufio.Reader }

func (h *headReader) Read(p []byte) (int, error) {
	line, err := h.r.ReadSlice('\n')
	if len(line) > len(p) {
		return 0, errors.New("upgrade answer: header line too long")
	}
	return copy(p, line), err
}

// acceptKey is the Sec-WebSocket-Accept the server must send for key.
func acceptKey(key string) string {
	sum := sha1.Sum([]byte(key + acceptGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// HeaderOrder lists the header names of a raw response head in wire
// order.
func HeaderOrder(raw []byte) []string {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	lines := bytes.Split(head, []byte("\r\n"))
	var names []string
	for _, line := range lines[1:] {
		if name, _, ok := bytes.Cut(line, []byte(":")); ok {
			names = append(names, string(name))
		}
	}
	return names
}

// Prepare frames payload as one message of the opcode, masked with the
// connection's key, for Send to write again and again.
func (c *Conn) Prepare(opcode byte, payload []byte) {
	c.message = appendFrame(c.message[:0], opcode, payload, c.mask)
	c.payload = append(c.payload[:0], payload...)
}

// Payload is the payload of the prepared message.
func (c *Conn) Payload() []byte { return c.payload }

// Send writes the prepared message.
func (c *Conn) Send() error {
	if _, err := c.conn.Write(c.message); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// WriteMessage frames and writes one message (not the prepared one).
func (c *Conn) WriteMessage(opcode byte, payload []byte) error {
	c.control = appendFrame(c.control[:0], opcode, payload, c.mask)
	if _, err := c.conn.Write(c.control); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// appendFrame appends one final frame: a header with the mask bit, the
// key, and the payload masked (RFC 6455 section 5.3).
func appendFrame(frame []byte, opcode byte, payload []byte, mask [4]byte) []byte {
	frame = append(frame, 0x80|opcode)
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xFFFF:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	frame = append(frame, mask[:]...)
	start := len(frame)
	frame = append(frame, payload...)
	for i := range payload {
		frame[start+i] ^= mask[i&3]
	}
	return frame
}

// ErrClosed is returned by ReadMessage when the server sent a close
// frame; the error wrapping it carries the close code.
var ErrClosed = errors.New("server closed the WebSocket")

// ReadMessage reads the next data message, reassembling fragments and
// answering pings on the way. The payload is valid until the next call.
func (c *Conn) ReadMessage() (opcode byte, payload []byte, err error) {
	c.buffer = c.buffer[:0]
	opcode = 0
	for {
		fin, op, err := c.readFrame()
		if err != nil {
			return 0, nil, err
		}
		switch op {
		case OpPing:
			ping := c.buffer[len(c.buffer)-c.lastLength:]
			if err := c.WriteMessage(OpPong, ping); err != nil {
				return 0, nil, err
			}
			c.buffer = c.buffer[:len(c.buffer)-c.lastLength]
			continue
		case OpPong:
			c.buffer = c.buffer[:len(c.buffer)-c.lastLength]
			continue
		case OpClose:
			closing := c.buffer[len(c.buffer)-c.lastLength:]
			code := 1005 // no status code present
			if len(closing) >= 2 {
				code = int(binary.BigEndian.Uint16(closing))
			}
			return 0, nil, fmt.Errorf("%w: code %d", ErrClosed, code)
		case OpContinuation:
			if opcode == 0 {
				return 0, nil, errors.New("continuation frame without a message to continue")
			}
		case OpText, OpBinary:
			if opcode != 0 {
				return 0, nil, errors.New("new message inside a fragmented one")
			}
			opcode = op
		default:
			return 0, nil, fmt.Errorf("frame of reserved opcode %#x", op)
		}
		if fin {
			return opcode, c.buffer, nil
		}
	}
}

// maxMessage bounds what a server may send; the benchmark's messages
// are small, so a larger one is a framing error, not a load to buffer.
const maxMessage = 16 << 20

// readFrame reads one frame and appends its payload to c.buffer.
func (c *Conn) readFrame() (fin bool, opcode byte, err error) {
	var head [2]byte
	if _, err := io.ReadFull(c.reader, head[:]); err != nil {
		return false, 0, fmt.Errorf("read frame: %w", err)
	}
	fin, opcode = head[0]&0x80 != 0, head[0]&0x0F
	if head[0]&0x70 != 0 {
		return false, 0, fmt.Errorf("frame with reserved bits %#x set (no extension was negotiated)", head[0]&0x70)
	}
	if head[1]&0x80 != 0 {
		return false, 0, errors.New("masked frame from the server")
	}
	length := uint64(head[1] & 0x7F)
	switch length {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(c.reader, ext[:]); err != nil {
			return false, 0, fmt.Errorf("read frame length: %w", err)
		}
		length = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(c.reader, ext[:]); err != nil {
			return false, 0, fmt.Errorf("read frame length: %w", err)
		}
		length = binary.BigEndian.Uint64(ext[:])
	}
	if length > maxMessage || uint64(len(c.buffer))+length > maxMessage {
		return false, 0, fmt.Errorf("message over %d bytes", maxMessage)
	}
	start := len(c.buffer)
	c.buffer = growTo(c.buffer, start+int(length))
	if _, err := io.ReadFull(c.reader, c.buffer[start:]); err != nil {
		return false, 0, fmt.Errorf("read frame payload: %w", err)
	}
	c.lastLength = int(length)
	return fin, opcode, nil
}

// growTo returns b resized to n, reallocating only when it must.
func growTo(b []byte, n int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	grown := make([]byte, n, max(n, 2*cap(b)))
	copy(grown, b)
	return grown
}

// Close sends a normal close frame and closes the connection without
// waiting for the server's answer: a benchmark's teardown is not
// measured.
func (c *Conn) Close() error {
	// Its own buffer: a reader goroutine may be framing a pong.
	c.conn.Write(appendFrame(nil, OpClose, []byte{0x03, 0xE8}, c.mask)) // 1000, normal closure
	return c.conn.Close()
}

// SetReadDeadline bounds the reads that follow.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }
