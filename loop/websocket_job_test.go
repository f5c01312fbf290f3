package loop

import (
	"strings"
	"testing"

	"github.com/m0serve/m0serve/ws"
)

// deferWebSockets defers every WebSocket handshake as a job.
var deferWebSockets = HandlerFunc(func(req *Request, w *ResponseWriter) {
	if req.IsWebSocket() {
		w.DeferWebSocket()
		return
	}
	w.Respond(200, []byte("plain"))
})

// takeJob runs passes until the queue holds a job.
func (h *harness) takeJob(q *JobQueue) *Job {
	h.t.Helper()
	var j *Job
	h.until("a job", func() bool { j = q.TryTake(); return j != nil })
	return j
}

// deferredHandshake sends request to a loop that defers WebSocket
// handshakes to a job queue, which is closed when the test ends.
func deferredHandshake(t *testing.T, request string) (*harness, *fakeConn, *JobQueue) {
	q := NewJobQueue(4)
	t.Cleanup(q.Close)
	h := newHarness(t, deferWebSockets, func(c *Config) { c.Jobs = q })
	c := h.connect()
	h.fb.write(c, request)
	return h, c, q
}

// TestWebSocketJobAccept: a deferred handshake accepted from another
// goroutine gets its 101 with the job's fields and protocol, and the
// Remote's sends made before the 101 follow it.
func TestWebSocketJobAccept(t *testing.T) {
	h, c, q := deferredHandshake(t, upgradeRequest+"Sec-WebSocket-Protocol: one, two\r\n\r\n")
	j := h.takeJob(q)
	if !j.IsWebSocket() {
		t.Fatal("IsWebSocket false for a deferred handshake")
	}
	if p := j.WebSocketProtocols(nil); len(p) != 2 || string(p[1]) != "two" {
		t.Fatalf("protocols %q", p)
	}
	if _, err := j.AcceptWebSocket(newRemoteEcho(), []byte("three")); err != ErrProtocolNotOffered {
		t.Fatalf("accept with a protocol not offered: %v", err)
	}
	j.SetHeader("X-App", "yes")
	e := newRemoteEcho()
	r, err := j.AcceptWebSocket(e, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send(ws.OpText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	h.until("101", func() bool { return strings.Contains(h.fb.output(c), "\r\n\r\n") })
	frames := h.framesUntil(c, 1)
	out := h.fb.output(c)
	for _, want := range []string{"HTTP/1.1 101 ", "\r\nSec-WebSocket-Protocol: two\r\n", "\r\nX-App: yes\r\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("101 lacks %q:\n%s", want, out)
		}
	}
	if frames[0].payload != "hello" {
		t.Fatalf("first frame %+v", frames[0])
	}
	h.fb.write(c, clientFrame(ws.OpText, true, "ping?"))
	h.until("message", func() bool { return len(e.messages) == 1 })
	if m := <-e.messages; m != "ping?" {
		t.Fatalf("message %q", m)
	}
	r.Taken()
	h.fb.write(c, clientClose(4000, "bye"))
	h.until("closed", func() bool { return h.fb.isClosed(c) })
	if code := <-e.closed; code != 4000 {
		t.Fatalf("OnClose %d, want 4000", code)
	}
}

// TestWebSocketJobDenied: a deferred handshake answered as a plain
// response (an app's denial) is an HTTP response; no upgrade happens.
func TestWebSocketJobDenied(t *testing.T) {
	h, c, q := deferredHandshake(t, upgradeRequest+"\r\n")
	j := h.takeJob(q)
	j.SetClose()
	j.WriteHeader(403, 0)
	j.Finish()
	if got := h.responses(c, 1)[0]; !strings.HasPrefix(got, "HTTP/1.1 403 ") {
		t.Fatalf("response:\n%s", got)
	}
	h.until("closed", func() bool { return h.fb.isClosed(c) })
}

// TestWebSocketJobBadHandshake: DeferWebSocket answers a bad handshake
// itself and defers nothing.
func TestWebSocketJobBadHandshake(t *testing.T) {
	h, c, q := deferredHandshake(t, strings.Replace(upgradeRequest, "Version: 13", "Version: 8", 1)+"\r\n")
	if got := h.responses(c, 1)[0]; !strings.HasPrefix(got, "HTTP/1.1 426 ") {
		t.Fatalf("response:\n%s", got)
	}
	if j := q.TryTake(); j != nil {
		t.Fatal("a bad handshake was deferred")
	}
}

// TestWebSocketJobTransportDies: an accepted job's connection that dies
// ends with OnClose(1006), and the Remote's sends fail after.
func TestWebSocketJobTransportDies(t *testing.T) {
	h, c, q := deferredHandshake(t, upgradeRequest+"\r\n")
	j := h.takeJob(q)
	e := newRemoteEcho()
	r, err := j.AcceptWebSocket(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.until("101", func() bool { return strings.Contains(h.fb.output(c), "\r\n\r\n") })
	h.fb.shutdownWrite(c)
	h.until("OnClose", func() bool { return len(e.closed) == 1 })
	if code := <-e.closed; code != ws.CloseAbnormal {
		t.Fatalf("OnClose %d, want 1006", code)
	}
	if err := r.Send(ws.OpText, []byte("late")); err != ErrWebSocketClosed {
		t.Fatalf("Send after the connection died: %v", err)
	}
}
