package loop

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/m0serve/m0serve/ws"
)

// wsRecorder is a WebSocket handler that echoes (unless queue is set, when
// it holds every message untaken) and records what it saw.
type wsRecorder struct {
	queue    bool
	protocol []byte
	conn     *WebSocket
	messages []string
	closed   bool
	code     ws.CloseCode
	reason   string
}

func (r *wsRecorder) ServeInline(req *Request, w *ResponseWriter) {
	if !req.IsWebSocket() {
		w.Respond(200, []byte("plain"))
		return
	}
	c, err := w.AcceptWebSocket(r, r.protocol)
	if err == ErrProtocolNotOffered {
		w.Respond(400, []byte("no such subprotocol"))
		return
	}
	r.conn = c
}

func (r *wsRecorder) OnMessage(c *WebSocket, op ws.Opcode, payload []byte) bool {
	r.messages = append(r.messages, op.String()+":"+string(payload))
	if r.queue {
		return true
	}
	if string(payload) == "close please" {
		c.Close(4002, "as asked")
		if err := c.Send(op, payload); err != ErrWebSocketClosed {
			panic("Send after Close: " + fmt.Sprint(err))
		}
		return false
	}
	c.Send(op, payload)
	return false
}

func (r *wsRecorder) OnClose(c *WebSocket, code ws.CloseCode, reason []byte) {
	if r.closed {
		panic("OnClose called twice")
	}
	r.closed, r.code, r.reason = true, code, string(reason)
}

const upgradeRequest = "GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

