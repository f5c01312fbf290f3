//go:build linux

package tests

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestASGIWebSocketServiceRestart: a worker replaced by a rolling reload
// (SIGHUP to the master) or recycled by --max-requests closes its open
// WebSockets with 1012 (service restart), so clients reconnect at once,
// and the new worker takes the next connection; a master stopping closes
// them with 1001 (going away).
func TestASGIWebSocketServiceRestart(t *testing.T) {
	t.Run("SIGHUP", func(t *testing.T) {
		s := startWorkersApp(t, appsDir(t), "asgi_ws_echo_app:app", nil, "--workers", "1")
		c := dialEcho(t, s.addr)
		s.signal(t, syscall.SIGHUP)
		expectServiceRestart(t, c)
		s.waitLog(t, `reload complete`, 1, 30*time.Second)
		// Until the old worker has gone, a connection may still reach it
		// (accepted as it began to drain) and be closed with 1012 again.
		s.waitLog(t, `after draining`, 1, 30*time.Second)
		dialEcho(t, s.addr).Close()
	})
	t.Run("max-requests", func(t *testing.T) {
		s := startWorkersApp(t, appsDir(t), "asgi_ws_echo_app:app", nil, "--workers", "1", "--max-requests", "3")
		c := dialEcho(t, s.addr)
		// The upgrade was the first request; two more reach the limit.
		for i := 0; i < 2; i++ {
			if status, body, err := fetch(oneShot(), s.url("/")); err != nil || status != 200 || body != "echo" {
				t.Fatalf("request %d: %d %q %v", i, status, body, err)
			}
		}
		expectServiceRestart(t, c)
		s.waitLog(t, `after draining`, 1, 30*time.Second)
		dialEcho(t, s.addr).Close()
	})
	// A master stopping is a server going away, not a restart.
	t.Run("SIGTERM is 1001", func(t *testing.T) {
		s := startWorkersApp(t, appsDir(t), "asgi_ws_echo_app:app", nil, "--workers", "1")
		c := dialEcho(t, s.addr)
		exited := make(chan struct{})
		go func() { s.stop(); close(exited) }()
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
			t.Fatalf("on SIGTERM to the master: %v, want close 1001", err)
		}
		<-exited
	})
}

// dialEcho opens a WebSocket to the echo app and checks one round trip.
func dialEcho(t *testing.T, addr string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 20 * time.Second}
	c, _, err := d.Dial("ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "hi" {
		t.Fatalf("echo: %q %v", p, err)
	}
	return c
}

// expectServiceRestart reads until the server's Close, which must carry
// 1012; gorilla answers it as it reads it.
func expectServiceRestart(t *testing.T, c *websocket.Conn) {
	t.Helper()
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseServiceRestart {
		t.Fatalf("when the worker was replaced: %v, want close 1012", err)
	}
}
