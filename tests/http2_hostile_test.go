//go:build linux

package tests

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Issue 37's reproductions, by raw frames (x/net's Framer and an HPACK
// encoder, which validate nothing) against the real binary.

// h2Event is what the server said on one stream, or to the connection.
type h2Event struct {
	stream  uint32
	status  string // a HEADERS' :status
	fields  []hpack.HeaderField
	data    []byte
	end     bool // END_STREAM
	reset   bool // RST_STREAM, with code
	goAway  bool // GOAWAY, with code
	code    xhttp2.ErrCode
	closed  bool // the connection ended (EOF or an error)
	readErr error
}

// h2Reader reads c's frames on a goroutine into events, answering PINGs
// (under mu, beside the test's writes).
type h2Reader struct {
	events chan h2Event
}

func readH2(c *h2Conn, writeMu *atomicMutex) *h2Reader {
	r := &h2Reader{events: make(chan h2Event, 4096)}
	go func() {
		dec := hpack.NewDecoder(4096, nil)
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				r.events <- h2Event{closed: true, readErr: err}
				close(r.events)
				return
			}
			switch f := f.(type) {
			case *xhttp2.HeadersFrame:
				fields, err := dec.DecodeFull(f.HeaderBlockFragment())
				if err != nil {
					r.events <- h2Event{closed: true, readErr: err}
					close(r.events)
					return
				}
				e := h2Event{stream: f.StreamID, fields: fields, end: f.StreamEnded()}
				for _, hf := range fields {
					if hf.Name == ":status" {
						e.status = hf.Value
					}
				}
				r.events <- e
			case *xhttp2.DataFrame:
				r.events <- h2Event{stream: f.StreamID, data: bytes.Clone(f.Data()), end: f.StreamEnded()}
			case *xhttp2.RSTStreamFrame:
				r.events <- h2Event{stream: f.StreamID, reset: true, code: f.ErrCode}
			case *xhttp2.GoAwayFrame:
				r.events <- h2Event{goAway: true, code: f.ErrCode}
			case *xhttp2.PingFrame:
				if !f.IsAck() {
					writeMu.Lock()
					c.fr.WritePing(true, f.Data)
					writeMu.Unlock()
				}
			}
		}
	}()
	return r
}

// atomicMutex is a mutex that the reader and the test share.
type atomicMutex struct{ ch chan struct{} }

func newAtomicMutex() *atomicMutex { return &atomicMutex{ch: make(chan struct{}, 1)} }
func (m *atomicMutex) Lock()       { m.ch <- struct{}{} }
func (m *atomicMutex) Unlock()     { <-m.ch }

// next is the next event, failing the test after wait.
func (r *h2Reader) next(t *testing.T, wait time.Duration) h2Event {
	t.Helper()
	select {
	case e, ok := <-r.events:
		if !ok {
			return h2Event{closed: true}
		}
		return e
	case <-time.After(wait):
		t.Fatalf("no frame from the server in %v", wait)
	}
	return h2Event{}
}

// streamEnd reads until stream id ends (END_STREAM or RST_STREAM) and
// returns its status, body and reset; a GOAWAY or close first fails.
func (r *h2Reader) streamEnd(t *testing.T, id uint32) (status string, body []byte, reset *h2Event) {
	t.Helper()
	for {
		e := r.next(t, 30*time.Second)
		switch {
		case e.closed || e.goAway:
			t.Fatalf("stream %d: the connection ended (GOAWAY %v, %v) before the stream did", id, e.code, e.readErr)
		case e.stream != id:
			continue
		case e.reset:
			return status, body, &e
		}
		if e.status != "" {
			status = e.status
		}
		body = append(body, e.data...)
		if e.end {
			return status, body, nil
		}
	}
}