// clientFrame is a masked frame as a client sends it.
func clientFrame(op ws.Opcode, fin bool, payload string) string {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n <= 125:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = append(out, 0x80|126, byte(n>>8), byte(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	key := [4]byte{0x11, 0x22, 0x33, 0x44}
	out = append(out, key[:]...)
	for i := 0; i < len(payload); i++ {
		out = append(out, payload[i]^key[i%4])
	}
	return string(out)
}

func clientClose(code ws.CloseCode, reason string) string {
	if code == 0 {
		return clientFrame(ws.OpClose, true, "")
	}
	return clientFrame(ws.OpClose, true, string([]byte{byte(code >> 8), byte(code)})+reason)
}

// serverFrame is one frame the server sent.
type serverFrame struct {
	op      ws.Opcode
	rsv1    bool
	payload string
}

// serverFrames splits what follows the 101 head into frames.
func serverFrames(t *testing.T, out string) []serverFrame {
	t.Helper()
	head, rest, ok := strings.Cut(out, "\r\n\r\n")
	if !ok || !strings.HasPrefix(head, "HTTP/1.1 101 ") {
		t.Fatalf("no 101 response: %q", out)
	}
	var frames []serverFrame
	for len(rest) >= 2 {
		b0, b1 := rest[0], rest[1]
		if b1&0x80 != 0 {
			t.Fatalf("server frame is masked")
		}
		n, at := int(b1&0x7f), 2
		switch n {
		case 126:
			n, at = int(binary.BigEndian.Uint16([]byte(rest[2:4]))), 4
		case 127:
			n, at = int(binary.BigEndian.Uint64([]byte(rest[2:10]))), 10
		}
		if len(rest) < at+n {
			break
		}
		frames = append(frames, serverFrame{ws.Opcode(b0 & 0x0f), b0&0x40 != 0, rest[at : at+n]})
		rest = rest[at+n:]
	}
	return frames
}

func closeCode(f serverFrame) ws.CloseCode {
	if f.op != ws.OpClose || len(f.payload) < 2 {
		return ws.CloseNoStatus
	}
	return ws.CloseCode(f.payload[0])<<8 | ws.CloseCode(f.payload[1])
}

// wsOpen connects and upgrades, with extra head lines.
func (h *harness) wsOpen(extra string) *fakeConn {
	c := h.connect()
	h.fb.write(c, upgradeRequest+extra+"\r\n")
	h.until("101", func() bool { return strings.Contains(h.fb.output(c), "\r\n\r\n") })
	return c
}

// framesUntil runs passes until the server has sent n frames.
func (h *harness) framesUntil(c *fakeConn, n int) []serverFrame {
	h.t.Helper()
	var frames []serverFrame
	h.until("frames", func() bool {
		frames = serverFrames(h.t, h.fb.output(c))
		return len(frames) >= n
	})
	return frames
}

func TestWebSocketEchoPingClose(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, nil)
	c := h.wsOpen("")
	if out := h.fb.output(c); !strings.Contains(out, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") ||
		strings.Contains(out, "Sec-WebSocket-Extensions") || !strings.Contains(out, "\r\nServer: test\r\nDate: ") {
		t.Fatalf("handshake response: %q", out)
	}
	// A fragmented text message with a ping between its fragments, then
	// an unsolicited pong, which must be ignored.
	h.fb.write(c, clientFrame(ws.OpText, false, "Hel")+clientFrame(ws.OpPing, true, "p1")+
		clientFrame(ws.OpContinuation, true, "lo")+clientFrame(ws.OpPong, true, "unasked")+
		clientFrame(ws.OpBinary, true, "\x00\x01"))
	frames := h.framesUntil(c, 3)
	want := []serverFrame{{ws.OpPong, false, "p1"}, {ws.OpText, false, "Hello"}, {ws.OpBinary, false, "\x00\x01"}}
	for i, w := range want {
		if frames[i] != w {
			t.Fatalf("frame %d: %+v, want %+v", i, frames[i], w)
		}
	}
	h.fb.write(c, clientClose(4001, "bye"))
	frames = h.framesUntil(c, 4)
	if code := closeCode(frames[3]); code != 4001 {
		t.Fatalf("close echoed %d, want 4001", code)
	}
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if !rec.closed || rec.code != 4001 || rec.reason != "bye" {
		t.Fatalf("handler saw close %v %d %q", rec.closed, rec.code, rec.reason)
	}
}

func TestWebSocketCloseWithoutCode(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, nil)
	c := h.wsOpen("")
	h.fb.write(c, clientClose(0, ""))
	frames := h.framesUntil(c, 1)
	if frames[0].op != ws.OpClose || frames[0].payload != "" {
		t.Fatalf("reply to a close without code: %+v, want an empty close", frames[0])
	}
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if rec.code != ws.CloseNoStatus {
		t.Fatalf("handler saw %d, want 1005", rec.code)
	}
}

func TestWebSocketTransportDies(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, nil)
	c := h.wsOpen("")
	h.fb.write(c, clientFrame(ws.OpText, true, "last"))
	h.fb.shutdownWrite(c)
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if len(rec.messages) != 1 || rec.code != ws.CloseAbnormal {
		t.Fatalf("handler saw %q then %d; want the message, then 1006", rec.messages, rec.code)
	}
}

// TestWebSocketMaxSize: a frame declaring more than the limit is refused
// with 1009 from its header alone.
func TestWebSocketMaxSize(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, func(c *Config) { c.WebSocket.MaxMessage = 1000 })
	c := h.wsOpen("")
	h.fb.write(c, clientFrame(ws.OpBinary, true, strings.Repeat("x", 1000)))
	h.framesUntil(c, 1)
	// Only the header of a 1 MiB frame: nothing of its payload yet.
	h.fb.write(c, "\x82\xff\x00\x00\x00\x00\x00\x10\x00\x00"+"mask")
	frames := h.framesUntil(c, 2)
	if code := closeCode(frames[1]); code != ws.CloseMessageTooBig {
		t.Fatalf("close %d, want 1009", code)
	}
	if rec.code != ws.CloseMessageTooBig {
		t.Fatalf("handler saw %d, want 1009", rec.code)
	}
}

