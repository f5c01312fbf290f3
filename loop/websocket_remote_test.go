package loop

import (
	"strings"
	"testing"
	"time"

	"github.com/m0serve/m0serve/ws"
)

// remoteEcho hands every message to a consumer goroutine, which takes it
// and echoes it through the Remote: the shape of the Python bridge.
type remoteEcho struct {
	messages chan string
	remote   chan *WebSocketRemote
	closed   chan ws.CloseCode
}

func newRemoteEcho() *remoteEcho {
	return &remoteEcho{messages: make(chan string, 64), remote: make(chan *WebSocketRemote, 1), closed: make(chan ws.CloseCode, 1)}
}

func (e *remoteEcho) ServeInline(req *Request, w *ResponseWriter) {
	c, err := w.AcceptWebSocket(e, nil)
	if err == nil {
		e.remote <- c.Remote()
	}
}

func (e *remoteEcho) OnMessage(c *WebSocket, op ws.Opcode, payload []byte) bool {
	e.messages <- string(payload)
	return true
}

func (e *remoteEcho) OnClose(c *WebSocket, code ws.CloseCode, reason []byte) { e.closed <- code }

func TestWebSocketRemoteEcho(t *testing.T) {
	e := newRemoteEcho()
	h := newHarness(t, e, func(c *Config) { c.WebSocket.MaxQueue = 2 })
	c := h.wsOpen("")
	r := <-e.remote
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 5; i++ {
			m := <-e.messages
			r.Taken()
			if err := r.Send(ws.OpText, []byte("echo "+m)); err != nil {
				done <- err
				return
			}
		}
		r.Close(4003, "consumer done")
		done <- r.Send(ws.OpText, []byte("after close"))
	}()
	var all strings.Builder
	for i := range 5 {
		all.WriteString(clientFrame(ws.OpText, true, string(rune('a'+i))))
	}
	h.fb.write(c, all.String())
	frames := h.framesUntil(c, 6)
	for i := range 5 {
		if want := "echo " + string(rune('a'+i)); frames[i].payload != want {
			t.Fatalf("frame %d: %q, want %q", i, frames[i].payload, want)
		}
	}
	if closeCode(frames[5]) != 4003 {
		t.Fatalf("last frame %+v, want close 4003", frames[5])
	}
	if err := <-done; err != ErrWebSocketClosed {
		t.Fatalf("Send after Close: %v, want ErrWebSocketClosed", err)
	}
	h.fb.write(c, clientClose(4003, ""))
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if code := <-e.closed; code != 4003 {
		t.Fatalf("OnClose %d, want 4003", code)
	}
}

// TestWebSocketRemoteSendWaits: Send waits while the output is above the
// high-water mark and goes on once the loop has taken it.
func TestWebSocketRemoteSendWaits(t *testing.T) {
	e := newRemoteEcho()
	h := newHarness(t, e, nil)
	c := h.wsOpen("")
	r := <-e.remote
	chunk := make([]byte, 64<<10)
	returned := make(chan int, 8)
	go func() {
		for i := 0; i < 6; i++ {
			if r.Send(ws.OpBinary, chunk) != nil {
				break
			}
			returned <- i
		}
		close(returned)
	}()
	// Four chunks fill the 256 KiB mark while no pass runs: the fifth waits.
	for i := 0; i < 4; i++ {
		<-returned
	}
	select {
	case i := <-returned:
		t.Fatalf("Send %d returned above the high-water mark", i)
	case <-time.After(200 * time.Millisecond):
	}
	h.until("sends go on", func() bool { return len(returned) == 2 })
	if n := len(serverFrames(t, h.fb.output(c))); n < 4 {
		t.Fatalf("%d frames sent, want at least 4", n)
	}
	h.fb.write(c, clientClose(1000, ""))
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if err := r.Send(ws.OpText, []byte("late")); err != ErrWebSocketClosed {
		t.Fatalf("Send after the connection ended: %v", err)
	}
}

// TestWebSocketRemotePost: Post never waits; past the high-water mark it
// reports full, and the loop calls the SetOnWritten function once the
// output is below the mark again (the poster then posts on), or once the
// connection has ended: a full Post is always answered. Every message
// arrives whole, in order.
func TestWebSocketRemotePost(t *testing.T) {
	e := newRemoteEcho()
	h := newHarness(t, e, nil)
	c := h.wsOpen("")
	r := <-e.remote
	written := make(chan bool, 8)
	r.SetOnWritten(func(closed bool) { written <- closed })
	chunk := make([]byte, 64<<10)
	posted, fulls := 0, 0
	for posted < 10 {
		chunk[0] = byte(posted)
		full, err := r.Post(ws.OpBinary, chunk)
		if err != nil {
			t.Fatalf("Post %d: %v", posted, err)
		}
		posted++
		if !full {
			continue
		}
		fulls++
		closed := untilReceived(h, "OnWritten", written)
		if closed {
			t.Fatalf("OnWritten said closed after Post %d", posted)
		}
	}
	if fulls == 0 {
		t.Fatal("ten 64 KiB messages never passed the high-water mark")
	}
	h.until("every frame", func() bool { return len(serverFrames(t, h.fb.output(c))) == 10 })
	for i, f := range serverFrames(t, h.fb.output(c)) {
		if len(f.payload) != len(chunk) || f.payload[0] != byte(i) {
			t.Fatalf("frame %d: %d bytes starting %d", i, len(f.payload), f.payload[0])
		}
	}
	// A full Post when the client closes is answered too (closed, or
	// not when the output went below the mark first).
	for {
		full, err := r.Post(ws.OpBinary, chunk)
		if err != nil {
			t.Fatal(err)
		}
		if full {
			break
		}
	}
	h.fb.write(c, clientClose(1000, ""))
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	h.until("the last full Post answered", func() bool { return len(written) == 1 })
	if _, err := r.Post(ws.OpText, []byte("late")); err != ErrWebSocketClosed {
		t.Fatalf("Post after the connection ended: %v", err)
	}
}
