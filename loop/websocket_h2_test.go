package loop

import (
	"strings"
	"testing"
	"time"

	m0h2 "github.com/m0serve/m0serve/http2"
	"github.com/m0serve/m0serve/ws"
	"golang.org/x/net/http2"
)

// h2WebSocketConfig serves HTTP/2 with RFC 8441 offered.
func h2WebSocketConfig(c *Config) {
	c.HTTP2 = &HTTP2Config{Conn: m0h2.Config{EnableConnectProtocol: true}}
}

// wsConnect is an extended CONNECT (RFC 8441 §4) for path on stream id.
func (c *h2Client) wsConnect(id uint32, path string, fields ...string) string {
	return c.headers(id, "CONNECT", path, false, append([]string{":protocol", "websocket", "sec-websocket-version", "13"}, fields...)...)
}

// wsData is ws frames in one DATA frame on stream id.
func (c *h2Client) wsData(id uint32, frames string, end bool) string {
	c.fr.WriteData(id, end, []byte(frames))
	return c.take()
}

// h2WSFrames is what the server sent on stream id as WebSocket frames.
func (h *harness) h2WSFrames(c *fakeConn, id uint32, n int) (*h2Stream, []serverFrame) {
	h.t.Helper()
	var s *h2Stream
	var frames []serverFrame
	h.until("frames on the stream", func() bool {
		s = parseH2Output(h.t, h.fb.output(c)).streams[id]
		if s == nil {
			return false
		}
		frames = serverFrames(h.t, "HTTP/1.1 101 \r\n\r\n"+string(s.body))
		return len(frames) >= n
	})
	return s, frames
}

// An extended CONNECT is the same upgrade request for the handler; its
// accept is a 200 without Sec-WebSocket-Accept, the frames travel in the
// stream's DATA both ways while another stream is served, and the close
// handshake ends the stream.
func TestWebSocketOverHTTP2(t *testing.T) {
	rec := &wsRecorder{protocol: []byte("chat")}
	h := newHarness(t, rec, h2WebSocketConfig)
	cl := newH2Client()
	c := h.connect()
	h.fb.write(c, cl.open())
	h.until("SETTINGS_ENABLE_CONNECT_PROTOCOL", func() bool {
		return strings.Contains(h.fb.output(c), "\x00\x08\x00\x00\x00\x01")
	})
	h.fb.write(c, cl.wsConnect(1, "/chat", "sec-websocket-protocol", "chat, superchat"))
	h.fb.write(c, cl.wsData(1, clientFrame(ws.OpText, false, "Hel")+clientFrame(ws.OpPing, true, "p1")+
		clientFrame(ws.OpContinuation, true, "lo"), false))
	st, frames := h.h2WSFrames(c, 1, 2)
	if st.fields[":status"] != "200" || st.fields["sec-websocket-protocol"] != "chat" ||
		st.fields["sec-websocket-accept"] != "" || st.fields["server"] != "test" || st.ended || st.reset {
		t.Fatalf("accept: %+v ended %v reset %v", st.fields, st.ended, st.reset)
	}
	if frames[0] != (serverFrame{ws.OpPong, false, "p1"}) || frames[1] != (serverFrame{ws.OpText, false, "Hello"}) {
		t.Fatalf("frames %+v", frames)
	}
	// Another stream meanwhile.
	h.fb.write(c, cl.headers(3, "GET", "/plain", true))
	if other := h.h2Ended(c, 3); string(other.body) != "plain" {
		t.Fatalf("stream 3 beside the WebSocket: %+v %q", other.fields, other.body)
	}
	h.fb.write(c, cl.wsData(1, clientClose(4001, "bye"), false))
	_, frames = h.h2WSFrames(c, 1, 3)
	if closeCode(frames[2]) != 4001 {
		t.Fatalf("close echoed %+v", frames[2])
	}
	h.until("END_STREAM", func() bool { return h.h2Ended(c, 1).ended })
	if !rec.closed || rec.code != 4001 || rec.reason != "bye" {
		t.Fatalf("handler saw close %v %d %q", rec.closed, rec.code, rec.reason)
	}
	h.fb.write(c, cl.wsData(1, "", true))
	h.passes(2)
	if h.fb.isClosed(c) {
		t.Fatal("the connection closed with its WebSocket")
	}
	if st := h.h2Ended(c, 1); st.reset {
		t.Fatalf("stream reset after a clean close (%v)", st.resetCode)
	}
}

