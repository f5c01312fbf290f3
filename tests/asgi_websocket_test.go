//go:build linux

package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"
)

// TestASGIWebSocket runs the ASGI websocket scope end to end with
// gorilla/websocket and coder/websocket against a raw ASGI app and a
// Starlette WebSocket route (tests/apps/asgi_websocket_app.py).
func TestASGIWebSocket(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := startASGI(t, v, "asgi_websocket_app:app", withVenv(t, "--access-log", "--ws-max-size", "1M")...)
		base := "ws://" + s.addr
		t.Run("python websockets", func(t *testing.T) { testPythonWebsockets(t, base+"/mirror") })
		t.Run("echo and disconnect", func(t *testing.T) { testASGIWebSocketEcho(t, s, base) })
		t.Run("1005 and 1006", func(t *testing.T) { testASGIWebSocketNoCode(t, s, base) })
		t.Run("starlette", func(t *testing.T) { testASGIWebSocketStarlette(t, base) })
		t.Run("fastapi", func(t *testing.T) { testASGIWebSocketFastAPI(t, s, base) })
		t.Run("app closes", func(t *testing.T) { testASGIWebSocketAppCloses(t, s, base) })
		t.Run("denials", func(t *testing.T) { testASGIWebSocketDenials(t, s, base) })
		t.Run("close codes from the server", func(t *testing.T) { testASGIWebSocketServerCloses(t, base) })
		t.Run("plain HTTP", func(t *testing.T) {
			if resp, body := get(t, s.url("/plain")); resp.StatusCode != 200 || body != "plain" {
				t.Fatalf("plain request: %d %q", resp.StatusCode, body)
			}
		})
		checkNoTraceback(t, s.server, "raised before accept", "raised after accept")
		if logs := s.logs.String(); !strings.Contains(logs, `"GET /echo?q=1 HTTP/1.1" 101`) {
			t.Errorf("no access-log line for the 101:\n%s", logs)
		}
	})
}

// testASGIWebSocketEcho: the accept's headers, text and binary both ways,
// the scope, and the client's close code and reason in the disconnect.
func testASGIWebSocketEcho(t *testing.T, s *asgiServer, base string) {
	c, resp, err := websocket.DefaultDialer.Dial(base+"/echo?q=1", http.Header{"Sec-WebSocket-Protocol": {"p1, p2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if resp.Header.Get("X-App") != "echo" || resp.Header.Get("Sec-WebSocket-Protocol") != "" {
		t.Fatalf("101 fields: %v", resp.Header)
	}
	roundTrip := func(kind int, send string) (int, string) {
		t.Helper()
		if err := c.WriteMessage(kind, []byte(send)); err != nil {
			t.Fatal(err)
		}
		k, p, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return k, string(p)
	}
	if k, got := roundTrip(websocket.TextMessage, "héllo"); k != websocket.TextMessage || got != "echo héllo" {
		t.Fatalf("text echo: %d %q", k, got)
	}
	if k, got := roundTrip(websocket.BinaryMessage, "\x00\xff"); k != websocket.BinaryMessage || got != "\x00\xff" {
		t.Fatalf("binary echo: %d %q", k, got)
	}
	_, raw := roundTrip(websocket.TextMessage, "scope")
	var scope map[string]any
	if err := json.Unmarshal([]byte(raw), &scope); err != nil {
		t.Fatal(err)
	}
	want := `{"asgi":{"spec_version":"2.5","version":"3.0"},"extensions":{"websocket.http.response":{}},` +
		`"http_version":"1.1","path":"/echo","query_string":"q=1","raw_path":"/echo","scheme":"ws",` +
		`"subprotocols":["p1","p2"],"type":"websocket"}`
	if got, _ := json.Marshal(scope); string(got) != want {
		t.Fatalf("scope:\n%s\nwant\n%s", got, want)
	}
	// Messages sent before the close reach the app before its disconnect,
	// which repeats on the next receive.
	for i := 0; i < 3; i++ {
		c.WriteMessage(websocket.TextMessage, []byte("queued"))
	}
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4005, "bye"))
	s.waitFile(t, "disconnect", `[4005, "bye", 3, true]`)
}

