package http2

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

func TestRequestAndResponse(t *testing.T) {
	p := newPeer(t, Config{})
	p.app.respond = reply
	p.start()
	p.get(1, "/hello?x=1", true, "user-agent", "test")
	p.feed()
	if len(p.app.requests) != 1 {
		t.Fatalf("%d requests, want 1", len(p.app.requests))
	}
	r := p.app.requests[0].Request
	if r.Method != "GET" || r.Path != "/hello?x=1" || r.Authority != "example.com" || r.Scheme != "https" ||
		len(r.Fields) != 1 || r.Fields[0].Name != "user-agent" || r.ContentLength != -1 {
		t.Fatalf("request %+v", r)
	}
	h := p.expect(http2.FrameHeaders).(*http2.MetaHeadersFrame)
	if h.PseudoValue("status") != "200" || h.StreamEnded() {
		t.Fatalf("response head %v", h.Fields)
	}
	for _, f := range h.RegularFields() {
		if f.Name != strings.ToLower(f.Name) {
			t.Fatalf("field name %q sent in upper case", f.Name)
		}
	}
	d := p.expect(http2.FrameData).(*http2.DataFrame)
	if string(d.Data()) != "hello" || !d.StreamEnded() {
		t.Fatalf("body %q, ended %v", d.Data(), d.StreamEnded())
	}
	if !p.conn.Idle() {
		t.Fatal("a finished stream is still counted")
	}
}

func TestPreface(t *testing.T) {
	t.Run("in pieces", func(t *testing.T) {
		p := newPeer(t, Config{})
		for i := range Preface {
			if n, err := p.conn.Feed([]byte(Preface[:i])); n != 0 || err != nil {
				t.Fatalf("partial preface: %d, %v", n, err)
			}
		}
	})
	t.Run("wrong", func(t *testing.T) {
		p := newPeer(t, Config{})
		p.in.WriteString("GET / HTTP/1.1\r\n\r\n")
		p.feed()
		p.expect(http2.FrameSettings)
		p.goAway(http2.ErrCodeProtocol)
	})
	t.Run("first frame not SETTINGS", func(t *testing.T) {
		p := newPeer(t, Config{})
		p.in.WriteString(Preface)
		p.must(p.framer.WritePing(false, [8]byte{}))
		p.feed()
		p.goAway(http2.ErrCodeProtocol)
	})
}

func TestRequestBody(t *testing.T) {
	p := newPeer(t, Config{})
	p.app.consume = true
	p.start()
	p.headers(1, false, ":method", "POST", ":scheme", "http", ":path", "/up", "content-length", "10")
	p.must(p.framer.WriteData(1, false, []byte("01234")))
	p.must(p.framer.WriteDataPadded(1, true, []byte("56789"), make([]byte, 7)))
	p.feed()
	if got := string(p.app.bodies[1]); got != "0123456789" || !p.app.ended[1] {
		t.Fatalf("body %q, ended %v", got, p.app.ended[1])
	}
	// Wrong length: 5 bytes against 10.
	p.headers(3, false, ":method", "POST", ":scheme", "http", ":path", "/up", "content-length", "10")
	p.must(p.framer.WriteData(3, true, []byte("01234")))
	p.feed()
	p.rst(3, http2.ErrCodeProtocol)
	if _, ok := p.app.resets[3]; !ok {
		t.Fatal("handler not told of the reset")
	}
}