// writeRequest sends a header block made of fields as they are, on
// stream id.
func (c *h2Conn) writeRequest(t *testing.T, id uint32, fields [][2]string, endStream bool) {
	t.Helper()
	c.buf.Reset()
	for _, f := range fields {
		c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(),
		EndStream: endStream, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
}

// hostileReply is h2_hostile_app.py's account of a request.
type hostileReply struct {
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Query   string      `json:"query"`
	Headers [][2]string `json:"headers"`
	Length  int         `json:"length"`
}

func (r hostileReply) header(name string) (string, bool) {
	for _, h := range r.Headers {
		if h[0] == name {
			return h[1], true
		}
	}
	return "", false
}

// h2App is a server configuration of the matrix the tests run on.
type h2App struct {
	name string
	v    variant
	args []string
}

// h2Matrix is io_uring and epoll, each with the native handler (args),
// the WSGI app, and the ASGI app on the loop's thread and on the
// executor; WSGI with two handler threads, so that one held stream does
// not hold the others.
func h2Matrix(t *testing.T, native []string, wsgi, asgi string) []h2App {
	var m []h2App
	for _, v := range []variant{variants[0], variants[1]} {
		m = append(m,
			h2App{v.name + "/native", v, native},
			h2App{v.name + "/wsgi", v, []string{"--app-dir", appsDir(t), "--threads", "2", wsgi}},
			h2App{v.name + "/asgi-loop", v, []string{"--app-dir", appsDir(t), "--asgi-thread", "loop", asgi}},
			h2App{v.name + "/asgi-executor", v, []string{"--app-dir", appsDir(t), "--asgi-thread", "executor", asgi}})
	}
	return m
}

// TestHTTP2HostileRequests (issue 37, 1): CR LF, NUL, spaces and the like
// in :path, :method, :authority, :scheme and field names or values never
// reach the app: the stream is refused (RST_STREAM PROTOCOL_ERROR, or a
// 400), the connection serves its next stream, and what the app sees of a
// valid request is what was sent. On io_uring and epoll, for WSGI and for
// ASGI on the loop's thread and on the executor.
func TestHTTP2HostileRequests(t *testing.T) {
	apps := []struct {
		name string
		args []string
	}{
		{"wsgi", []string{"h2_hostile_app:application"}},
		{"asgi-loop", []string{"--asgi-thread", "loop", "h2_hostile_app:app"}},
		{"asgi-executor", []string{"--asgi-thread", "executor", "h2_hostile_app:app"}},
	}
	for _, v := range []variant{variants[0], variants[1]} {
		for _, app := range apps {
			t.Run(v.name+"/"+app.name, func(t *testing.T) {
				s := startH2(t, v, false, app.args...)
				testH2Hostile(t, s)
				checkNoTraceback(t, s.server)
			})
		}
	}
}

func testH2Hostile(t *testing.T, s *h2Server) {
	base := func(method, scheme, authority, path string) [][2]string {
		return [][2]string{{":method", method}, {":scheme", scheme}, {":authority", authority}, {":path", path}}
	}
	a := s.addr
	inject := "\r\nx-injected: yes\r\nx-pad: a"
	cases := []struct {
		name   string
		fields [][2]string
	}{
		{"path-crlf", base("GET", "http", a, "/hdrs HTTP/1.1"+inject)},
		{"path-lf", base("GET", "http", a, "/hdrs\nx-injected: yes")},
		{"path-nul", base("GET", "http", a, "/hdrs\x00x")},
		{"path-space", base("GET", "http", a, "/hdrs x")},
		{"path-not-origin", base("GET", "http", a, "http://evil/hdrs")},
		{"path-fragment", base("GET", "http", a, "/hdrs#frag")},
		{"path-asterisk-get", base("GET", "http", a, "*")},
		{"method-crlf", base("GET /hdrs HTTP/1.1"+inject, "http", a, "/hdrs")},
		{"method-space", base("GET /x", "http", a, "/hdrs")},
		{"authority-crlf", base("GET", "http", a+inject, "/hdrs")},
		{"authority-userinfo", base("GET", "http", "user@"+a, "/hdrs")},
		{"authority-space", base("GET", "http", "a b", "/hdrs")},
		{"scheme-crlf", base("GET", "http"+inject, a, "/hdrs")},
		{"value-crlf", append(base("GET", "http", a, "/hdrs"), [2]string{"x-v", "a" + inject})},
		{"value-nul", append(base("GET", "http", a, "/hdrs"), [2]string{"x-v", "a\x00b"})},
		{"value-ctl", append(base("GET", "http", a, "/hdrs"), [2]string{"x-v", "a\x01b"})},
		{"name-upper", append(base("GET", "http", a, "/hdrs"), [2]string{"X-Upper", "a"})},
		{"name-colon", append(base("GET", "http", a, "/hdrs"), [2]string{"x-a:b", "a"})},
		{"name-crlf", append(base("GET", "http", a, "/hdrs"), [2]string{"x-a\r\nx-injected", "yes"})},
		{"transfer-encoding", append(base("POST", "http", a, "/hdrs"), [2]string{"transfer-encoding", "chunked"})},
		{"connection", append(base("GET", "http", a, "/hdrs"), [2]string{"connection", "close"})},
		{"te-gzip", append(base("GET", "http", a, "/hdrs"), [2]string{"te", "gzip"})},
		{"host-differs", append(base("GET", "http", a, "/hdrs"), [2]string{"host", "evil.example"})},
		{"two-lengths", append(base("POST", "http", a, "/hdrs"), [2]string{"content-length", "1"}, [2]string{"content-length", "2"})},
		{"expect-other", append(base("POST", "http", a, "/hdrs"), [2]string{"expect", "x-other"})},
	}
	c := dialH2(t, s)
	mu := newAtomicMutex()
	r := readH2(c, mu)
	id := uint32(1)
	for _, tc := range cases {
		mu.Lock()
		c.writeRequest(t, id, tc.fields, true)
		mu.Unlock()
		status, body, reset := r.streamEnd(t, id)
		switch {
		case reset != nil && reset.code == xhttp2.ErrCodeProtocol:
		case reset == nil && strings.HasPrefix(status, "4"):
		default:
			t.Errorf("%s: status %q, reset %+v, body %q: want RST_STREAM PROTOCOL_ERROR or a 4xx", tc.name, status, reset, body)
		}
		id += 2
	}
	// The same connection serves a valid request, whose fields the app
	// sees as sent: no field of the refused ones came through.
	mu.Lock()
	c.writeRequest(t, id, append(base("POST", "http", a, "/hdrs?a=b&c"),
		[2]string{"content-length", "3"}, [2]string{"cookie", "a=1"}, [2]string{"x-tab", "a\tb"},
		[2]string{"cookie", "b=2"}, [2]string{"te", "trailers"}), false)
	c.fr.WriteData(id, true, []byte("abc"))
	mu.Unlock()
	status, body, reset := r.streamEnd(t, id)
	if status != "200" || reset != nil {
		t.Fatalf("a valid request after the refused ones: %q %+v %q", status, reset, body)
	}
	var got hostileReply
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %q", err, body)
	}
	if got.Method != "POST" || got.Path != "/hdrs" || got.Query != "a=b&c" || got.Length != 3 {
		t.Errorf("the app saw %+v", got)
	}
	for name, want := range map[string]string{"host": a, "x-tab": "a\tb", "content-length": "3", "te": "trailers"} {
		if v, ok := got.header(name); !ok || v != want {
			t.Errorf("the app saw %s %q (present %v), want %q: %+v", name, v, ok, want, got.Headers)
		}
	}
	if v, _ := got.header("cookie"); v != "a=1; b=2" {
		t.Errorf("the app saw cookie %q, want the two joined (RFC 9113 §8.2.3)", v)
	}
	for _, h := range got.Headers {
		if h[0] == "x-injected" || h[0] == "x-pad" || strings.ContainsAny(h[0]+h[1], "\r\n\x00") {
			t.Errorf("the app saw an injected field: %q", h)
		}
	}
	c.Close()
}

