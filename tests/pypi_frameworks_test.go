//go:build linux

package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestLitestar serves a Litestar 2 app (tests/apps/litestar_app.py, from
// tests/.venv): typed parameters, a validated dataclass body and
// Litestar's 400 for a bad one, lifespan state, a streamed response, and
// its WebSocket listener and raw handler.
func TestLitestar(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "litestar_app:app", withVenv(t)...)
	if resp, body := get(t, s.url("/")); resp.StatusCode != 200 || body != "Hello from Litestar" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	_, body := get(t, s.url("/state"))
	wantJSON(t, "lifespan state", body, `{"greeting": "started by lifespan"}`)
	_, body = get(t, s.url("/items/42?q=caf%C3%A9"))
	wantJSON(t, "typed parameters", body, `{"id": 42, "q": "café"}`)
	if resp, _ := get(t, s.url("/items/forty-two")); resp.StatusCode != 404 && resp.StatusCode != 400 {
		t.Errorf("GET /items/forty-two: %d, want Litestar's 404 or 400", resp.StatusCode)
	}
	resp, body := postJSONBody(t, s.url("/orders"), `{"item": "tea", "quantity": 3}`)
	if resp.StatusCode != 201 {
		t.Fatalf("POST /orders: %d %s", resp.StatusCode, body)
	}
	wantJSON(t, "validated body", body, `{"item": "tea", "quantity": 3, "double": 6}`)
	if resp, body := postJSONBody(t, s.url("/orders"), `{"item": "tea", "quantity": "three"}`); resp.StatusCode != 400 || !strings.Contains(body, "quantity") {
		t.Errorf("POST /orders with a bad quantity: %d %s, want Litestar's 400 naming it", resp.StatusCode, body)
	}
	wantLines(t, s.url("/stream"), 50)

	c := wsDial(t, "ws://"+s.addr+"/echo")
	if k, got := wsRoundTrip(t, c, websocket.TextMessage, "héllo"); k != websocket.TextMessage || got != "echo héllo" {
		t.Fatalf("listener: %d %q", k, got)
	}
	raw := wsDial(t, "ws://"+s.addr+"/raw")
	_, got := wsRoundTrip(t, raw, websocket.TextMessage, "one")
	wantJSON(t, "raw handler", got, `{"got": "one", "path": "/raw"}`)
	wsWantClose(t, raw, "bye", 4003)
	checkNoTraceback(t, s.server)
}

// TestQuart serves a Quart app (tests/apps/quart_app.py, from
// tests/.venv): JSON, a 1 MiB multipart upload parsed by Quart, a
// before_serving hook, a streamed response and a WebSocket.
func TestQuart(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "quart_app:app", withVenv(t)...)
	if resp, body := get(t, s.url("/")); resp.StatusCode != 200 || body != "Hello from Quart" {
		t.Fatalf("GET /: %d %q", resp.StatusCode, body)
	}
	_, body := get(t, s.url("/state"))
	wantJSON(t, "before_serving", body, `{"greeting": "started by lifespan"}`)
	_, body = postJSONBody(t, s.url("/json"), `{"numbers": [1, 2, 3], "name": "m0"}`)
	wantJSON(t, "json", body, `{"doubled": [2, 4, 6], "name": "m0"}`)

	data := make([]byte, 1<<20)
	rand.Read(data)
	sum := sha256.Sum256(data)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("note", "one mebibyte")
	fw, _ := mw.CreateFormFile("file", "blob.bin")
	fw.Write(data)
	mw.Close()
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Post(s.url("/upload"), mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	body = string(readBody(t, resp))
	wantJSON(t, "upload", body, `{"filename": "blob.bin", "size": 1048576, "sha256": "`+hex.EncodeToString(sum[:])+`", "note": "one mebibyte"}`)
	wantLines(t, s.url("/stream"), 50)

	c := wsDial(t, "ws://"+s.addr+"/ws")
	for _, m := range []string{"one", "twö", strings.Repeat("q", 100000)} {
		if k, got := wsRoundTrip(t, c, websocket.TextMessage, m); k != websocket.TextMessage || got != "echo "+m {
			t.Fatalf("echo: %d %.40q", k, got)
		}
	}
	wsWantClose(t, c, "bye", 4004)
	checkNoTraceback(t, s.server)
}

// TestFalcon serves one Falcon 4 app as WSGI and its twin as ASGI
// (tests/apps/falcon_app.py, from tests/.venv): media in and out,
// Falcon's 400 for a body that is not JSON and 404 for no route, a
// streamed response, and on ASGI a WebSocket.
func TestFalcon(t *testing.T) {
	for _, target := range []string{"falcon_app:wsgi_app", "falcon_app:asgi_app"} {
		t.Run(target, func(t *testing.T) {
			s := startASGI(t, wsgiVariant(), target, withVenv(t)...)
			_, body := get(t, s.url("/things/caf%C3%A9?q=1"))
			wantJSON(t, "GET", body, `{"name": "café", "q": "1"}`)
			resp, body := postJSONBody(t, s.url("/things/box"), `{"items": [1, 2, 3]}`)
			if resp.StatusCode != 201 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("POST: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			wantJSON(t, "POST", body, `{"name": "box", "count": 3}`)
			if resp, body := postJSONBody(t, s.url("/things/box"), `{"items": [`); resp.StatusCode != 400 || !strings.Contains(body, "Invalid JSON") {
				t.Errorf("POST with broken JSON: %d %s, want Falcon's 400", resp.StatusCode, body)
			}
			if resp, _ := get(t, s.url("/nowhere")); resp.StatusCode != 404 {
				t.Errorf("GET /nowhere: %d", resp.StatusCode)
			}
			wantLines(t, s.url("/stream"), 50)
			if strings.HasSuffix(target, "asgi_app") {
				c := wsDial(t, "ws://"+s.addr+"/things/sock")
				if k, got := wsRoundTrip(t, c, websocket.TextMessage, "hi"); k != websocket.TextMessage || got != "sock echo hi" {
					t.Fatalf("WebSocket: %d %q", k, got)
				}
				wsWantClose(t, c, "bye", 4005)
			}
			checkNoTraceback(t, s.server)
		})
	}
}