func TestTrailers(t *testing.T) {
	p := newPeer(t, Config{})
	p.start()
	p.headers(1, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.must(p.framer.WriteData(1, false, []byte("x")))
	p.headers(1, true, "checksum", "abc")
	p.feed()
	if !p.app.ended[1] {
		t.Fatal("trailers did not end the body")
	}
	p.headers(3, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.headers(3, true, ":path", "/again")
	p.feed()
	p.rst(3, http2.ErrCodeProtocol)
}

// TestMalformed holds each rule of §8.2 and §8.3.1 both ways: the
// request that breaks it is reset, its twin that keeps it is served.
func TestMalformed(t *testing.T) {
	base := []string{":method", "GET", ":scheme", "https", ":path", "/"}
	for _, tc := range []struct {
		name      string
		bad, good []string
	}{
		{"upper-case name", append(base, "X-Up", "1"), append(base, "x-up", "1")},
		{"connection field", append(base, "connection", "close"), append(base, "x-connection", "close")},
		{"te other than trailers", append(base, "te", "gzip"), append(base, "te", "trailers")},
		{"pseudo after regular", []string{":method", "GET", ":scheme", "https", "a", "b", ":path", "/"},
			[]string{":method", "GET", ":scheme", "https", ":path", "/", "a", "b"}},
		{"missing :path", []string{":method", "GET", ":scheme", "https"}, base},
		{"repeated :method", append(base, ":method", "GET"), base},
		{"unknown pseudo", append([]string{":foo", "x"}, base...), base},
		{"path not absolute", []string{":method", "GET", ":scheme", "https", ":path", "x"},
			[]string{":method", "OPTIONS", ":scheme", "https", ":path", "*"}},
		{"CR in value", append(base, "x", "a\rb"), append(base, "x", "a b")},
		{"space around value", append(base, "x", " a"), append(base, "x", "a")},
		{":protocol not enabled", []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/", ":authority", "a"},
			[]string{":method", "CONNECT", ":authority", "a:443"}},
		{"two content-lengths", append(base, "content-length", "0", "content-length", "1"),
			append(base, "content-length", "0", "content-length", "0")},
		// Issue 37: pseudo-headers' values by their grammar, so that no
		// layer above can read one as more than it is.
		{"CR LF in :path", []string{":method", "GET", ":scheme", "https", ":path", "/ HTTP/1.1\r\nx-injected: yes"},
			[]string{":method", "GET", ":scheme", "https", ":path", "/a%20b?c=d"}},
		{"space in :path", []string{":method", "GET", ":scheme", "https", ":path", "/a b"}, base},
		{"fragment in :path", []string{":method", "GET", ":scheme", "https", ":path", "/a#b"}, base},
		{"obs-text in :path", []string{":method", "GET", ":scheme", "https", ":path", "/\xff"}, base},
		{"CR LF in :method", []string{":method", "GET / HTTP/1.1\r\nx: y", ":scheme", "https", ":path", "/"},
			[]string{":method", "PURGE", ":scheme", "https", ":path", "/"}},
		{"CR LF in :authority", []string{":method", "GET", ":scheme", "https", ":authority", "a\r\nx: y", ":path", "/"},
			[]string{":method", "GET", ":scheme", "https", ":authority", "[::1]:8443", ":path", "/"}},
		{"userinfo in :authority", []string{":method", "GET", ":scheme", "https", ":authority", "u@a", ":path", "/"},
			[]string{":method", "GET", ":scheme", "https", ":authority", "a.b-c_d~e:1", ":path", "/"}},
		{"host differs", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "host", "b"},
			[]string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "host", "A"}},
		{"two hosts", append(base, "host", "a", "host", "a"), append(base, "host", "a")},
		{"space in :scheme", []string{":method", "GET", ":scheme", "ht tp", ":path", "/"}, base},
		{"control in value", append(base, "x", "a\x01b"), append(base, "x", "a\tb\x80")},
		{"NUL in value", append(base, "x", "a\x00b"), base},
		{"LF in name", append(base, "x\ny", "a"), base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t, Config{})
			p.app.respond = reply
			p.start()
			p.headers(1, true, tc.bad...)
			p.feed()
			p.rst(1, http2.ErrCodeProtocol)
			if len(p.app.requests) != 0 || p.app.bad[1] == "" {
				t.Fatalf("malformed request reached the handler, or Malformed not called (%q)", p.app.bad[1])
			}
			p.headers(3, true, tc.good...)
			p.feed()
			if len(p.app.requests) != 1 {
				t.Fatalf("well-formed twin not served (error %v)", p.err)
			}
		})
	}
}

