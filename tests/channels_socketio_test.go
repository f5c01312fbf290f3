//go:build linux

package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestDjangoChannels serves the Django project through Django Channels'
// ProtocolTypeRouter (djsite.channels_asgi, from tests/.venv): the admin's
// login page over HTTP, a synchronous consumer (run on asgiref's thread
// executor) echoing text and binary and closing with its own code, and an
// asynchronous room consumer broadcasting to every socket of its group
// through the in-memory channel layer.
func TestDjangoChannels(t *testing.T) {
	project := filepath.Join(appsDir(t), "django_project")
	dbEnv := "DJSITE_DB=" + filepath.Join(t.TempDir(), "db.sqlite3")
	s := start(t, wsgiVariant(dbEnv), withVenv(t, "--app-dir", project, "djsite.channels_asgi:application")...)
	if resp, body := get(t, s.url("/admin/login/")); resp.StatusCode != 200 || !strings.Contains(body, "Django administration") {
		t.Fatalf("login page over channels' HTTP route: %d\n%.300s", resp.StatusCode, body)
	}
	base := "ws://" + s.addr

	echo := wsDial(t, base+"/ws/echo/ada/")
	if k, got := wsRoundTrip(t, echo, websocket.TextMessage, "héllo"); k != websocket.TextMessage || got != "echo héllo as ada" {
		t.Fatalf("sync consumer, text: %d %q", k, got)
	}
	if k, got := wsRoundTrip(t, echo, websocket.BinaryMessage, "\x01\x02\x03"); k != websocket.BinaryMessage || got != "\x03\x02\x01" {
		t.Fatalf("sync consumer, binary: %d %q", k, got)
	}
	wsWantClose(t, echo, "close", 4006)

	var room []*websocket.Conn
	for range 3 {
		room = append(room, wsDial(t, base+"/ws/room/lobby/"))
	}
	other := wsDial(t, base+"/ws/room/elsewhere/")
	if err := room[0].WriteJSON(map[string]string{"text": "hi lobby"}); err != nil {
		t.Fatal(err)
	}
	for i, c := range room {
		_, p, err := c.ReadMessage()
		var got struct{ Text string }
		if err != nil || json.Unmarshal(p, &got) != nil || got.Text != "hi lobby" {
			t.Fatalf("room member %d: %q, %v", i, p, err)
		}
	}
	// The other room hears nothing of the lobby: its own message is the
	// first it gets.
	if err := other.WriteJSON(map[string]string{"text": "hi elsewhere"}); err != nil {
		t.Fatal(err)
	}
	if _, p, err := other.ReadMessage(); err != nil || !strings.Contains(string(p), "hi elsewhere") {
		t.Fatalf("other room: %q, %v", p, err)
	}
	if resp, _ := get(t, s.url("/ws/nowhere/")); resp.StatusCode != 404 {
		t.Errorf("plain GET of an unrouted path: %d, want Django's 404", resp.StatusCode)
	}
	checkNoTraceback(t, s)
}

// TestSocketIO serves python-socketio's ASGI app (tests/apps/socketio_app.py)
// to python-socketio's own client (tests/tools/socketio_client.py, from
// tests/.venv): connections straight over WebSocket and one that starts
// on HTTP long-polling and upgrades, acknowledgements, rooms and a
// broadcast.
func TestSocketIO(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "socketio_app:app", withVenv(t)...)
	runClientScript(t, venvPython(t), "socketio_client.py", s.url("/"),
		"websocket-transport", "ack", "ack-200KB", "polling-upgrade", "join", "broadcast", "disconnect")
	checkNoTraceback(t, s.server)
}