// A deferred handshake (the ASGI path) accepted from another goroutine:
// the job's fields go in the 200, the Remote's sends follow it, and a
// reset of the stream is the WebSocket dying (1006).
func TestWebSocketOverHTTP2Deferred(t *testing.T) {
	q := NewJobQueue(4)
	t.Cleanup(q.Close)
	h := newHarness(t, deferWebSockets, func(c *Config) { h2WebSocketConfig(c); c.Jobs = q })
	cl := newH2Client()
	c := h.connect()
	h.fb.write(c, cl.open())
	h.fb.write(c, cl.wsConnect(1, "/chat", "sec-websocket-extensions", "permessage-deflate"))
	j := h.takeJob(q)
	if !j.IsWebSocket() {
		t.Fatal("IsWebSocket false for an extended CONNECT")
	}
	j.SetHeader("X-App", "yes")
	e := newRemoteEcho()
	r, err := j.AcceptWebSocket(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send(ws.OpText, []byte("early")); err != nil {
		t.Fatal(err)
	}
	h.fb.write(c, cl.wsData(1, clientFrame(ws.OpText, true, "hi"), false))
	st, frames := h.h2WSFrames(c, 1, 1)
	if st.fields[":status"] != "200" || st.fields["x-app"] != "yes" ||
		!strings.HasPrefix(st.fields["sec-websocket-extensions"], "permessage-deflate") {
		t.Fatalf("accept: %+v", st.fields)
	}
	if frames[0].op != ws.OpText {
		t.Fatalf("first frame %+v", frames[0])
	}
	h.until("message", func() bool { return len(e.messages) > 0 })
	if m := <-e.messages; m != "hi" {
		t.Fatalf("message %q", m)
	}
	cl.fr.WriteRSTStream(1, http2.ErrCodeCancel)
	h.fb.write(c, cl.take())
	h.until("OnClose", func() bool { return len(e.closed) > 0 })
	if code := <-e.closed; code != ws.CloseAbnormal {
		t.Fatalf("close %d after a reset", code)
	}
	if err := r.Send(ws.OpText, []byte("late")); err != ErrWebSocketClosed {
		t.Fatalf("send after the reset: %v", err)
	}
}

// Without the offer, :protocol is malformed (the codec resets the
// stream); with WebSockets off the loop does not offer it.
func TestWebSocketOverHTTP2NotOffered(t *testing.T) {
	h := newHarness(t, &wsRecorder{}, func(c *Config) { h2WebSocketConfig(c); c.WebSocket.Disabled = true })
	cl := newH2Client()
	c := h.connect()
	h.fb.write(c, cl.open())
	h.fb.write(c, cl.wsConnect(1, "/chat"))
	if st := h.h2Ended(c, 1); !st.reset || st.resetCode != http2.ErrCodeProtocol {
		t.Fatalf("stream 1: %+v reset %v %v", st.fields, st.reset, st.resetCode)
	}
}

// A shutdown starts the close handshake of a stream's WebSocket (1001)
// beside the GOAWAY; the client's Close ends the stream, and the loop
// stops once it has.
func TestWebSocketOverHTTP2Shutdown(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, h2WebSocketConfig)
	cl := newH2Client()
	c := h.connect()
	h.fb.write(c, cl.open())
	h.fb.write(c, cl.wsConnect(1, "/chat"))
	h.until("accepted", func() bool { return rec.conn != nil })
	h.l.Shutdown(10 * time.Second)
	_, frames := h.h2WSFrames(c, 1, 1)
	if code := closeCode(frames[0]); code != ws.CloseGoingAway {
		t.Fatalf("close %d, want 1001", code)
	}
	out := parseH2Output(t, h.fb.output(c))
	if len(out.goAways) != 1 || len(out.pings) != 1 {
		t.Fatalf("GOAWAYs %v, PINGs %v", out.goAways, out.pings)
	}
	cl.fr.WritePing(true, out.pings[0])
	h.fb.write(c, cl.take())
	h.fb.write(c, cl.wsData(1, clientClose(ws.CloseGoingAway, ""), true))
	if st := h.h2Ended(c, 1); !st.ended || st.reset || rec.code != ws.CloseGoingAway {
		t.Fatalf("stream ended %v reset %v, handler saw %d", st.ended, st.reset, rec.code)
	}
	h.until("the last GOAWAY", func() bool { return len(parseH2Output(t, h.fb.output(c)).goAways) == 2 })
	h.fb.shutdownWrite(c)
	h.until("stopped", func() bool { return h.l.stopped })
}