// TestHTTP2LingeringStream (issue 37, 2): a POST answered before its body
// ends (the app reads none of it), one DATA byte sent and then silence:
// the server ends the stream (RST_STREAM NO_ERROR, RFC 9113 §8.1) and,
// with no stream left, closes the idle connection after
// --keepalive-timeout.
func TestHTTP2LingeringStream(t *testing.T) {
	for _, app := range h2Matrix(t, []string{"--native", "hello"}, "h2_hostile_app:application", "h2_hostile_app:app") {
		t.Run(app.name, func(t *testing.T) {
			t.Parallel() // each waits seconds on its timeouts
			s := &h2Server{native: true, server: start(t, app.v,
				append([]string{"--body-timeout", "2s", "--keepalive-timeout", "2s"}, app.args...)...)}
			c := dialH2(t, s)
			mu := newAtomicMutex()
			r := readH2(c, mu)
			c.writeRequest(t, 1, [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", s.addr}, {":path", "/fast"}}, false)
			if err := c.fr.WriteData(1, false, []byte("x")); err != nil {
				t.Fatal(err)
			}
			started := time.Now()
			answered := false
			for {
				e := r.next(t, 20*time.Second)
				if e.status != "" && e.stream == 1 {
					answered = true
				}
				if e.closed {
					break
				}
			}
			if !answered {
				t.Fatalf("the connection closed without an answer to the stream")
			}
			t.Logf("closed %v after the request", time.Since(started).Round(100*time.Millisecond))
			checkNoTraceback(t, s.server)
		})
	}
}

// TestHTTP2ContinuationFlood (issue 37, 3): HEADERS without END_HEADERS,
// then CONTINUATION frames of small valid fields, without end: the server
// closes the connection with GOAWAY (ENHANCE_YOUR_CALM or
// COMPRESSION_ERROR) once the block passes the header list limit, and
// reads no more of it.
func TestHTTP2ContinuationFlood(t *testing.T) {
	for _, tc := range []struct {
		v   variant
		tls bool
	}{{variants[0], false}, {variants[1], false}, {variants[0], true}} {
		name := tc.v.name
		if tc.tls {
			name += "/tls"
		}
		t.Run(name, func(t *testing.T) {
			s := startH2(t, tc.v, tc.tls, "--native", "echo")
			c := dialH2(t, s)
			mu := newAtomicMutex()
			r := readH2(c, mu)
			var sent atomic.Int64
			writeErr := make(chan error, 1)
			go func() {
				c.buf.Reset()
				for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", s.addr}, {":path", "/"}} {
					c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
				}
				mu.Lock()
				err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: 1, BlockFragment: c.buf.Bytes()})
				mu.Unlock()
				// Small fields, each a literal without indexing: every
				// one decodes to a field of its own.
				var piece bytes.Buffer
				enc := hpack.NewEncoder(&piece)
				for piece.Len() < 1000 {
					enc.WriteField(hpack.HeaderField{Name: "x-a", Value: "b", Sensitive: true})
				}
				for err == nil && sent.Load() < 64<<20 {
					mu.Lock()
					err = c.fr.WriteContinuation(1, false, piece.Bytes())
					mu.Unlock()
					sent.Add(int64(piece.Len() + 9))
				}
				writeErr <- err
			}()
			var goAway *h2Event
			for {
				e := r.next(t, 30*time.Second)
				if e.goAway && goAway == nil {
					goAway = &e
				}
				if e.closed {
					break
				}
			}
			// The writer goes on until the server's close stops it.
			var err error
			select {
			case err = <-writeErr:
			case <-time.After(30 * time.Second):
				t.Fatalf("the server still reads the flood 30 s on (%d MiB)", sent.Load()>>20)
			}
			c.Close()
			if goAway == nil || goAway.code != xhttp2.ErrCodeEnhanceYourCalm && goAway.code != xhttp2.ErrCodeCompression {
				t.Fatalf("GOAWAY %+v, want ENHANCE_YOUR_CALM or COMPRESSION_ERROR", goAway)
			}
			// Loopback's socket buffers hold a few MiB that a server closing
			// at once never reads; a server that reads on holds far more.
			if n := sent.Load(); n >= 32<<20 {
				t.Fatalf("the client sent %d MiB of one header block before the close (%v)", n>>20, err)
			}
			t.Logf("the client sent %d KiB before the close (%v)", sent.Load()>>10, err)
			checkH2Served(t, s)
		})
	}
}