func TestExtendedConnect(t *testing.T) {
	p := newPeer(t, Config{EnableConnectProtocol: true})
	p.start()
	p.headers(1, false, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/chat", ":authority", "a")
	p.feed()
	if len(p.app.requests) != 1 || p.app.requests[0].Request.Protocol != "websocket" {
		t.Fatalf("extended CONNECT not served: %+v", p.app.requests)
	}
}

func TestStreamIDs(t *testing.T) {
	p := newPeer(t, Config{})
	p.app.respond = reply
	p.start()
	p.get(5, "/", true)
	p.get(3, "/", true)
	p.feed()
	p.goAway(http2.ErrCodeProtocol) // §5.1.1: 3 was never opened

	// Opened and closed: §5.1's STREAM_CLOSED.
	p = newPeer(t, Config{})
	p.app.respond = reply
	p.start()
	p.get(5, "/", true)
	p.get(5, "/", true)
	p.feed()
	p.goAway(http2.ErrCodeStreamClosed)

	p = newPeer(t, Config{})
	p.start()
	p.get(2, "/", true)
	p.feed()
	p.goAway(http2.ErrCodeProtocol)
}

func TestFrameSizeLimit(t *testing.T) {
	p := newPeer(t, Config{})
	p.start()
	p.get(1, "/", false)
	// Only the header of a frame declaring 16 MiB: refused before its
	// payload is read.
	p.in.Write(AppendFrameHeader(nil, 1<<24-1, FrameData, 0, 1))
	p.feed()
	p.goAway(http2.ErrCodeFrameSize)

	p = newPeer(t, Config{MaxFrameSize: 1 << 20})
	p.start()
	p.get(1, "/", false)
	p.must(p.framer.WriteData(1, true, make([]byte, 100<<10)))
	p.feed()
	if p.err != nil || len(p.app.bodies[1]) != 100<<10 {
		t.Fatalf("a frame within the advertised size refused: %v", p.err)
	}
}

func TestSendFlowControl(t *testing.T) {
	p := newPeer(t, Config{})
	held := p.hold()
	p.start()
	p.get(1, "/", true)
	p.feed()
	stream := (*held)[0]
	body := bytes.Repeat([]byte("x"), 100000)
	p.conn.WriteHeaders(stream, 200, nil, false)
	n := p.conn.WriteData(stream, body, true)
	if n != defaultWindow || !p.conn.WindowShut() || !stream.WindowShut() {
		t.Fatalf("wrote %d of %d in a %d window (shut: connection %v, stream %v)", n, len(body), defaultWindow,
			p.conn.WindowShut(), stream.WindowShut())
	}
	p.feed()
	p.expect(http2.FrameHeaders)
	got := 0
	for p.out.Len() > 0 {
		got += len(p.expect(http2.FrameData).(*http2.DataFrame).Data())
	}
	if got != defaultWindow {
		t.Fatalf("%d bytes sent, want the window's %d", got, defaultWindow)
	}
	// The stream's window alone opening is not enough: the connection's
	// is spent too.
	p.must(p.framer.WriteWindowUpdate(1, 1<<20))
	p.feed()
	if len(p.app.opened) != 0 || stream.WindowShut() || !p.conn.WindowShut() {
		t.Fatalf("WindowOpened %v while the connection window is 0 (shut: connection %v, stream %v)",
			p.app.opened, p.conn.WindowShut(), stream.WindowShut())
	}
	p.must(p.framer.WriteWindowUpdate(0, 1<<20))
	p.feed()
	if len(p.app.opened) != 1 {
		t.Fatal("WindowOpened not called")
	}
	n += p.conn.WriteData(stream, body[n:], true)
	if n != len(body) || p.conn.WindowShut() || stream.WindowShut() {
		t.Fatalf("wrote %d of %d after the window opened", n, len(body))
	}
}

func TestReceiveFlowControl(t *testing.T) {
	p := newPeer(t, Config{InitialWindowSize: defaultWindow, ConnWindowSize: defaultWindow})
	p.start()
	p.headers(1, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.must(p.framer.WriteData(1, false, make([]byte, 16383)))
	p.feed()
	p.quiet() // nothing consumed, nothing returned
	p.conn.Consumed(p.conn.streams[1], 65535)
	p.feed()
	p.expect(http2.FrameWindowUpdate)
	p.expect(http2.FrameWindowUpdate)
	// One octet past the window is a flow-control error.
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.must(p.framer.WriteData(1, false, make([]byte, 16384)))
	p.feed()
	p.goAway(http2.ErrCodeFlowControl)
}

func TestWindowUpdateRules(t *testing.T) {
	p := newPeer(t, Config{})
	p.start()
	p.get(1, "/", true)
	p.must(p.framer.WriteWindowUpdate(1, 0))
	p.feed()
	p.rst(1, http2.ErrCodeProtocol)
	p.get(3, "/", true)
	p.must(p.framer.WriteWindowUpdate(3, 1<<31-1))
	p.feed()
	p.rst(3, http2.ErrCodeFlowControl)
	p.must(p.framer.WriteWindowUpdate(0, 0))
	p.feed()
	p.goAway(http2.ErrCodeProtocol)
}

func TestSettingsRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setting http2.Setting
		code    http2.ErrCode
	}{
		{"push not boolean", http2.Setting{ID: http2.SettingEnablePush, Val: 2}, http2.ErrCodeProtocol},
		{"window too large", http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 31}, http2.ErrCodeFlowControl},
		{"frame size too small", http2.Setting{ID: http2.SettingMaxFrameSize, Val: 16383}, http2.ErrCodeProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t, Config{})
			p.start()
			p.must(p.framer.WriteSettings(tc.setting))
			p.feed()
			p.goAway(tc.code)
		})
	}
	p := newPeer(t, Config{})
	p.start()
	p.must(p.framer.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20}, http2.Setting{ID: 0xff, Val: 7}))
	p.feed()
	if f := p.expect(http2.FrameSettings); !f.Header().Flags.Has(http2.FlagSettingsAck) || p.err != nil {
		t.Fatal("valid SETTINGS with an unknown id not acknowledged")
	}
}