// TestWebSocketPingTimeout: the loop pings on its interval, a pong keeps
// the connection, and a ping left unanswered closes it with 1011.
func TestWebSocketPingTimeout(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, func(c *Config) {
		c.WebSocket.PingInterval = 10 * time.Second
		c.WebSocket.PingTimeout = 5 * time.Second
	})
	c := h.wsOpen("")
	h.advanceClock(11 * time.Second)
	frames := h.framesUntil(c, 1)
	if frames[0].op != ws.OpPing {
		t.Fatalf("frame %+v, want a ping", frames[0])
	}
	h.fb.write(c, clientFrame(ws.OpPong, true, frames[0].payload))
	h.passes(2)
	h.advanceClock(6 * time.Second) // past the timeout, but answered
	if n := len(serverFrames(t, h.fb.output(c))); n != 1 {
		t.Fatalf("%d frames after an answered ping, want 1", n)
	}
	h.advanceClock(5 * time.Second) // the next ping
	h.framesUntil(c, 2)
	h.advanceClock(6 * time.Second) // unanswered
	frames = h.framesUntil(c, 3)
	if code := closeCode(frames[2]); code != ws.CloseInternalError {
		t.Fatalf("close %d, want 1011", code)
	}
	if h.fb.isClosed(c) {
		t.Fatal("closed before the close handshake's timeout")
	}
	h.advanceClock(DefaultWebSocketCloseTimeout + time.Second)
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if rec.code != ws.CloseAbnormal {
		t.Fatalf("handler saw %d, want 1006", rec.code)
	}
}

// TestWebSocketMaxQueue: with MaxQueue messages untaken the loop reads no
// further, and resumes as the handler takes them.
func TestWebSocketMaxQueue(t *testing.T) {
	rec := &wsRecorder{queue: true}
	h := newHarness(t, rec, func(c *Config) { c.WebSocket.MaxQueue = 4 })
	c := h.wsOpen("")
	var all strings.Builder
	for i := range 10 {
		all.WriteString(clientFrame(ws.OpText, true, string(rune('a'+i))))
	}
	h.fb.write(c, all.String())
	h.until("queue full", func() bool { return len(rec.messages) == 4 })
	h.passes(5)
	if len(rec.messages) != 4 {
		t.Fatalf("%d messages delivered with the queue full, want 4", len(rec.messages))
	}
	rec.conn.Taken()
	rec.conn.Taken()
	h.until("resumed", func() bool { return len(rec.messages) == 6 })
	h.passes(5)
	if len(rec.messages) != 6 {
		t.Fatalf("%d messages after two were taken, want 6", len(rec.messages))
	}
}

// TestWebSocketMaxQueueBytes: the queue is bounded by its messages'
// bytes as well: the loop stops reading once the handler holds
// MaxQueueBytes, whatever the count, and resumes as it takes them.
func TestWebSocketMaxQueueBytes(t *testing.T) {
	rec := &wsRecorder{queue: true}
	h := newHarness(t, rec, func(c *Config) { c.WebSocket.MaxQueueBytes = 1000 })
	c := h.wsOpen("")
	var all strings.Builder
	for i := range 10 {
		all.WriteString(clientFrame(ws.OpText, true, strings.Repeat(string(rune('a'+i)), 400)))
	}
	h.fb.write(c, all.String())
	// 400, 800, then 1 200: past the bound after the third.
	h.until("queue full", func() bool { return len(rec.messages) == 3 })
	h.passes(5)
	if len(rec.messages) != 3 {
		t.Fatalf("%d messages delivered with 1 200 bytes queued, want 3", len(rec.messages))
	}
	rec.conn.Taken()
	h.until("resumed", func() bool { return len(rec.messages) == 4 })
	h.passes(5)
	if len(rec.messages) != 4 {
		t.Fatalf("%d messages after one was taken, want 4", len(rec.messages))
	}
}