// TestHTTP2StreamSendTimeout (issue 37, 4): a client holds one stream's
// window shut while it opens another's a little at a time: under
// --send-timeout 2s the shut stream is reset (its handler's job ended)
// and the other goes on, on the same connection.
func TestHTTP2StreamSendTimeout(t *testing.T) {
	for _, app := range h2Matrix(t, []string{"--native", "echo"}, "h2_app:application", "h2_app:app") {
		path := "/size/1000000"
		if app.name == "native" || strings.HasSuffix(app.name, "/native") {
			path = "/?raw"
		}
		t.Run(app.name, func(t *testing.T) {
			t.Parallel() // each waits seconds on its timeout
			s := &h2Server{native: true, server: start(t, app.v, append([]string{"--send-timeout", "2s"}, app.args...)...)}
			c := dialH2(t, s)
			mu := newAtomicMutex()
			mu.Lock()
			if err := c.fr.WriteSettings(xhttp2.Setting{ID: xhttp2.SettingInitialWindowSize, Val: 0}); err != nil {
				t.Fatal(err)
			}
			c.fr.WriteWindowUpdate(0, 1<<30)
			mu.Unlock()
			r := readH2(c, mu)
			request := func(id uint32) {
				mu.Lock()
				defer mu.Unlock()
				fields := [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", s.addr}, {":path", path}}
				c.writeRequest(t, id, fields, false)
				c.fr.WriteData(id, true, bytes.Repeat([]byte("held"), 4000))
			}
			request(1) // held shut
			request(3) // opened a little at a time
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(300 * time.Millisecond):
					}
					mu.Lock()
					err := c.fr.WriteWindowUpdate(3, 512)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			deadline := time.Now().Add(20 * time.Second)
			var resetAt time.Time
			after := 0 // stream 3's DATA octets after stream 1's reset
			for time.Now().Before(deadline) && (resetAt.IsZero() || after < 2048) {
				e := r.next(t, 20*time.Second)
				switch {
				case e.closed || e.goAway:
					t.Fatalf("the connection ended (GOAWAY %v, %v): want only stream 1 reset", e.code, e.readErr)
				case e.stream == 1 && len(e.data) > 0:
					t.Fatalf("DATA on stream 1 through a window of 0")
				case e.stream == 1 && e.reset:
					resetAt = time.Now()
				case e.stream == 3 && e.reset:
					t.Fatalf("stream 3, whose window opens, was reset (%v)", e.code)
				case e.stream == 3 && !resetAt.IsZero():
					after += len(e.data)
				}
			}
			if resetAt.IsZero() {
				t.Fatal("stream 1, held at a window of 0, was not reset under --send-timeout 2s")
			}
			if after < 2048 {
				t.Fatalf("stream 3 got %d octets after stream 1's reset", after)
			}
			waitLog(t, s.server, "--send-timeout")
			c.Close()
			checkNoTraceback(t, s.server)
		})
	}
}