func TestPing(t *testing.T) {
	p := newPeer(t, Config{})
	p.start()
	p.must(p.framer.WritePing(false, [8]byte{1, 2, 3}))
	p.feed()
	if f := p.expect(http2.FramePing).(*http2.PingFrame); !f.IsAck() || f.Data != [8]byte{1, 2, 3} {
		t.Fatalf("ping answer %v", f)
	}
	p.in.Write(AppendFrameHeader(nil, 7, FramePing, 0, 0))
	p.in.Write(make([]byte, 7))
	p.feed()
	p.goAway(http2.ErrCodeFrameSize)
}

func TestGracefulShutdown(t *testing.T) {
	p := newPeer(t, Config{})
	held := p.hold()
	p.start()
	p.get(1, "/", true)
	p.feed()
	p.conn.Shutdown()
	p.feed()
	if g := p.expect(http2.FrameGoAway).(*http2.GoAwayFrame); g.LastStreamID != 1<<31-1 || g.ErrCode != http2.ErrCodeNo {
		t.Fatalf("first GOAWAY %v", g)
	}
	ping := p.expect(http2.FramePing).(*http2.PingFrame)
	// A stream opened before the client saw the GOAWAY is still served.
	p.get(3, "/", true)
	p.must(p.framer.WritePing(true, ping.Data))
	p.feed()
	if len(p.app.requests) != 2 {
		t.Fatal("stream opened during the first GOAWAY not served")
	}
	if g := p.expect(http2.FrameGoAway).(*http2.GoAwayFrame); g.LastStreamID != 3 {
		t.Fatalf("final GOAWAY names %d, want 3", g.LastStreamID)
	}
	p.get(5, "/", true)
	p.feed()
	if len(p.app.requests) != 2 {
		t.Fatal("stream after the final GOAWAY served")
	}
	if p.conn.Finished() {
		t.Fatal("finished with streams held")
	}
	for _, s := range *held {
		p.conn.WriteHeaders(s, 204, nil, true)
		p.conn.Done(s)
	}
	if !p.conn.Finished() {
		t.Fatal("not finished once every stream is done")
	}
}

func TestHPACKStateKeptForRefusedBlocks(t *testing.T) {
	p := newPeer(t, Config{MaxConcurrentStreams: 1})
	held := p.hold()
	p.start()
	p.get(1, "/", true, "x-indexed", "value")
	// Refused for concurrency, but its block enters the table...
	p.get(3, "/", true, "x-second", "two")
	p.feed()
	p.rst(3, http2.ErrCodeRefusedStream)
	p.conn.WriteHeaders((*held)[0], 204, nil, true)
	p.conn.Done((*held)[0])
	// ...so a later block that refers to it by index still decodes.
	p.get(5, "/", true, "x-second", "two")
	p.feed()
	if p.err != nil || len(p.app.requests) != 2 {
		t.Fatalf("request after a refused one: %v", p.err)
	}
	last := p.app.requests[1].Request.Fields
	if len(last) != 1 || last[0] != (hpack.HeaderField{Name: "x-second", Value: "two"}) {
		t.Fatalf("fields %v", last)
	}
}

// TestInitialWindowChange: SETTINGS_INITIAL_WINDOW_SIZE moves the send
// window of streams already open (§6.9.2), and a stream it opens is woken.
func TestInitialWindowChange(t *testing.T) {
	p := newPeer(t, Config{})
	held := p.hold()
	p.in.WriteString(Preface)
	p.must(p.framer.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}))
	p.get(1, "/", true)
	p.feed()
	s := (*held)[0]
	p.conn.WriteHeaders(s, 200, nil, false)
	if n := p.conn.WriteData(s, []byte("abc"), true); n != 0 {
		t.Fatalf("wrote %d in a window of 0", n)
	}
	p.must(p.framer.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1}))
	p.feed()
	if len(p.app.opened) != 1 {
		t.Fatal("WindowOpened not called when SETTINGS opened the window")
	}
	if n := p.conn.WriteData(s, []byte("abc"), true); n != 1 {
		t.Fatalf("wrote %d in a window of 1", n)
	}
}

