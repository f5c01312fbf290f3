//go:build linux

package tests

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// postJSONBody posts body as application/json and returns the response with
// its body read.
func postJSONBody(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(readBody(t, resp))
}

// wantJSON fails the test unless body decodes to the same value as want.
func wantJSON(t *testing.T, what, body, want string) {
	t.Helper()
	var got, expected any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%s: %v: %q", what, err, body)
	}
	if err := json.Unmarshal([]byte(want), &expected); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(expected)
	if string(g) != string(w) {
		t.Fatalf("%s: %s, want %s", what, g, w)
	}
}

// wantLines fails the test unless a streamed body is "line 0\n" up to
// "line n-1\n", sent chunked (its length unknown when it started).
func wantLines(t *testing.T, url string, n int) {
	t.Helper()
	resp, body := get(t, url)
	var want strings.Builder
	for i := range n {
		want.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if resp.StatusCode != 200 || body != want.String() || len(resp.TransferEncoding) != 1 {
		t.Fatalf("GET %s: %d %v, %d bytes: %.80q", url, resp.StatusCode, resp.TransferEncoding, len(body), body)
	}
}

// wsDial opens a WebSocket with gorilla/websocket and closes it with the
// test.
func wsDial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 20 * time.Second}
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", url, err, status)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	return c
}

// wsRoundTrip sends a message of kind and returns the next one.
func wsRoundTrip(t *testing.T, c *websocket.Conn, kind int, send string) (int, string) {
	t.Helper()
	if err := c.WriteMessage(kind, []byte(send)); err != nil {
		t.Fatal(err)
	}
	k, p, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("after sending %.40q: %v", send, err)
	}
	return k, string(p)
}

// wsWantClose sends send and expects the server's Close with code.
func wsWantClose(t *testing.T, c *websocket.Conn, send string, code int) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(send)); err != nil {
		t.Fatal(err)
	}
	_, p, err := c.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != code {
		t.Fatalf("after %q: %v (message %q), want close %d", send, err, p, code)
	}
}