// TestHTTP2StreamIDs (issue 37, 6): HEADERS on a stream id lower than one
// already used, that was never opened, is a connection error of type
// PROTOCOL_ERROR (RFC 9113 §5.1.1); on a stream that was opened and
// closed, STREAM_CLOSED (§5.1).
func TestHTTP2StreamIDs(t *testing.T) {
	s := startH2(t, variants[0], false, "--native", "hello")
	for _, tc := range []struct {
		name  string
		first uint32
		then  uint32
		want  xhttp2.ErrCode
	}{
		{"lower-never-opened", 1<<31 - 1, 3, xhttp2.ErrCodeProtocol},
		{"lower-skipped", 5, 3, xhttp2.ErrCodeProtocol},
		{"closed", 5, 5, xhttp2.ErrCodeStreamClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialH2(t, s)
			mu := newAtomicMutex()
			r := readH2(c, mu)
			c.request(tc.first, s.addr, "/")
			if status, _, _ := r.streamEnd(t, tc.first); status != "200" {
				t.Fatalf("stream %d: %q", tc.first, status)
			}
			c.request(tc.then, s.addr, "/")
			for {
				e := r.next(t, 20*time.Second)
				if e.closed {
					t.Fatal("closed without a GOAWAY")
				}
				if e.goAway {
					if e.code != tc.want {
						t.Fatalf("GOAWAY %v, want %v", e.code, tc.want)
					}
					break
				}
			}
		})
	}
}