// testASGIWebSocketNoCode: a Close without a code is 1005 to the app, a
// connection that drops without one 1006.
func testASGIWebSocketNoCode(t *testing.T, s *asgiServer, base string) {
	c, _, err := websocket.DefaultDialer.Dial(base+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.CloseMessage, nil)
	s.waitFile(t, "disconnect", `[1005, "", 0, true]`)
	c.Close()

	c, _, err = websocket.DefaultDialer.Dial(base+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.TextMessage, []byte("queued"))
	c.Close()
	s.waitFile(t, "disconnect", `[1006, "", 1, true]`)
}

// testASGIWebSocketStarlette: Starlette's WebSocket class accepts the
// client's first subprotocol and echoes.
func testASGIWebSocketStarlette(t *testing.T, base string) {
	ctx := wsContext(t)
	c, _, err := coder.Dial(ctx, base+"/starlette/echo", &coder.DialOptions{Subprotocols: []string{"chat.v2", "chat.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "chat.v2" {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	if err := c.Write(ctx, coder.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.Read(ctx); err != nil || string(p) != "starlette hi" {
		t.Fatalf("read %q %v", p, err)
	}
	if err := c.Close(coder.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
}

// testASGIWebSocketFastAPI: FastAPI's WebSocket receives and sends
// bytes and hears the client's close code as WebSocketDisconnect.
func testASGIWebSocketFastAPI(t *testing.T, s *asgiServer, base string) {
	c, _, err := websocket.DefaultDialer.Dial(base+"/fastapi/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteMessage(websocket.BinaryMessage, []byte("abc"))
	if k, p, err := c.ReadMessage(); err != nil || k != websocket.BinaryMessage || string(p) != "cba" {
		t.Fatalf("read %d %q %v", k, p, err)
	}
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1001, ""))
	s.waitFile(t, "fastapi-disconnect", "1001")
}

// testASGIWebSocketAppCloses: the app's close code and reason reach the
// client, and its send after the close raises an OSError.
func testASGIWebSocketAppCloses(t *testing.T, s *asgiServer, base string) {
	c, _, err := websocket.DefaultDialer.Dial(base+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteMessage(websocket.TextMessage, []byte("close"))
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4002 || ce.Text != "asked" {
		t.Fatalf("read after the app's close: %v", err)
	}
	s.waitFile(t, "send-after-close", "ClientDisconnected")
}

// testASGIWebSocketDenials: close before accept is a 403, the denial
// extension's response goes out as sent, send before accept and a
// subprotocol the client did not offer raise, and an app that raises
// before accept gets a 500.
func testASGIWebSocketDenials(t *testing.T, s *asgiServer, base string) {
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/deny", 403, ""},
		{"/denial", 401, "no entry"},
		{"/send-first", 403, ""},
		{"/bad-protocol", 403, ""},
		{"/raise-before", 500, ""},
	} {
		_, resp, err := websocket.DefaultDialer.Dial(base+c.path, nil)
		if err == nil || resp == nil || resp.StatusCode != c.status {
			t.Fatalf("%s: %v %v, want %d", c.path, resp, err, c.status)
		}
		body, _ := io.ReadAll(resp.Body)
		if c.body != "" && string(body) != c.body {
			t.Fatalf("%s: body %q, want %q", c.path, body, c.body)
		}
	}
	s.waitFile(t, "send-first", "RuntimeError")
	s.waitFile(t, "bad-protocol", "RuntimeError")
}

// testASGIWebSocketServerCloses: an app returning without closing closes
// with 1000 after what it sent; one that raises after accept closes 1011.
func testASGIWebSocketServerCloses(t *testing.T, base string) {
	c, _, err := websocket.DefaultDialer.Dial(base+"/return", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "bye" {
		t.Fatalf("read %q %v", p, err)
	}
	var ce *websocket.CloseError
	if _, _, err := c.ReadMessage(); !errors.As(err, &ce) || ce.Code != 1000 {
		t.Fatalf("after the app returned: %v, want close 1000", err)
	}

	r, _, err := websocket.DefaultDialer.Dial(base+"/raise-after", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.WriteMessage(websocket.TextMessage, []byte("go"))
	if _, _, err := r.ReadMessage(); !errors.As(err, &ce) || ce.Code != 1011 {
		t.Fatalf("after the app raised: %v, want close 1011", err)
	}
}

// TestASGIWebSocketShutdown: SIGTERM closes an ASGI app's open WebSocket
// with 1001 (going away); the app hears the disconnect, and the server
// exits.
func TestASGIWebSocketShutdown(t *testing.T) {
	s := startASGI(t, variants[0], "asgi_websocket_app:app", withVenv(t)...)
	c, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	exited := make(chan struct{})
	go func() { s.stop(); close(exited) }()
	_, _, err = c.ReadMessage() // gorilla answers the Close as it reads it
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("on SIGTERM: %v, want close 1001", err)
	}
	<-exited
	s.waitFile(t, "disconnect", `[1001, "", 0, true]`)
}

// TestASGIWebSocketSendWaits: to a client that does not read, the app's
// send waits once the connection's output is above its high-water mark
// (and the kernel's buffers are full), so the app does not get through
// 25 MiB of messages; once the client reads, every message arrives.
func TestASGIWebSocketSendWaits(t *testing.T) {
	s := startASGI(t, variants[0], "asgi_websocket_app:app", withVenv(t)...)
	c, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/flood", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(s.dir, "flood")
	// Wait for the app's progress to stop (the limit bounds a failing test).
	last, still := "", 0
	for deadline := time.Now().Add(20 * time.Second); still < 10; {
		if time.Now().After(deadline) {
			t.Fatalf("the app's sends never waited: %s messages sent", last)
		}
		time.Sleep(50 * time.Millisecond)
		data, _ := os.ReadFile(path)
		if string(data) != "" && string(data) == last {
			still++
		} else {
			last, still = string(data), 0
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, "flood-done")); err == nil {
		t.Fatalf("all 400 messages went out to a client that reads nothing")
	}
	t.Logf("the app's sends waited after %s messages of 64 KiB", last)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for i := 0; i < 400; i++ {
		if _, p, err := c.ReadMessage(); err != nil || len(p) != 65536 {
			t.Fatalf("message %d: %d bytes, %v", i, len(p), err)
		}
	}
	s.waitFile(t, "flood-done", "yes")
}

// TestASGIWebSocketDenialBody: a handshake denied with
// websocket.http.response.* and a body far past the response outbox (200 000
// bytes and 10 MiB, in one message and in pieces) reaches the client whole,
// in both --asgi-thread modes; the server goes on serving and stops on
// SIGTERM. Before the fix, completing such a denial on the loop thread
// (--asgi-thread loop) waited for an outbox only that thread empties: the
// client got nothing and the process did not exit.
func TestASGIWebSocketDenialBody(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		for _, mode := range []string{"loop", "executor"} {
			t.Run(mode, func(t *testing.T) {
				s := startASGI(t, v, "asgi_websocket_app:app", "--asgi-thread", mode)
				client := &http.Client{Timeout: 30 * time.Second}
				for _, c := range []struct{ size, pieces int }{
					{200000, 1}, {200000, 7}, {10 << 20, 1}, {10 << 20, 40},
				} {
					req, err := http.NewRequest("GET", s.url(fmt.Sprintf("/denial-big?size=%d&pieces=%d", c.size, c.pieces)), nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Connection", "Upgrade")
					req.Header.Set("Upgrade", "websocket")
					req.Header.Set("Sec-WebSocket-Version", "13")
					req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
					resp, err := client.Do(req)
					if err != nil {
						t.Fatalf("%d bytes in %d pieces: %v\n%s", c.size, c.pieces, err, s.logs)
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 403 || len(body) != c.size {
						t.Fatalf("%d bytes in %d pieces: %d, %d bytes, %v\n%s", c.size, c.pieces, resp.StatusCode, len(body), err, s.logs)
					}
					step := (c.size + c.pieces - 1) / c.pieces
					for i := 0; i < c.size; i += step {
						if body[i] != byte(i%251) {
							t.Fatalf("%d bytes in %d pieces: byte %d is %d, want %d", c.size, c.pieces, i, body[i], i%251)
						}
					}
					s.waitFile(t, "denial-big", strconv.Itoa(c.size))
				}
				// The I/O thread still serves a new connection.
				if resp, body := get(t, s.url("/plain")); resp.StatusCode != 200 || body != "plain" {
					t.Fatalf("plain request after the denials: %d %q", resp.StatusCode, body)
				}
				s.server.stop()
			})
		}
	})
}
