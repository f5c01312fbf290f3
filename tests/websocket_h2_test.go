//go:build linux

package tests

import (
	bin "encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// WebSockets over HTTP/2 (RFC 8441): Go's x/net/http2 framer doing an
// extended CONNECT over h2c to an ASGI echo app, and headless Chromium,
// which uses RFC 8441 over TLS once the page's h2 connection offers it.

// h2WSFrame is a masked WebSocket frame as a client sends it.
func h2WSFrame(op byte, payload string) []byte {
	out := []byte{0x80 | op}
	switch n := len(payload); {
	case n <= 125:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = append(out, 0x80|126, byte(n>>8), byte(n))
	default:
		out = append(out, 0x80|127)
		out = bin.BigEndian.AppendUint64(out, uint64(n))
	}
	key := [4]byte{9, 8, 7, 6}
	out = append(out, key[:]...)
	for i := 0; i < len(payload); i++ {
		out = append(out, payload[i]^key[i%4])
	}
	return out
}

// h2WSReader reads one HTTP/2 connection's frames: the fields of each
// stream's HEADERS, the WebSocket frames in stream 1's DATA, and which
// streams ended.
type h2WSReader struct {
	t      *testing.T
	c      *h2Conn
	fields map[uint32]map[string]string
	bodies map[uint32][]byte
	ended  map[uint32]bool
	// settings is the server's SETTINGS, by id.
	settings map[xhttp2.SettingID]uint32
}

func newH2WSReader(t *testing.T, c *h2Conn) *h2WSReader {
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	return &h2WSReader{t: t, c: c, fields: map[uint32]map[string]string{}, bodies: map[uint32][]byte{},
		ended: map[uint32]bool{}, settings: map[xhttp2.SettingID]uint32{}}
}

// until reads frames until cond holds.
func (r *h2WSReader) until(what string, cond func() bool) {
	r.t.Helper()
	for !cond() {
		f, err := r.c.fr.ReadFrame()
		if err != nil {
			r.t.Fatalf("waiting for %s: %v", what, err)
		}
		switch f := f.(type) {
		case *xhttp2.SettingsFrame:
			if !f.IsAck() {
				f.ForeachSetting(func(s xhttp2.Setting) error { r.settings[s.ID] = s.Val; return nil })
				r.c.fr.WriteSettingsAck()
			}
		case *xhttp2.MetaHeadersFrame:
			m := map[string]string{}
			for _, h := range f.Fields {
				m[h.Name] = h.Value
			}
			r.fields[f.StreamID] = m
			r.ended[f.StreamID] = r.ended[f.StreamID] || f.StreamEnded()
		case *xhttp2.DataFrame:
			r.bodies[f.StreamID] = append(r.bodies[f.StreamID], f.Data()...)
			r.ended[f.StreamID] = r.ended[f.StreamID] || f.StreamEnded()
		case *xhttp2.RSTStreamFrame:
			r.t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
		case *xhttp2.GoAwayFrame:
			r.t.Fatalf("GOAWAY %v %q", f.ErrCode, f.DebugData())
		}
	}
}

// message reads the next WebSocket frame the server sent on stream id
// (unmasked, short or 16-bit length: what these tests send back).
func (r *h2WSReader) message(id uint32) (op byte, payload string) {
	r.t.Helper()
	var n, at int
	r.until("a WebSocket frame", func() bool {
		b := r.bodies[id]
		if len(b) < 2 {
			return false
		}
		n, at = int(b[1]&0x7f), 2
		if n == 126 {
			if len(b) < 4 {
				return false
			}
			n, at = int(bin.BigEndian.Uint16(b[2:4])), 4
		}
		return len(b) >= at+n
	})
	b := r.bodies[id]
	op, payload = b[0]&0x0f, string(b[at:at+n])
	r.bodies[id] = b[at+n:]
	return op, payload
}

// TestWebSocketHTTP2Client: an extended CONNECT over h2c reaches the ASGI
// app as a websocket scope with http_version "2"; the accept is a 200
// with the subprotocol and no Sec-WebSocket-Accept; messages go both ways
// in DATA frames while a plain request on the same connection is served;
// the close handshake ends the stream and the connection serves on.
// The native ws-echo handler (which accepts inline, on the loop thread)
// gets the same.
func TestWebSocketHTTP2Client(t *testing.T) {
	t.Run("asgi", func(t *testing.T) {
		testH2WebSocketClient(t, startH2(t, variants[0], false, "asgi_ws_echo_app:app"), "2 ws /chat", "echo")
	})
	t.Run("native", func(t *testing.T) {
		testH2WebSocketClient(t, startH2(t, variants[0], false, "--native", "ws-echo"), "scope?", "")
	})
	t.Run("wsgi", func(t *testing.T) {
		// A WSGI app cannot serve a WebSocket: it answers the handshake as
		// the GET it gets over HTTP/1.1, and the stream ends there.
		s := startH2(t, wsgiVariant(), false, "h2_app:application")
		c := dialH2(t, s)
		r := newH2WSReader(t, c)
		writeWSConnect(t, c, 1, s.addr)
		r.until("the answer", func() bool { return r.ended[1] })
		var reply h2Reply
		if err := json.Unmarshal(r.bodies[1], &reply); err != nil || r.fields[1][":status"] != "200" ||
			reply.Protocol != "HTTP/2" || reply.Method != "GET" || reply.Path != "/chat" {
			t.Fatalf("WSGI's answer: %v %q (%v)", r.fields[1], r.bodies[1], err)
		}
		c.Close()
		s.stop()
	})
}

// writeWSConnect sends an extended CONNECT for /chat on stream id.
func writeWSConnect(t *testing.T, c *h2Conn, id uint32, authority string) {
	t.Helper()
	c.buf.Reset()
	for _, f := range [][2]string{{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "http"},
		{":path", "/chat"}, {":authority", authority}, {"sec-websocket-version", "13"},
		{"sec-websocket-protocol", "chat.v1, chat.v2"}, {"origin", "http://" + authority}} {
		c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
}

// testH2WebSocketClient: scope is the answer to "scope?", plain the
// body of a plain GET ("" for any).
func testH2WebSocketClient(t *testing.T, s *h2Server, scope, plain string) {
	c := dialH2(t, s)
	r := newH2WSReader(t, c)
	r.until("SETTINGS", func() bool { return len(r.settings) > 0 })
	if r.settings[xhttp2.SettingEnableConnectProtocol] != 1 {
		t.Fatalf("SETTINGS_ENABLE_CONNECT_PROTOCOL not offered: %v", r.settings)
	}
	writeWSConnect(t, c, 1, s.addr)
	r.until("the accept", func() bool { return r.fields[1] != nil })
	if f := r.fields[1]; f[":status"] != "200" || f["sec-websocket-protocol"] != "chat.v1" || f["sec-websocket-accept"] != "" || r.ended[1] {
		t.Fatalf("accept: %v (ended %v)", f, r.ended[1])
	}
	c.fr.WriteData(1, false, append(h2WSFrame(0x1, "scope?"), h2WSFrame(0x2, "\x00\x01\xff")...))
	if op, m := r.message(1); op != 0x1 || m != scope {
		t.Fatalf("scope: op %d %q", op, m)
	}
	if op, m := r.message(1); op != 0x2 || m != "\x00\x01\xff" {
		t.Fatalf("binary: op %d %q", op, m)
	}
	// A plain request beside the open WebSocket.
	if err := c.request(3, s.addr, "/plain"); err != nil {
		t.Fatal(err)
	}
	r.until("stream 3", func() bool { return r.ended[3] })
	if r.fields[3][":status"] != "200" || plain != "" && string(r.bodies[3]) != plain {
		t.Fatalf("stream 3: %v %q", r.fields[3], r.bodies[3])
	}
	big := strings.Repeat("y", 60000)
	// In DATA frames of the default 16 KiB at most (RFC 9113 §4.2), one
	// WebSocket frame across four of them.
	for rest := h2WSFrame(0x1, big); len(rest) > 0; {
		n := min(len(rest), 16384)
		c.fr.WriteData(1, false, rest[:n])
		rest = rest[n:]
	}
	if _, m := r.message(1); m != big {
		t.Fatalf("60 kB message came back as %d bytes", len(m))
	}
	c.fr.WriteData(1, false, h2WSFrame(0x8, "\x03\xe8bye"))
	if op, m := r.message(1); op != 0x8 || m[:2] != "\x03\xe8" {
		t.Fatalf("close: op %d %q", op, m)
	}
	r.until("END_STREAM", func() bool { return r.ended[1] })
	c.fr.WriteData(1, true, nil)
	if err := c.request(5, s.addr, "/after"); err != nil {
		t.Fatal(err)
	}
	r.until("stream 5", func() bool { return r.ended[5] })
	if r.fields[5][":status"] != "200" {
		t.Fatalf("stream 5 after the WebSocket: %v", r.fields[5])
	}
	c.Close()
	s.stop()
}

// h2BrowserPage opens a WebSocket to its own origin, which the page's h2
// connection serves: Chromium takes RFC 8441 when that connection's
// SETTINGS offer it. The app says which HTTP version carried it.
const h2BrowserPage = `<html><body><script>
const report = (line) => console.log("WS " + line);
const ws = new WebSocket("wss://" + location.host + "/chat", ["chat.v1"]);
ws.binaryType = "arraybuffer";
let step = 0;
ws.onopen = () => {
	report("open protocol=" + ws.protocol + " extensions=" + ws.extensions);
	ws.send("scope?");
};
ws.onmessage = (e) => {
	step++;
	if (step == 1) {
		report("scope " + e.data);
		ws.send(new Uint8Array([0, 1, 255]));
	} else if (step == 2) {
		report("binary " + Array.from(new Uint8Array(e.data)).join(","));
		ws.send("x".repeat(200000));
	} else if (step == 3) {
		report("big " + (e.data === "x".repeat(200000)));
		ws.close(4001, "bye");
	}
};
ws.onclose = (e) => {
	report("close " + e.code + " clean=" + e.wasClean);
	fetch("/again").then(r => r.text()).then(t => {
		report("fetch " + t + " " + performance.getEntriesByType("resource")[0].nextHopProtocol);
		report("DONE");
	});
};
</script></body></html>`

// TestWebSocketHTTP2Browser: headless Chromium loads a page over h2 (TLS,
// ALPN) from the ASGI echo app and opens a WebSocket to the same origin:
// it goes over that connection by RFC 8441 (the app sees http_version
// "2"), with permessage-deflate, and echoes text, binary and a 200 KB
// message before a clean close.
func TestWebSocketHTTP2Browser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	requireCommand(t, chromium)
	v := variants[0]
	dir := t.TempDir()
	v.env = append(append([]string{}, v.env...), "E2E_DIR="+dir)
	if err := os.WriteFile(filepath.Join(dir, "echo.html"), []byte(h2BrowserPage), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startH2(t, v, true, "asgi_ws_echo_app:app")
	got := runBrowser(t, chromium, s.url("/echo.html"), s.ca.File)
	want := []string{
		"open protocol=chat.v1 extensions=permessage-deflate; server_no_context_takeover; client_no_context_takeover",
		"scope 2 wss /chat",
		"binary 0,1,255",
		"big true",
		"close 4001 clean=true",
		"fetch echo h2",
		"DONE",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the browser reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s.stop()
}
