package pybridge

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// inTaskOrder checks that pieces holds, for each tag, the pieces 0 to n-1
// of it in order (interleaved with other tags' pieces as they like).
func inTaskOrder(t *testing.T, pieces []string, tags []string, n int) {
	t.Helper()
	next := map[string]int{}
	for _, p := range pieces {
		tag, i, ok := strings.Cut(p, " ")
		if !ok || i != fmt.Sprint(next[tag]) {
			t.Fatalf("piece %q out of order (want %s %d): %q", p, tag, next[tag], pieces)
		}
		next[tag]++
	}
	for _, tag := range tags {
		if next[tag] != n {
			t.Fatalf("%d pieces of %s, want %d: %q", next[tag], tag, n, pieces)
		}
	}
}

// Two tasks stream one body at once: each send waits its turn, no piece
// is lost or split, each task's pieces keep their order, and the
// response ends after the last.
func TestASGIConcurrentSendsStream(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_concurrent_send_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
		rec := &recorder{}
		j.Writer = rec
		s.run(j)
		if j.Response.Outcome() != Streamed || rec.heads != 1 {
			t.Fatalf("outcome %d, heads %d, chunks %q", j.Response.Outcome(), rec.heads, rec.chunks)
		}
		body := strings.Join(rec.chunks, "")
		if !strings.HasSuffix(body, "end") || len(rec.chunks) != 2*8+1 {
			t.Fatalf("chunks %q", rec.chunks)
		}
		var pieces []string
		for _, c := range rec.chunks[:len(rec.chunks)-1] {
			pieces = append(pieces, c[:1]+" "+strings.TrimSuffix(c[1:], "."))
		}
		inTaskOrder(t, pieces, []string{"a", "b"}, 8)
	})
}

// The empty last body message, sent while a piece is being written (it
// filled the output: out until Written), waits for it: the body ends
// after the piece.
func TestASGIConcurrentSendsEmptyEnd(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s, j, w, done := pushPosting(t, loop, "/empty-end")
		piece := <-w.pieces
		w.written(s.ex, j)
		<-done
		if j.Response.Outcome() != Streamed || piece != "piece" {
			t.Fatalf("outcome %d, piece %q", j.Response.Outcome(), piece)
		}
		if seen := string(s.get(t, "/seen").Response.Body()); seen != "piece-done" {
			t.Fatalf("the last send completed before the piece's: %s", seen)
		}
	})
}

// The client leaves while sends wait their turn: every waiting send
// raises ClientDisconnected, as the one being written does.
func TestASGIConcurrentSendsGone(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_concurrent_send_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /gone HTTP/1.1\r\nHost: x\r\n\r\n")
		j.Writer = &recorder{failAfter: 2}
		s.run(j)
		if j.Response.Outcome() != Aborted {
			t.Fatalf("outcome %d", j.Response.Outcome())
		}
		if seen := string(s.get(t, "/seen").Response.Body()); seen != "ClientDisconnected ClientDisconnected" {
			t.Fatalf("the sending tasks saw %q", seen)
		}
	})
}

// countingSocket is a fakeSocket that counts the messages sent before
// the close.
type countingSocket struct {
	fakeSocket
	sends, sendsAtClose int
}

func (c *countingSocket) AcceptWebSocket(protocol []byte, headers *Response, events WebSocketEvents) (WebSocketConn, error) {
	c.events = events
	return socketConn{c}, nil
}

func (c *countingSocket) postMessage(binary bool, payload []byte) (bool, error) {
	c.mu.Lock()
	c.sends++
	c.mu.Unlock()
	return c.fakeSocket.postMessage(binary, payload)
}

func (c *countingSocket) close(code int, reason string) {
	c.mu.Lock()
	c.sendsAtClose = c.sends
	c.mu.Unlock()
	c.fakeSocket.close(code, reason)
}

// Four tasks send on one WebSocket at once: every message goes out
// whole, each task's in order. /late sends from tasks it does not await
// and closes at once: the close goes out after their messages.
func TestASGIConcurrentSendsWebSocket(t *testing.T) {
	for _, path := range []string{"/ws", "/late"} {
		t.Run(path[1:], func(t *testing.T) {
			eachLoop(t, func(t *testing.T, loop Loop) {
				concurrentWebSocketSends(t, loop, path)
			})
		})
	}
}

func concurrentWebSocketSends(t *testing.T, loop Loop, path string) {
	s := startASGI(t, "asgi_concurrent_send_app:app", ASGIOptions{Loop: loop})
	j := s.job(t, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
	j.Request.WebSocket = true
	f := &countingSocket{fakeSocket: fakeSocket{sent: make(chan string, 64)}}
	j.Writer = f
	s.run(j)
	if j.Response.Outcome() != Upgraded {
		t.Fatalf("outcome %d", j.Response.Outcome())
	}
	f.events.Message(false, []byte("m"))
	var pieces []string
	for len(pieces) < 4*8 {
		select {
		case got := <-f.sent:
			pieces = append(pieces, strings.TrimPrefix(got, "m "))
		case <-time.After(20 * time.Second):
			t.Fatalf("%d messages: %q", len(pieces), pieces)
		}
	}
	inTaskOrder(t, pieces, []string{"0", "1", "2", "3"}, 8)
	deadline := time.Now().Add(20 * time.Second)
	for {
		f.mu.Lock()
		closes, before := f.closes, f.sendsAtClose
		f.mu.Unlock()
		if closes == 1 {
			if before != 4*8 {
				t.Fatalf("closed after %d of %d messages", before, 4*8)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("closes %d", closes)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.events.Closed(4001, nil)
}
