//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	binaryorder "encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// The conformance client: written from RFC 6455 and RFC 7692, sharing no
// code with ws/, so that a bug there cannot hide itself. It writes frames
// exactly as a case describes them (any opcode, RSV bits and length, in
// one write, one write per frame, or cut into pieces) and checks every
// frame the server sends against what the RFCs ask of a server.

// Opcodes (RFC 6455 §5.2).
const (
	opContinuation byte = 0x0
	opText         byte = 0x1
	opBinary       byte = 0x2
	opClose        byte = 0x8
	opPing         byte = 0x9
	opPong         byte = 0xA
)

// confFrame is one frame as the client sends or receives it. rsv holds
// RSV1..RSV3 as the bits 4, 2, 1.
type confFrame struct {
	fin     bool
	rsv     byte
	op      byte
	payload []byte
}

// dataFrame is a whole frame (FIN set) with op and payload.
func dataFrame(op byte, payload string) confFrame {
	return confFrame{fin: true, op: op, payload: []byte(payload)}
}

func textFrame(s string) confFrame { return dataFrame(opText, s) }
func pingFrame(s string) confFrame { return dataFrame(opPing, s) }

// fragment is a frame of a fragmented message (§5.4).
func fragment(op byte, s string, fin bool) confFrame {
	return confFrame{fin: fin, op: op, payload: []byte(s)}
}

// closeFrame is a Close frame with code and reason; code 0 sends none.
func closeFrame(code int, reason string) confFrame {
	if code == 0 && reason == "" {
		return confFrame{fin: true, op: opClose}
	}
	return confFrame{fin: true, op: opClose, payload: append(binaryorder.BigEndian.AppendUint16(nil, uint16(code)), reason...)}
}

// encode masks the frame with a fresh key (§5.3: a client masks every
// frame) and uses the shortest length encoding (§5.2).
func (f confFrame) encode() []byte {
	b0 := f.rsv<<4 | f.op
	if f.fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(f.payload); {
	case n <= 125:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = binaryorder.BigEndian.AppendUint16(append(out, 0x80|126), uint16(n))
	default:
		out = binaryorder.BigEndian.AppendUint64(append(out, 0x80|127), uint64(n))
	}
	var key [4]byte
	rand.Read(key[:])
	out = append(out, key[:]...)
	start := len(out)
	out = append(out, f.payload...)
	for i := range f.payload {
		out[start+i] ^= key[i%4]
	}
	return out
}

// confClient is one connection of the conformance client.
type confClient struct {
	conn net.Conn
	br   *bufio.Reader
	// deflate is set when permessage-deflate was negotiated.
	deflate *confDeflate
	// closed: the case ran the connection to its end.
	closed bool
	// notes are behaviours Autobahn grades NON-STRICT: allowed, not
	// preferred (a failed connection dropped without a Close).
	notes []string
}

// confClosed is a Close frame from the server, as a read error.
type confClosed struct {
	code   int // 0: no code
	reason string
}

func (c *confClosed) Error() string {
	return fmt.Sprintf("server closed with %d %q", c.code, c.reason)
}