// Back-pressure is the stream's flow control: while the handler holds
// MaxQueue messages the loop reads no more, so their DATA gets no credit
// back and the client's window stays spent; taking them resumes both.
func TestWebSocketOverHTTP2QueueHoldsCredit(t *testing.T) {
	rec := &wsRecorder{queue: true}
	h := newHarness(t, rec, func(c *Config) { h2WebSocketConfig(c); c.WebSocket.MaxQueue = 2 })
	cl := newH2Client()
	c := h.connect()
	h.fb.write(c, cl.open())
	h.fb.write(c, cl.wsConnect(1, "/chat"))
	h.until("accepted", func() bool { return rec.conn != nil })
	// 40 messages of 4 KiB: more than a quarter of the 256 KiB stream
	// window, so read ones would be credited back.
	msg := strings.Repeat("m", 4096)
	for range 40 {
		h.fb.write(c, cl.wsData(1, clientFrame(ws.OpText, true, msg), false))
	}
	h.until("queue full", func() bool { return len(rec.messages) == 2 })
	h.passes(5)
	if n, st := len(rec.messages), parseH2Output(t, h.fb.output(c)).streams[1]; n != 2 || st.updates != 0 {
		t.Fatalf("%d messages delivered, %d stream WINDOW_UPDATEs with the queue full", n, st.updates)
	}
	for len(rec.messages) < 40 {
		n := len(rec.messages)
		rec.conn.Taken()
		rec.conn.Taken()
		h.until("resumed", func() bool { return len(rec.messages) >= min(n+2, 40) })
	}
	h.passes(2) // Taken read on at once; the pass sends
	if st := parseH2Output(t, h.fb.output(c)).streams[1]; st.updates == 0 {
		t.Fatalf("no credit returned once the messages were taken: %d messages, stream %+v", len(rec.messages), st)
	}
}

// A client that holds a WebSocket stream's window shut meets
// --send-timeout: the stream is reset (CANCEL) and the WebSocket dies
// (1006), the connection serving on.
func TestWebSocketOverHTTP2SendTimeout(t *testing.T) {
	rec := &wsRecorder{}
	h := newHarness(t, rec, h2WebSocketConfig)
	cl := newH2Client()
	c := h.connect()
	cl.buf.WriteString(http2.ClientPreface)
	cl.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	h.fb.write(c, cl.take())
	h.fb.write(c, cl.wsConnect(1, "/chat"))
	h.fb.write(c, cl.wsData(1, clientFrame(ws.OpPing, true, "p1"), false))
	h.until("the accept", func() bool {
		s := parseH2Output(t, h.fb.output(c)).streams[1]
		return s != nil && s.fields[":status"] == "200"
	})
	h.advanceClock(DefaultSendTimeout / 2)
	if s := parseH2Output(t, h.fb.output(c)).streams[1]; s.reset {
		t.Fatal("reset before --send-timeout")
	}
	h.advanceClock(DefaultSendTimeout/2 + 2*time.Second)
	h.until("the stream's reset", func() bool {
		s := parseH2Output(t, h.fb.output(c)).streams[1]
		return s != nil && s.reset
	})
	if s := parseH2Output(t, h.fb.output(c)).streams[1]; s.resetCode != http2.ErrCodeCancel || h.fb.isClosed(c) {
		t.Fatalf("reset %v, connection closed %v", s.resetCode, h.fb.isClosed(c))
	}
	h.until("the handler's close", func() bool { return rec.closed })
	if rec.code != ws.CloseAbnormal {
		t.Fatalf("the handler saw %d, want 1006", rec.code)
	}
}
