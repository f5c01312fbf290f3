//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"context"
	binaryorder "encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"
)

// TestWebSocket runs WebSocket clients nobody here wrote (coder/websocket,
// gorilla/websocket, websockets from tests/.venv) and a raw one against
// --native ws-echo on io_uring and epoll.
func TestWebSocket(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		echo := start(t, v, "--native", "ws-echo", "--ws-max-size", "1M")
		wsURL := "ws://" + echo.addr + "/echo"
		t.Run("coder messages", func(t *testing.T) { testCoderMessages(t, wsURL) })
		t.Run("gorilla fragments, ping, close codes", func(t *testing.T) { testGorilla(t, wsURL) })
		t.Run("gorilla deflate", func(t *testing.T) { testGorillaDeflate(t, wsURL) })
		t.Run("deflate on the wire", func(t *testing.T) { testDeflateOnTheWire(t, echo.addr) })
		t.Run("unsolicited pong ignored", func(t *testing.T) { testUnsolicitedPong(t, echo.addr) })
		t.Run("1009", func(t *testing.T) { testTooBig(t, wsURL) })
		t.Run("plain HTTP and refusals", func(t *testing.T) { testPlainAndRefused(t, echo) })
		t.Run("python websockets", func(t *testing.T) { testPythonWebsockets(t, wsURL) })

		pinging := start(t, v, "--native", "ws-echo", "--ws-ping-interval", "1s", "--ws-ping-timeout", "1s")
		t.Run("unanswered pings close 1011", func(t *testing.T) { testPingTimeout(t, pinging.addr) })
		t.Run("answered pings keep it open", func(t *testing.T) { testPingsAnswered(t, "ws://"+pinging.addr+"/") })
	})
}

func wsContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// testCoderMessages: ws-echo selects the first subprotocol offered; text,
// binary and a 200 KB message round trip, and a close with 4001 is
// answered with 4001.
func testCoderMessages(t *testing.T, url string) {
	ctx := wsContext(t)
	c, _, err := coder.Dial(ctx, url, &coder.DialOptions{Subprotocols: []string{"chat.v2", "chat.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Subprotocol(); p != "chat.v2" {
		t.Fatalf("subprotocol %q, want the first offered, chat.v2", p)
	}
	c.SetReadLimit(1 << 20)
	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16)
	for _, m := range []struct {
		typ  coder.MessageType
		data []byte
	}{{coder.MessageText, []byte("hello")}, {coder.MessageBinary, []byte{0, 1, 2, 255}}, {coder.MessageBinary, big}, {coder.MessageText, nil}} {
		if err := c.Write(ctx, m.typ, m.data); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.Read(ctx)
		if err != nil || typ != m.typ || !bytes.Equal(got, m.data) {
			t.Fatalf("echo of %d bytes: %v, %d bytes, %v", len(m.data), typ, len(got), err)
		}
	}
	// coder's Close returns nil only when the server's Close echoes the code.
	if err := c.Close(4001, "done"); err != nil {
		t.Fatalf("close 4001: %v", err)
	}
}

// testGorilla: a message sent in fragments comes back whole, a ping gets
// its pong, and close codes come back: 1000, and 1005 for a Close
// without a code.
func testGorilla(t *testing.T, url string) {
	// A small write buffer: gorilla sends a frame each time it fills, so
	// the 10 KB message below goes out as ten or more fragments.
	d := websocket.Dialer{WriteBufferSize: 1024, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	w, err := c.NextWriter(websocket.TextMessage)
	if err != nil {
		t.Fatal(err)
	}
	var message strings.Builder
	for i := range 10 {
		part := strings.Repeat(string(rune('a'+i)), 1000)
		message.WriteString(part)
		w.Write([]byte(part))
	}
	w.Close()
	pong := make(chan string, 1)
	c.SetPongHandler(func(data string) error { pong <- data; return nil })
	if err := c.WriteControl(websocket.PingMessage, []byte("ping?"), time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	typ, got, err := c.ReadMessage()
	if err != nil || typ != websocket.TextMessage || string(got) != message.String() {
		t.Fatalf("fragmented echo: type %d, %d bytes, %v", typ, len(got), err)
	}
	// The pong arrives while reading; the echo below makes gorilla read on.
	c.WriteMessage(websocket.TextMessage, []byte("after ping"))
	if _, got, err := c.ReadMessage(); err != nil || string(got) != "after ping" {
		t.Fatalf("echo: %q %v", got, err)
	}
	select {
	case data := <-pong:
		if data != "ping?" {
			t.Fatalf("pong %q, want ping?", data)
		}
	default:
		t.Fatal("no pong for the client's ping")
	}

	for _, code := range []int{websocket.CloseNormalClosure, websocket.CloseNoStatusReceived} {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		payload := websocket.FormatCloseMessage(code, "")
		if code == websocket.CloseNoStatusReceived {
			payload = nil
		}
		if err := c.WriteMessage(websocket.CloseMessage, payload); err != nil {
			t.Fatal(err)
		}
		_, _, err = c.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != code {
			t.Fatalf("close %d: got %v", code, err)
		}
		c.Close()
	}
}

// testGorillaDeflate: gorilla negotiates permessage-deflate (it only does
// no context takeover, which the server imposes) and messages round trip.
func testGorillaDeflate(t *testing.T, url string) {
	d := websocket.Dialer{EnableCompression: true, HandshakeTimeout: 10 * time.Second}
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.HasPrefix(ext, "permessage-deflate") {
		t.Fatalf("extensions %q: deflate not negotiated", ext)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for _, msg := range []string{"short", strings.Repeat("compressible text ", 5000)} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.ReadMessage(); err != nil || string(got) != msg {
			t.Fatalf("deflate echo of %d bytes: %d bytes, %v", len(msg), len(got), err)
		}
	}
}

// testTooBig: a message over --ws-max-size closes the connection with 1009.
func testTooBig(t *testing.T, url string) {
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	c.WriteMessage(websocket.BinaryMessage, make([]byte, 1<<20+1))
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("over the limit: %v, want close 1009", err)
	}
}

// testPlainAndRefused: ws-echo answers plain requests with hello, and an
// upgrade with another version gets 426.
func testPlainAndRefused(t *testing.T, s *server) {
	resp, body := get(t, s.url("/"))
	if resp.StatusCode != 200 || body != "Hello, World!" {
		t.Fatalf("plain GET: %d %q", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", s.url("/"), nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Version", "8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 426 || resp.Header.Get("Sec-WebSocket-Version") != "13" {
		t.Fatalf("version 8: %d, Sec-WebSocket-Version %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Version"))
	}
}

func testPythonWebsockets(t *testing.T, url string) {
	runClientScript(t, venvPython(t), "ws_client.py", url,
		"deflate-negotiated", "deflate-echo", "fragmented", "binary", "ping", "close-4001", "too-big")
}

// runClientScript runs interpreter on tools/script against url and checks
// that the script printed "<check> ok" for each of checks, in order, and
// nothing else.
func runClientScript(t *testing.T, interpreter, script, url string, checks ...string) {
	t.Helper()
	ctx := wsContext(t)
	out, err := exec.CommandContext(ctx, interpreter, filepath.Join("tools", script), url).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(checks) {
		t.Fatalf("%s printed:\n%s", script, out)
	}
	for i, name := range checks {
		if lines[i] != name+" ok" {
			t.Errorf("%s: %s", name, lines[i])
		}
	}
}

// rawClient is a client of our own for what the libraries will not do:
// look at RSV1, or never answer a ping.
type rawClient struct {
	conn net.Conn
	br   *bufio.Reader
}

func rawDial(t *testing.T, addr, extra string) *rawClient {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+extra+"\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return &rawClient{c, br}
}

// send writes a masked frame.
func (r *rawClient) send(op byte, payload []byte) { r.sendErr(op, payload) }

func (r *rawClient) sendErr(op byte, payload []byte) error {
	frame := []byte{0x80 | op}
	if len(payload) <= 125 {
		frame = append(frame, 0x80|byte(len(payload)))
	} else {
		frame = append(frame, 0x80|126, byte(len(payload)>>8), byte(len(payload)))
	}
	key := []byte{7, 13, 31, 61}
	frame = append(frame, key...)
	for i, b := range payload {
		frame = append(frame, b^key[i%4])
	}
	_, err := r.conn.Write(frame)
	return err
}

// read returns the next frame's first byte and payload.
func (r *rawClient) read() (b0 byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		_, err = io.ReadFull(r.br, ext[:])
		n = uint64(binaryorder.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		_, err = io.ReadFull(r.br, ext[:])
		n = binaryorder.BigEndian.Uint64(ext[:])
	}
	if err != nil {
		return 0, nil, err
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(r.br, payload)
	return h[0], payload, err
}

// testDeflateOnTheWire: a large compressible echo comes back compressed
// (RSV1, fewer bytes), a small one plain.
func testDeflateOnTheWire(t *testing.T, addr string) {
	r := rawDial(t, addr, "Sec-WebSocket-Extensions: permessage-deflate\r\n")
	big := bytes.Repeat([]byte("squeeze "), 1000)
	r.send(0x2, big)
	b0, payload, err := r.read()
	if err != nil || b0 != 0x80|0x40|0x2 || len(payload) >= len(big) {
		t.Fatalf("echo of %d compressible bytes: first byte %#x, %d bytes, %v; want RSV1 and fewer bytes", len(big), b0, len(payload), err)
	}
	r.send(0x1, []byte("tiny"))
	if b0, payload, err := r.read(); err != nil || b0 != 0x81 || string(payload) != "tiny" {
		t.Fatalf("small echo: %#x %q %v, want it uncompressed", b0, payload, err)
	}
}

// testPingTimeout: a client that never answers pings gets a ping, then a
// Close with 1011, then the connection ends.
func testPingTimeout(t *testing.T, addr string) {
	r := rawDial(t, addr, "")
	sawPing := false
	for {
		b0, payload, err := r.read()
		if err != nil {
			t.Fatalf("before a close: %v (ping seen: %v)", err, sawPing)
		}
		switch b0 & 0x0f {
		case 0x9:
			sawPing = true
			continue
		case 0x8:
			if !sawPing || len(payload) < 2 || binaryorder.BigEndian.Uint16(payload) != 1011 {
				t.Fatalf("close %x after ping %v; want 1011 after a ping", payload, sawPing)
			}
		default:
			t.Fatalf("unexpected frame %#x", b0)
		}
		break
	}
	// The close handshake times out and the server closes the socket.
	if _, _, err := r.read(); err == nil {
		t.Fatal("a frame after the close")
	}
}

// testPingsAnswered: a client that answers pings (coder/websocket does,
// while it reads) stays connected past several ping timeouts.
func testPingsAnswered(t *testing.T, url string) {
	ctx := wsContext(t)
	c, _, err := coder.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// Read in the background so pings are answered; hold on 3.5 s (three
	// ping intervals with a 1 s timeout each) before writing.
	got := make(chan string, 1)
	go func() {
		_, data, err := c.Read(ctx)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(data)
	}()
	time.Sleep(3500 * time.Millisecond)
	if err := c.Write(ctx, coder.MessageText, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "still here" {
		t.Fatalf("after answered pings: %s", s)
	}
}

// TestWebSocketFlagMistakes: each --ws flag mistake is one line naming the
// flag, exit 2; and M0_WS_* reach the flags.
func TestWebSocketFlagMistakes(t *testing.T) {
	cases := []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--ws", "wsproto"}, nil, `--ws: "wsproto": want auto or none`},
		{[]string{"--ws-max-size", "0"}, nil, "--ws-max-size: must be at least 1 byte"},
		{[]string{"--ws-max-queue", "0"}, nil, "--ws-max-queue: must be at least 1"},
		{[]string{"--ws-ping-interval", "-1s"}, nil, "--ws-ping-interval: must not be negative"},
		{nil, []string{"M0_WS_PING_TIMEOUT=0"}, "--ws-ping-timeout: must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			args := append([]string{"--port", "0", "--native", "ws-echo"}, tc.args...)
			status, out := runToExit(t, append(cleanEnv(), tc.env...), args...)
			if status != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("status %d, output %q; want 2 and one line with %q", status, out, tc.want)
			}
		})
	}
}

// TestWebSocketNone: with --ws none an upgrade request is a plain request.
func TestWebSocketNone(t *testing.T) {
	s := start(t, variants[1], "--native", "ws-echo", "--ws", "none")
	_, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/", nil)
	if !errors.Is(err, websocket.ErrBadHandshake) {
		t.Fatalf("dial with --ws none: %v, want a refused handshake", err)
	}
}

// TestWebSocketClientNotReading: a client that sends and never reads its
// echoes stops being read once the server's output backs up, so its own
// writes stall instead of the server's memory growing.
func TestWebSocketClientNotReading(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "ws-echo", "--ws-per-message-deflate=false")
		r := rawDial(t, s.addr, "")
		before := processRSS(t, s.cmd.Process.Pid)
		message := bytes.Repeat([]byte{'x'}, 60<<10)
		sent := 0
		// 256 MB if nothing pushed back; the kernel's socket buffers hold a
		// few MB each way, so the writes stall long before.
		r.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		for sent < 256<<20 {
			if err := r.sendErr(0x2, message); err != nil {
				break
			}
			sent += len(message)
		}
		if sent >= 256<<20 {
			t.Fatal("the server read 256 MB from a client that never read its echoes")
		}
		if grown := processRSS(t, s.cmd.Process.Pid) - before; grown > 64<<20 {
			t.Fatalf("server RSS grew %d MB for one stalled client", grown>>20)
		}
		t.Logf("writes stalled after %d MB", sent>>20)
	})
}

// TestWebSocketShutdown: SIGTERM closes open WebSockets with 1001 (going
// away); the server exits once the clients have answered.
func TestWebSocketShutdown(t *testing.T) {
	s := start(t, variants[0], "--native", "ws-echo")
	c, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/", nil)
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
}

// testUnsolicitedPong: a pong nobody asked for is a heartbeat (RFC 6455
// §5.5.3), not an error: the connection goes on.
func testUnsolicitedPong(t *testing.T, addr string) {
	r := rawDial(t, addr, "")
	r.send(0xA, []byte("heartbeat"))
	r.send(0x1, []byte("after pong"))
	if b0, payload, err := r.read(); err != nil || b0 != 0x81 || string(payload) != "after pong" {
		t.Fatalf("after an unsolicited pong: %#x %q %v, want the echo", b0, payload, err)
	}
}