// confDial opens a WebSocket to addr+path offering extensions (the
// Sec-WebSocket-Extensions value, "" for none) and checks the 101.
func confDial(addr, path, extensions string) (*confClient, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	// Bounds a failing case; the fail-fast ones bound their wait tighter.
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	request := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n"
	if extensions != "" {
		request += "Sec-WebSocket-Extensions: " + extensions + "\r\n"
	}
	if _, err := io.WriteString(conn, request+"\r\n"); err != nil {
		conn.Close()
		return nil, err
	}
	c := &confClient{conn: conn, br: bufio.NewReaderSize(conn, 64<<10)}
	resp, err := http.ReadResponse(c.br, nil)
	if err == nil {
		err = c.checkUpgrade(resp, key, extensions)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// checkUpgrade checks the server's handshake (§4.2.2 step 5, §4.1 of the
// client's checks) and the extension it accepted (RFC 7692 §5, §7.1).
func (c *confClient) checkUpgrade(resp *http.Response, key, offer string) error {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("handshake: status %d, want 101", resp.StatusCode)
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") || !headerHasToken(resp.Header, "Connection", "upgrade") {
		return fmt.Errorf("handshake: Upgrade %q, Connection %q", resp.Header.Get("Upgrade"), resp.Header.Get("Connection"))
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got, want := resp.Header.Get("Sec-WebSocket-Accept"), base64.StdEncoding.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("handshake: Sec-WebSocket-Accept %q, want %q", got, want)
	}
	accepted := strings.TrimSpace(strings.Join(resp.Header.Values("Sec-WebSocket-Extensions"), ","))
	if accepted == "" {
		return nil
	}
	if offer == "" {
		return fmt.Errorf("handshake: extensions %q accepted, none offered", accepted)
	}
	d, err := parseDeflateResponse(accepted, offer)
	if err != nil {
		return fmt.Errorf("handshake: %v", err)
	}
	c.deflate = d
	return nil
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// write sends the frames in one write.
func (c *confClient) write(frames ...confFrame) error {
	var out []byte
	for _, f := range frames {
		out = append(out, f.encode()...)
	}
	return c.writeRaw(out)
}

// writeRaw writes bytes as they are. A server that failed the connection
// may have closed it before all were written: that is no error here, the
// case's next read tells what the server did.
func (c *confClient) writeRaw(b []byte) error {
	_, err := c.conn.Write(b)
	return endIsNoError(err)
}

func endIsNoError(err error) error {
	if err != nil && isEnd(err) {
		return nil
	}
	return err
}

// writeEach sends each frame in a write of its own.
func (c *confClient) writeEach(frames ...confFrame) error {
	for _, f := range frames {
		if err := c.write(f); err != nil {
			return err
		}
	}
	return nil
}

// writeChopped sends the frames' bytes in writes of chop bytes, so that
// headers and payloads arrive split (the connection has TCP_NODELAY).
func (c *confClient) writeChopped(chop int, frames ...confFrame) error {
	var out []byte
	for _, f := range frames {
		out = append(out, f.encode()...)
	}
	for len(out) > 0 {
		n := min(chop, len(out))
		if _, err := c.conn.Write(out[:n]); err != nil {
			return endIsNoError(err) // as in writeRaw
		}
		out = out[n:]
	}
	return nil
}

// sendMessage sends a whole message, compressed when deflate was
// negotiated and compress is set, in frames of at most fragmentSize bytes
// (0: one frame).
func (c *confClient) sendMessage(op byte, payload []byte, compress bool, fragmentSize int) error {
	var rsv byte
	if compress {
		if c.deflate == nil {
			return errors.New("no permessage-deflate to compress with")
		}
		payload = c.deflate.compress(payload)
		rsv = 4
	}
	if fragmentSize <= 0 || fragmentSize >= len(payload) {
		return c.write(confFrame{fin: true, rsv: rsv, op: op, payload: payload})
	}
	var frames []confFrame
	for i := 0; i < len(payload); i += fragmentSize {
		f := confFrame{op: opContinuation, payload: payload[i:min(i+fragmentSize, len(payload))]}
		if i == 0 {
			f.op, f.rsv = op, rsv
		}
		f.fin = i+fragmentSize >= len(payload)
		frames = append(frames, f)
	}
	return c.write(frames...)
}

// readFrame reads one frame and checks it as §5 asks of a server's
// frames: unmasked, known opcode, no RSV bit but a negotiated RSV1 on a
// message's first frame, control frames whole and at most 125 bytes.
func (c *confClient) readFrame() (confFrame, error) {
	var head [2]byte
	if _, err := io.ReadFull(c.br, head[:]); err != nil {
		return confFrame{}, err
	}
	f := confFrame{fin: head[0]&0x80 != 0, rsv: head[0] >> 4 & 7, op: head[0] & 0x0f}
	if head[1]&0x80 != 0 {
		return f, errors.New("server sent a masked frame (§5.1)")
	}
	n := uint64(head[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(c.br, ext[:]); err != nil {
			return f, err
		}
		n = uint64(binaryorder.BigEndian.Uint16(ext[:]))
		if n < 126 {
			return f, fmt.Errorf("server used a 16-bit length for %d bytes (§5.2: minimal encoding)", n)
		}
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(c.br, ext[:]); err != nil {
			return f, err
		}
		n = binaryorder.BigEndian.Uint64(ext[:])
		if n <= 0xffff || n>>63 != 0 {
			return f, fmt.Errorf("server used a 64-bit length for %d bytes (§5.2)", n)
		}
	}
	if n > 64<<20 {
		return f, fmt.Errorf("server frame of %d bytes", n)
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, f.payload); err != nil {
		return f, err
	}
	switch f.op {
	case opContinuation, opText, opBinary:
	case opClose, opPing, opPong:
		if !f.fin || n > 125 {
			return f, fmt.Errorf("server sent control frame %#x fin=%v of %d bytes (§5.5)", f.op, f.fin, n)
		}
	default:
		return f, fmt.Errorf("server sent reserved opcode %#x", f.op)
	}
	allowed := byte(0)
	if c.deflate != nil && (f.op == opText || f.op == opBinary) {
		allowed = 4
	}
	if f.rsv&^allowed != 0 {
		return f, fmt.Errorf("server set RSV bits %03b on opcode %#x", f.rsv, f.op)
	}
	return f, nil
}

// confMessage is a whole data message or a control frame.
type confMessage struct {
	op      byte
	payload []byte
}

// readMessage returns the next data message (reassembled and inflated)
// or control frame; a Close is a *confClosed error.
func (c *confClient) readMessage() (confMessage, error) {
	var m confMessage
	compressed := false
	for {
		f, err := c.readFrame()
		if err != nil {
			return m, err
		}
		switch f.op {
		case opClose:
			return m, parseServerClose(f.payload)
		case opPing, opPong:
			if m.op != 0 {
				// A control frame inside a fragmented message: report it
				// after the message, which is all a case waits for.
				continue
			}
			return confMessage{f.op, f.payload}, nil
		case opText, opBinary:
			if m.op != 0 {
				return m, fmt.Errorf("server began a message inside another (§5.4)")
			}
			m.op, compressed = f.op, f.rsv&4 != 0
		case opContinuation:
			if m.op == 0 {
				return m, fmt.Errorf("server sent a continuation with no message (§5.4)")
			}
			if f.rsv != 0 {
				return m, fmt.Errorf("server set RSV1 on a continuation (RFC 7692 §6.1)")
			}
		}
		m.payload = append(m.payload, f.payload...)
		if !f.fin {
			continue
		}
		if compressed {
			if m.payload, err = c.deflate.inflate(m.payload); err != nil {
				return m, err
			}
		}
		if m.op == opText && !utf8.Valid(m.payload) {
			return m, errors.New("server sent a text message that is not UTF-8 (§8.1)")
		}
		return m, nil
	}
}

// parseServerClose checks a Close payload (§5.5.1, §7.4) and returns it
// as a *confClosed.
func parseServerClose(p []byte) error {
	switch {
	case len(p) == 0:
		return &confClosed{}
	case len(p) == 1:
		return errors.New("server sent a Close with a 1-byte payload")
	}
	code := int(binaryorder.BigEndian.Uint16(p))
	if !closeCodeValid(code) {
		return fmt.Errorf("server sent close code %d, which may not be sent (§7.4)", code)
	}
	if !utf8.Valid(p[2:]) {
		return errors.New("server sent a close reason that is not UTF-8")
	}
	return &confClosed{code: code, reason: string(p[2:])}
}

// closeCodeValid: the codes an endpoint may send, §7.4.1 and the IANA
// registry (1012-1014 registered since).
func closeCodeValid(code int) bool {
	return code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999
}

// expectMessage reads the next message and wants op and payload.
func (c *confClient) expectMessage(op byte, payload []byte) error {
	m, err := c.readMessage()
	if err != nil {
		return fmt.Errorf("waiting for %s of %d bytes: %w", opName(op), len(payload), err)
	}
	if m.op != op || !bytes.Equal(m.payload, payload) {
		return fmt.Errorf("got %s of %d bytes %s, want %s of %d bytes %s", opName(m.op), len(m.payload), preview(m.payload),
			opName(op), len(payload), preview(payload))
	}
	return nil
}

// expectFailure wants the server to fail the connection (§7.1.7): a
// Close with one of codes and then the end of the connection. A dropped
// connection without a Close passes, noted as non-strict.
func (c *confClient) expectFailure(codes ...int) error {
	c.closed = true
	m, err := c.readMessage()
	var closed *confClosed
	switch {
	case errors.As(err, &closed):
		if !containsInt(codes, closed.code) {
			return fmt.Errorf("failed the connection with close %d, want %v", closed.code, codes)
		}
		c.write(closeFrame(closed.code, ""))
		return c.expectEnd()
	case err != nil && isTimeout(err):
		return fmt.Errorf("the connection was not failed (want close %v): %v", codes, err)
	case err != nil && isEnd(err):
		c.notes = append(c.notes, "dropped the connection without a Close")
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("got %s %s where the server must fail the connection with %v", opName(m.op), preview(m.payload), codes)
}

// closeHandshake sends a Close and wants it echoed (code 0: a Close
// without a code, answered without one or with 1000), then the end of
// the connection, which the server closes first (§7.1.1).
func (c *confClient) closeHandshake(code int, reason string) error {
	c.closed = true
	if err := c.write(closeFrame(code, reason)); err != nil {
		return err
	}
	return c.expectCloseReply(code)
}

// expectCloseReply wants the server's answer to the Close it was sent.
func (c *confClient) expectCloseReply(code int) error {
	c.closed = true
	m, err := c.readMessage()
	var closed *confClosed
	if !errors.As(err, &closed) {
		if err == nil {
			return fmt.Errorf("got %s %s, want the Close answered", opName(m.op), preview(m.payload))
		}
		return fmt.Errorf("want the Close answered: %w", err)
	}
	if closed.code != code && (code != 0 || closed.code != 1000) {
		return fmt.Errorf("close %d answered with %d", code, closed.code)
	}
	return c.expectEnd()
}

// expectEnd wants the server to close the TCP connection with nothing
// more sent.
func (c *confClient) expectEnd() error {
	f, err := c.readFrame()
	if err == nil {
		return fmt.Errorf("server sent %s after its Close", opName(f.op))
	}
	if !isEnd(err) {
		return fmt.Errorf("connection not closed after the Close: %v", err)
	}
	return nil
}

func isEnd(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func opName(op byte) string {
	switch op {
	case opContinuation:
		return "continuation"
	case opText:
		return "text"
	case opBinary:
		return "binary"
	case opClose:
		return "close"
	case opPing:
		return "ping"
	case opPong:
		return "pong"
	}
	return "opcode " + strconv.Itoa(int(op))
}

func preview(b []byte) string {
	if len(b) > 24 {
		return fmt.Sprintf("%q...", b[:24])
	}
	return fmt.Sprintf("%q", b)
}