func TestWebSocketDeflate(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, nil)
	c := h.wsOpen("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
	if !strings.Contains(h.fb.output(c), "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n") {
		t.Fatalf("deflate not negotiated: %q", h.fb.output(c))
	}
	big := strings.Repeat("compress me ", 200)
	h.fb.write(c, clientFrame(ws.OpText, true, big))
	frames := h.framesUntil(c, 1)
	if !frames[0].rsv1 || len(frames[0].payload) >= len(big) {
		t.Fatalf("echo of %d bytes: rsv1 %v, %d bytes; want compressed", len(big), frames[0].rsv1, len(frames[0].payload))
	}
	inflated, err := ws.NewInflater().Inflate(nil, []byte(frames[0].payload), 0)
	if err != nil || string(inflated) != big {
		t.Fatalf("inflated echo: %v, %d bytes", err, len(inflated))
	}
}

func TestWebSocketHandshakeRefused(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, nil)
	c := h.connect()
	h.fb.write(c, strings.Replace(upgradeRequest, "Version: 13", "Version: 8", 1)+"\r\n")
	resp := h.responses(c, 1)[0]
	if !strings.HasPrefix(resp, "HTTP/1.1 426 ") || !strings.Contains(resp, "Sec-WebSocket-Version: 13\r\n") {
		t.Fatalf("version 8: %q", resp)
	}

	rec.protocol = []byte("chat")
	c = h.connect()
	h.fb.write(c, upgradeRequest+"Sec-WebSocket-Protocol: other\r\n\r\n")
	if resp := h.responses(c, 1)[0]; !strings.HasPrefix(resp, "HTTP/1.1 400 ") {
		t.Fatalf("subprotocol not offered: %q", resp)
	}
	c = h.wsOpen("Sec-WebSocket-Protocol: other, chat\r\n")
	if !strings.Contains(h.fb.output(c), "Sec-WebSocket-Protocol: chat\r\n") {
		t.Fatalf("subprotocol: %q", h.fb.output(c))
	}
}

func TestWebSocketDisabled(t *testing.T) {
	h := newHarness(t, &wsRecorder{}, func(c *Config) { c.WebSocket.Disabled = true })
	c := h.connect()
	h.fb.write(c, upgradeRequest+"\r\n")
	if resp := h.responses(c, 1)[0]; !strings.HasPrefix(resp, "HTTP/1.1 200 ") {
		t.Fatalf("with WebSockets off: %q", resp)
	}
}

// TestWebSocketShutdownGoingAway: a shutdown closes with 1001, a worker's
// replacement (Drain) with 1012.
func TestWebSocketShutdownGoingAway(t *testing.T) {
	for _, tc := range []struct {
		name string
		code ws.CloseCode
	}{{"shutdown", ws.CloseGoingAway}, {"drain", ws.CloseServiceRestart}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &wsRecorder{}
			h := newHarness(t, rec, nil)
			c := h.wsOpen("")
			if tc.code == ws.CloseServiceRestart {
				h.l.Drain(10 * time.Second)
			} else {
				h.l.Shutdown(10 * time.Second)
			}
			frames := h.framesUntil(c, 1)
			if code := closeCode(frames[0]); code != tc.code {
				t.Fatalf("close %d, want %d", code, tc.code)
			}
			h.fb.write(c, clientClose(tc.code, ""))
			h.until("stopped", func() bool { return h.l.stopped })
			if rec.code != tc.code {
				t.Fatalf("handler saw %d, want the client's %d", rec.code, tc.code)
			}
		})
	}
}

// TestWebSocketHandlerCloses: the handler's Close sends its code, drops
// what the client sends until its Close, and ends when that comes.
func TestWebSocketHandlerCloses(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, nil)
	c := h.wsOpen("")
	h.fb.write(c, clientFrame(ws.OpText, true, "close please"))
	frames := h.framesUntil(c, 1)
	if closeCode(frames[0]) != 4002 || frames[0].payload[2:] != "as asked" {
		t.Fatalf("handler's close: %+v", frames[0])
	}
	h.fb.write(c, clientFrame(ws.OpText, true, "in flight")+clientClose(4002, ""))
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if n := len(serverFrames(t, h.fb.output(c))); n != 1 || len(rec.messages) != 1 || rec.code != 4002 {
		t.Fatalf("%d frames sent, messages %q, close %d; want 1, the first only, 4002", n, rec.messages, rec.code)
	}
}