// TestEarlyResponse: a response finished before the request body is read
// and dropped (§8.1): a small rest ends quietly, trailers included; a rest
// past a window is cut off with RST_STREAM NO_ERROR, and so is one that
// stops coming: ExpireLingering (issue 37: one byte of body and silence
// held the stream, and its connection, for good).
func TestEarlyResponse(t *testing.T) {
	p := newPeer(t, Config{InitialWindowSize: defaultWindow})
	p.app.respond = reply
	p.start()
	p.headers(1, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.feed()
	p.expect(http2.FrameHeaders)
	p.expect(http2.FrameData)
	p.must(p.framer.WriteData(1, false, []byte("late")))
	p.headers(1, true, "x-trailer", "1")
	p.feed()
	p.quiet()
	if p.err != nil || len(p.conn.streams) != 0 || p.conn.lingering != 0 {
		t.Fatalf("stream not closed by its END_STREAM: %v", p.err)
	}
	if len(p.app.bodies[1]) != 0 {
		t.Fatal("body after the response reached a handler that was done")
	}

	p.headers(3, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.feed()
	p.expect(http2.FrameHeaders)
	p.expect(http2.FrameData)
	for i := 0; i < 5; i++ {
		p.must(p.framer.WriteData(3, false, make([]byte, 16384)))
	}
	p.feed()
	p.rst(3, http2.ErrCodeNo)

	// One byte, then silence: cut off at the second sweep with nothing
	// new, and the connection is idle.
	p.headers(5, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.must(p.framer.WriteData(5, false, []byte("x")))
	p.feed()
	p.expect(http2.FrameHeaders)
	p.expect(http2.FrameData)
	if p.conn.ExpireLingering() || p.conn.Idle() {
		t.Fatal("a lingering stream cut off, or the connection idle, at the first sweep")
	}
	p.must(p.framer.WriteData(5, false, []byte("y")))
	p.feed()
	if p.conn.ExpireLingering() {
		t.Fatal("a lingering stream cut off with body arriving since the last sweep")
	}
	if !p.conn.ExpireLingering() {
		t.Fatal("a lingering stream not cut off after a sweep with nothing new")
	}
	p.feed()
	p.rst(5, http2.ErrCodeNo)
	if !p.conn.Idle() {
		t.Fatal("the connection not idle once its last stream was cut off")
	}
	// What crossed the reset is dropped, and the connection goes on.
	p.must(p.framer.WriteData(5, false, []byte("late")))
	p.headers(5, true, "x-trailer", "1")
	p.get(7, "/", true)
	p.feed()
	p.expect(http2.FrameHeaders)
	if p.err != nil {
		t.Fatalf("late frames for a stream the server cut off: %v", p.err)
	}
}

// TestRefusedStreamGrace: a stream refused over the concurrency limit is
// remembered as one the server reset: the body and trailers the client
// had in flight for it are ignored, not a connection error.
func TestRefusedStreamGrace(t *testing.T) {
	p := newPeer(t, Config{MaxConcurrentStreams: 1})
	p.hold()
	p.start()
	p.headers(1, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.headers(3, false, ":method", "POST", ":scheme", "http", ":path", "/")
	p.feed()
	p.rst(3, http2.ErrCodeRefusedStream)
	p.must(p.framer.WriteData(3, false, []byte("in flight")))
	p.headers(3, true, "x-trailer", "1")
	p.feed()
	p.quiet()
	if p.err != nil {
		t.Fatalf("frames in flight for a refused stream: %v", p.err)
	}
}

// TestResetGrace: late frames for any of the last streams the server
// reset are ignored, however many it reset since (issue 37: the last 16
// only, so the 17th back ended the connection).
func TestResetGrace(t *testing.T) {
	p := newPeer(t, Config{})
	p.start()
	for id := uint32(1); id < 2*40; id += 2 {
		p.headers(id, false, ":method", "GET", ":scheme", "http", ":path", "no slash")
	}
	p.feed()
	for id := uint32(1); id < 2*40; id += 2 {
		p.rst(id, http2.ErrCodeProtocol)
	}
	p.must(p.framer.WriteData(1, false, []byte("late")))
	p.headers(1, true, "x-trailer", "1")
	p.feed()
	p.quiet()
	if p.err != nil {
		t.Fatalf("late frames for the 40th stream back the server reset: %v", p.err)
	}
}
