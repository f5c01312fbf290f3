package pybridge

import (
	"sync"
	"testing"
	"time"
)

// socketConn is the WebSocketConn a fake's AcceptWebSocket returns (a
// Port's Post and a WebSocketConn's differ): its calls go to the fake.
type socketConn struct{ fake webSocketFake }

type webSocketFake interface {
	postMessage(binary bool, payload []byte) (bool, error)
	setWritten(f func(closed bool))
	close(code int, reason string)
	takeOne()
}

func (c socketConn) Post(binary bool, payload []byte) (bool, error) {
	return c.fake.postMessage(binary, payload)
}
func (c socketConn) SetWritten(f func(closed bool)) { c.fake.setWritten(f) }
func (c socketConn) Close(code int, reason string)  { c.fake.close(code, reason) }
func (c socketConn) Taken()                         { c.fake.takeOne() }

// fakeSocket is a Port that takes WebSocket accepts, and the accepted
// connection behind a socketConn: what the server side does, recorded.
type fakeSocket struct {
	recorder
	mu       sync.Mutex
	protocol string
	headers  []string
	events   WebSocketEvents
	sent     chan string
	taken    int
	closes   int
}

func (f *fakeSocket) AcceptWebSocket(protocol []byte, headers *Response, events WebSocketEvents) (WebSocketConn, error) {
	f.protocol = string(protocol)
	for i := 0; i < headers.HeaderLen(); i++ {
		n, v := headers.Header(i)
		f.headers = append(f.headers, string(n)+": "+string(v))
	}
	f.events = events
	return socketConn{f}, nil
}

func (f *fakeSocket) postMessage(binary bool, payload []byte) (bool, error) {
	f.sent <- string(payload)
	return false, nil
}

func (f *fakeSocket) setWritten(func(closed bool)) {}

func (f *fakeSocket) close(code int, reason string) {
	f.mu.Lock()
	f.closes++
	f.mu.Unlock()
}

func (f *fakeSocket) takeOne() {
	f.mu.Lock()
	f.taken++
	f.mu.Unlock()
}

// An accepted WebSocket: the job completes Upgraded with the app's
// subprotocol and headers, messages go both ways (each taken once), and
// after the disconnect the app's send and close raise: nothing reaches
// the connection.
func TestASGIWebSocketBridge(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_ws_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /ws HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Protocol: a, b\r\n\r\n")
		j.Request.WebSocket = true
		f := &fakeSocket{sent: make(chan string, 4)}
		j.Writer = f
		s.run(j)
		if j.Response.Outcome() != Upgraded || f.protocol != "b" || len(f.headers) != 1 || f.headers[0] != "x-scheme: ws" {
			t.Fatalf("accept: outcome %d, protocol %q, headers %q", j.Response.Outcome(), f.protocol, f.headers)
		}
		f.events.Message(false, []byte("hi"))
		select {
		case got := <-f.sent:
			if got != "echo hi" {
				t.Fatalf("sent %q", got)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no echo")
		}
		f.events.Closed(4000, []byte("bye"))
		// The app's own sends after the disconnect never reach the
		// connection; what it saw, it tells an HTTP request.
		deadline := time.Now().Add(20 * time.Second)
		for {
			f.mu.Lock()
			taken, closes := f.taken, f.closes
			f.mu.Unlock()
			if taken == 1 && closes == 0 && string(s.get(t, "/seen").Response.Body()) ==
				"4000 bye ClientDisconnected ClientDisconnected" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("taken %d, closes %d, the app saw %q", taken, closes, s.get(t, "/seen").Response.Body())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// A message that is no mapping is the same error in both scopes: the
// HTTP request and the WebSocket share one reading of messages. Before,
// the WebSocket's copy took a non-mapping for one without the key
// (KeyError; fields with a default read as absent).
func TestASGIMessageNotAMapping(t *testing.T) {
	s := startASGI(t, "asgi_ws_app:app", ASGIOptions{Loop: LoopAsyncio})
	s.get(t, "/not-a-mapping")
	http := string(s.get(t, "/seen").Response.Body())
	j := s.job(t, "GET /not-a-mapping HTTP/1.1\r\nHost: x\r\n\r\n")
	j.Request.WebSocket = true
	j.Writer = &fakeSocket{sent: make(chan string, 4)}
	s.run(j)
	if st := j.Response.Status(); st != 403 {
		t.Fatalf("status %d, want 403 (the close before accept)", st)
	}
	ws := string(s.get(t, "/seen").Response.Body())
	if http != "TypeError" || ws != http {
		t.Fatalf("send(None): %q over HTTP, %q over a WebSocket; want TypeError for both", http, ws)
	}
}
