package loop

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

// h2Client writes a client's frames as strings for the fake backend and
// reads the server's back from a connection's whole output.
type h2Client struct {
	buf bytes.Buffer
	fr  *http2.Framer
	enc *hpack.Encoder
	blk bytes.Buffer
}

func newH2Client() *h2Client {
	c := &h2Client{}
	c.fr = http2.NewFramer(&c.buf, nil)
	c.enc = hpack.NewEncoder(&c.blk)
	return c
}

// take returns what was framed since the last take.
func (c *h2Client) take() string {
	s := c.buf.String()
	c.buf.Reset()
	return s
}

// open is the preface and a SETTINGS frame with a large window for every
// stream, and a large connection window: the server's sends never wait.
func (c *h2Client) open() string {
	c.buf.WriteString(http2.ClientPreface)
	c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	c.fr.WriteWindowUpdate(0, 1<<30)
	return c.take()
}

func (c *h2Client) headers(id uint32, method, path string, end bool, fields ...string) string {
	c.blk.Reset()
	c.enc.WriteField(hpack.HeaderField{Name: ":method", Value: method})
	c.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
	c.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: "x"})
	c.enc.WriteField(hpack.HeaderField{Name: ":path", Value: path})
	for i := 0; i+1 < len(fields); i += 2 {
		c.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.blk.Bytes(), EndStream: end, EndHeaders: true})
	return c.take()
}

// h2Stream is what the server sent on one stream.
type h2Stream struct {
	fields    map[string]string
	body      []byte
	ended     bool
	reset     bool
	resetCode http2.ErrCode
	updates   int // WINDOW_UPDATE frames
}

// h2Output is the server's frames in a connection's output.
type h2Output struct {
	streams map[uint32]*h2Stream
	goAways []*http2.GoAwayFrame
	pings   [][8]byte
}

func parseH2Output(t *testing.T, out string) *h2Output {
	t.Helper()
	fr := http2.NewFramer(nil, strings.NewReader(out))
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 1 << 20
	o := &h2Output{streams: map[uint32]*h2Stream{}}
	stream := func(id uint32) *h2Stream {
		if o.streams[id] == nil {
			o.streams[id] = &h2Stream{fields: map[string]string{}}
		}
		return o.streams[id]
	}
	for {
		f, err := fr.ReadFrame()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return o // a frame still on its way
		}
		if err != nil {
			t.Fatalf("the server's frames: %v", err)
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			s := stream(f.StreamID)
			for _, h := range f.Fields {
				s.fields[h.Name] = h.Value
			}
			s.ended = s.ended || f.StreamEnded()
		case *http2.DataFrame:
			s := stream(f.StreamID)
			s.body = append(s.body, f.Data()...)
			s.ended = s.ended || f.StreamEnded()
		case *http2.RSTStreamFrame:
			stream(f.StreamID).reset = true
			stream(f.StreamID).resetCode = f.ErrCode
		case *http2.WindowUpdateFrame:
			if f.StreamID != 0 {
				stream(f.StreamID).updates++
			}
		case *http2.GoAwayFrame:
			o.goAways = append(o.goAways, f)
		case *http2.PingFrame:
			if !f.IsAck() {
				o.pings = append(o.pings, f.Data)
			}
		}
	}
}

// h2Ended waits until the server ended stream id on c.
func (h *harness) h2Ended(c *fakeConn, id uint32) *h2Stream {
	h.t.Helper()
	var s *h2Stream
	h.until("stream end", func() bool {
		s = parseH2Output(h.t, h.fb.output(c)).streams[id]
		return s != nil && (s.ended || s.reset)
	})
	return s
}

func h2Config(c *Config) { c.HTTP2 = &HTTP2Config{} }

var helloInline = HandlerFunc(func(req *Request, w *ResponseWriter) {
	w.AddHeader("Content-Type", "text/plain")
	w.Respond(200, []byte("hello "+string(req.Bytes(req.Path))))
})

// A cleartext connection that opens with the preface, even in pieces,
// speaks HTTP/2; its streams reach the inline handler as HTTP/1.1
// requests marked Version20, and the answer goes out as frames. HTTP/1.1
// beside it is untouched.
func TestHTTP2PriorKnowledge(t *testing.T) {
	for _, mode := range fakeModes {
		t.Run(mode.name, func(t *testing.T) {
			var versions []string
			handler := HandlerFunc(func(req *Request, w *ResponseWriter) {
				versions = append(versions, req.Version.String())
				helloInline(req, w)
			})
			hs := newHarness(t, handler, h2Config)
			hs.t = t
			hs.fb.provided, hs.fb.multishot = mode.provided, mode.multishot
			cl := newH2Client()
			c := hs.connect()
			open := cl.open()
			hs.fb.write(c, open[:10])
			hs.passes(2)
			hs.fb.write(c, open[10:])
			hs.fb.write(c, cl.headers(1, "GET", "/one", true))
			hs.fb.write(c, cl.headers(3, "HEAD", "/two", true))
			one := hs.h2Ended(c, 1)
			if one.fields[":status"] != "200" || string(one.body) != "hello /one" || one.fields["content-length"] != "10" ||
				one.fields["server"] != "test" || one.fields["content-type"] != "text/plain" {
				t.Fatalf("stream 1: %+v %q", one.fields, one.body)
			}
			if two := hs.h2Ended(c, 3); two.fields["content-length"] != "10" || len(two.body) != 0 {
				t.Fatalf("HEAD: %+v %q", two.fields, two.body)
			}
			h1 := hs.connect()
			hs.fb.write(h1, "GET /three HTTP/1.1\r\nHost: x\r\n\r\n")
			if got := hs.responses(h1, 1)[0]; !strings.HasSuffix(got, "hello /three") {
				t.Fatalf("HTTP/1.1 beside: %q", got)
			}
			if strings.Join(versions, " ") != "HTTP/2.0 HTTP/2.0 HTTP/1.1" {
				t.Fatalf("versions %q", versions)
			}
		})
	}
}

// Without Config.HTTP2 the preface is an HTTP/1.1 request line with a
// version HTTP/1.1 does not know.
func TestHTTP2Off(t *testing.T) {
	hs := newHarness(t, helloInline, nil)
	c := hs.connect()
	hs.fb.write(c, newH2Client().open())
	hs.until("505", func() bool { return strings.HasPrefix(hs.fb.output(c), "HTTP/1.1 505 ") })
}

// A deferred stream's body reaches the job's Read; its credit goes back
// as WINDOW_UPDATE as the handler reads (a body past the stream window
// gets through only that way), and the response comes back in DATA
// frames.
func TestHTTP2DeferredBody(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 40000) // 640 kB: over the 256 KiB stream window
	deferredHarness(t, deferEverything, echoBody, h2Config)(func(t *testing.T, hs *harness) {
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "POST", "/echo", false, "content-length", "640000"))
		sent, window, updates := 0, 256<<10, 0
		for sent < len(body) {
			n := min(16384, len(body)-sent, window)
			if n == 0 {
				// Wait for the credit the handler's reads give back.
				hs.until("WINDOW_UPDATE", func() bool {
					s := parseH2Output(t, hs.fb.output(c)).streams[1]
					if s != nil && s.updates > updates {
						updates = s.updates
						return true
					}
					return false
				})
				window += 64 << 10 // a quarter window at least
				continue
			}
			cl.fr.WriteData(1, sent+n == len(body), []byte(body[sent:sent+n]))
			hs.fb.write(c, cl.take())
			sent += n
			window -= n
			hs.passes(1)
		}
		s := hs.h2Ended(c, 1)
		if s.reset || s.fields[":status"] != "200" || s.fields["x-method"] != "POST" || string(s.body) != body {
			t.Fatalf("echo: reset %v (%v), %+v, %d bytes (equal %v), GOAWAY %v", s.reset, s.resetCode, s.fields, len(s.body), string(s.body) == body, parseH2Output(t, hs.fb.output(c)).goAways)
		}
	})
}

// A client's RST_STREAM aborts its job: the handler's Write fails with
// ErrAborted, and the connection serves the next stream.
func TestHTTP2ResetAbortsJob(t *testing.T) {
	var mu sync.Mutex
	var writeErr error
	started := make(chan struct{}, 4)
	work := func(j *Job) {
		if string(j.Request.Bytes(j.Request.Path)) != "/endless" {
			echoBody(j)
			return
		}
		started <- struct{}{}
		var err error
		for deadline := time.Now().Add(30 * time.Second); err == nil && time.Now().Before(deadline); {
			_, err = j.Write([]byte(strings.Repeat("x", 4096)))
		}
		mu.Lock()
		writeErr = err
		mu.Unlock()
		j.Finish()
	}
	deferredHarness(t, deferEverything, work, h2Config)(func(t *testing.T, hs *harness) {
		mu.Lock()
		writeErr = nil
		mu.Unlock()
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "GET", "/endless", true))
		hs.until("the handler", func() bool {
			select {
			case <-started:
				return true
			default:
				return false
			}
		})
		hs.until("the response", func() bool {
			s := parseH2Output(t, hs.fb.output(c)).streams[1]
			return s != nil && len(s.body) > 0
		})
		cl.fr.WriteRSTStream(1, http2.ErrCodeCancel)
		hs.fb.write(c, cl.take())
		hs.until("the handler's end", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return writeErr != nil
		})
		mu.Lock()
		if !errors.Is(writeErr, ErrAborted) {
			t.Fatalf("Write after RST_STREAM: %v, want ErrAborted", writeErr)
		}
		mu.Unlock()
		hs.fb.write(c, cl.headers(3, "GET", "/after", true))
		if s := hs.h2Ended(c, 3); s.reset || s.fields[":status"] != "200" {
			t.Fatalf("after the reset: %+v", s)
		}
	})
}

// Shutdown sends the two-step GOAWAY: the largest id and a PING, then,
// once the PING is answered, the last stream served; the connection
// closes once its streams are done.
func TestHTTP2Shutdown(t *testing.T) {
	hs := newHarness(t, helloInline, h2Config)
	cl := newH2Client()
	c := hs.connect()
	hs.fb.write(c, cl.open())
	hs.fb.write(c, cl.headers(1, "GET", "/one", true))
	hs.h2Ended(c, 1)
	hs.l.Shutdown(time.Minute)
	var out *h2Output
	hs.until("GOAWAY and PING", func() bool {
		out = parseH2Output(t, hs.fb.output(c))
		return len(out.goAways) == 1 && len(out.pings) == 1
	})
	if out.goAways[0].LastStreamID != 1<<31-1 {
		t.Fatalf("first GOAWAY names %d", out.goAways[0].LastStreamID)
	}
	if hs.fb.isClosed(c) {
		t.Fatal("closed before the PING's answer")
	}
	cl.fr.WritePing(true, out.pings[0])
	hs.fb.write(c, cl.take())
	hs.until("the last GOAWAY", func() bool {
		out = parseH2Output(t, hs.fb.output(c))
		return len(out.goAways) == 2
	})
	if out.goAways[1].LastStreamID != 1 || out.goAways[1].ErrCode != http2.ErrCodeNo {
		t.Fatalf("GOAWAYs %v", out.goAways)
	}
	// The server reads on until the client's end (lingerClose), so
	// that what the client still sends cannot make the close a reset.
	hs.passes(2)
	if hs.fb.isClosed(c) {
		t.Fatal("closed before the client's end")
	}
	hs.fb.shutdownWrite(c)
	hs.until("the close", func() bool { return hs.fb.isClosed(c) })
}

// A client that keeps a stream's window shut on a response meets
// --send-timeout: that stream is reset (CANCEL) and the handler's Write
// fails, the connection serving on; one that keeps the connection's
// window shut, which every stream shares, has the connection closed. A stream whose
// handler waits for body the client does not send meets --body-timeout:
// 408 on the stream, the connection serving on.
func TestHTTP2Timeouts(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	work := func(j *Job) {
		var err error
		if string(j.Request.Bytes(j.Request.Path)) == "/upload" {
			_, err = io.ReadAll(j)
		} else {
			_, err = j.Write([]byte(strings.Repeat("x", 200<<10)))
		}
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		j.Finish()
	}
	deferredHarness(t, deferEverything, work, h2Config)(func(t *testing.T, hs *harness) {
		mu.Lock()
		errs = nil
		mu.Unlock()
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "POST", "/upload", false, "content-length", "10"))
		hs.until("the handler's read", func() bool {
			for _, s := range hs.l.slots[1:] {
				if s != nil && s.h2 != nil && len(s.h2.jobs) == 1 {
					j := s.h2.jobs[0]
					j.mu.Lock()
					defer j.mu.Unlock()
					return j.wantBody
				}
			}
			return false
		})
		hs.passes(2)
		hs.advanceClock(DefaultBodyTimeout + 2*time.Second)
		if s := hs.h2Ended(c, 1); s.fields[":status"] != "408" {
			t.Fatalf("a stalled body: %+v", s.fields)
		}
		hs.fb.write(c, cl.headers(3, "GET", "/after", true))
		if s := hs.h2Ended(c, 3); s.fields[":status"] != "200" {
			t.Fatalf("after the 408: %+v", s.fields)
		}

		// A second connection, whose client gives no window.
		shut := newH2Client()
		c2 := hs.connect()
		shut.buf.WriteString(http2.ClientPreface)
		shut.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
		hs.fb.write(c2, shut.take())
		hs.fb.write(c2, shut.headers(1, "GET", "/big", true))
		hs.until("the head", func() bool {
			s := parseH2Output(t, hs.fb.output(c2)).streams[1]
			return s != nil && s.fields[":status"] == "200"
		})
		hs.advanceClock(DefaultSendTimeout / 2)
		if s := parseH2Output(t, hs.fb.output(c2)).streams[1]; hs.fb.isClosed(c2) || s.reset {
			t.Fatal("closed or reset before --send-timeout")
		}
		hs.advanceClock(DefaultSendTimeout/2 + 2*time.Second)
		hs.until("the stream's reset", func() bool {
			s := parseH2Output(t, hs.fb.output(c2)).streams[1]
			return s != nil && s.reset
		})
		if s := parseH2Output(t, hs.fb.output(c2)).streams[1]; s.resetCode != http2.ErrCodeCancel || hs.fb.isClosed(c2) {
			t.Fatalf("a stream's window held shut: reset %v, connection closed %v", s.resetCode, hs.fb.isClosed(c2))
		}

		// A third, whose client gives streams window but never opens the
		// connection's past its first 65535 octets.
		conn := newH2Client()
		c3 := hs.connect()
		conn.buf.WriteString(http2.ClientPreface)
		conn.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
		hs.fb.write(c3, conn.take())
		hs.fb.write(c3, conn.headers(1, "GET", "/big", true))
		hs.until("the head", func() bool {
			s := parseH2Output(t, hs.fb.output(c3)).streams[1]
			return s != nil && s.fields[":status"] == "200"
		})
		hs.advanceClock(DefaultSendTimeout + 2*time.Second)
		hs.until("the close", func() bool { return hs.fb.isClosed(c3) })
		hs.until("the handlers' ends", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(errs) == 4
		})
		mu.Lock()
		defer mu.Unlock()
		failed := 0
		for _, err := range errs {
			if errors.Is(err, ErrAborted) {
				failed++
			}
		}
		if failed != 3 {
			t.Fatalf("the handlers' errors: %v; want ErrAborted for the stalled read and the shut windows", errs)
		}
	})
}

// Trailers end a stream in a HEADERS block of their own; a body over
// MaxBodySize is 413 on its stream; a connection idle for the keep-alive
// timeout closes after a GOAWAY naming the last stream served.
func TestHTTP2TrailersLimitIdle(t *testing.T) {
	work := func(j *Job) {
		if string(j.Request.Bytes(j.Request.Path)) == "/limited" {
			io.ReadAll(j)
			j.Finish()
			return
		}
		j.SetTrailer("X-Checksum", "abc")
		j.Write([]byte("body"))
		j.Finish()
	}
	configure := func(c *Config) {
		h2Config(c)
		c.MaxBodySize = 1000
	}
	deferredHarness(t, deferEverything, work, configure)(func(t *testing.T, hs *harness) {
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "GET", "/trailers", true))
		if s := hs.h2Ended(c, 1); string(s.body) != "body" || s.fields["x-checksum"] != "abc" {
			t.Fatalf("trailers: %+v %q", s.fields, s.body)
		}
		hs.fb.write(c, cl.headers(3, "POST", "/limited", false, "content-length", "2000"))
		if s := hs.h2Ended(c, 3); s.fields[":status"] != "413" {
			t.Fatalf("a declared body over the limit: %+v", s.fields)
		}
		hs.fb.write(c, cl.headers(5, "POST", "/limited", false))
		cl.fr.WriteData(5, false, make([]byte, 800))
		cl.fr.WriteData(5, false, make([]byte, 800))
		hs.fb.write(c, cl.take())
		if s := hs.h2Ended(c, 5); s.fields[":status"] != "413" {
			t.Fatalf("a body growing over the limit: %+v", s.fields)
		}
		// The client ends the bodies it was refused: a stream answered
		// while its body still comes is read to its end (up to a
		// window) rather than reset, which curl 7.88 takes for an error
		// even with NO_ERROR after a whole response.
		cl.fr.WriteData(3, true, nil)
		cl.fr.WriteData(5, true, nil)
		hs.fb.write(c, cl.take())
		hs.until("no stream left", func() bool {
			for _, sl := range hs.l.slots[1:] {
				if sl != nil && sl.h2 != nil {
					return sl.deadlineKind == deadlineIdle
				}
			}
			return false
		})
		hs.advanceClock(DefaultKeepAliveTimeout + 2*time.Second)
		var out *h2Output
		hs.until("the idle GOAWAY", func() bool {
			out = parseH2Output(t, hs.fb.output(c))
			return len(out.goAways) == 1
		})
		if out.goAways[0].LastStreamID != 5 {
			t.Fatalf("GOAWAY at the idle close: %v", out.goAways)
		}
		hs.fb.shutdownWrite(c)
		hs.until("the idle close", func() bool { return hs.fb.isClosed(c) })
	})
}

// A file body goes out in DATA frames, read on a goroutine a chunk at a
// time; a file shorter than the length given resets its stream after
// the bytes it had.
func TestHTTP2FileBody(t *testing.T) {
	content := []byte(strings.Repeat("0123456789abcdef", 40000)) // 640 kB: three chunks
	path := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	work := func(j *Job) {
		fd, err := unix.Open(path, unix.O_RDONLY, 0)
		if err != nil {
			j.Abort()
			return
		}
		length := int64(len(content))
		if string(j.Request.Bytes(j.Request.Path)) == "/short" {
			j.WriteHeader(200, -1)
			length += 1000
		}
		if j.SendFile(fd, 0, length) != nil {
			unix.Close(fd)
			j.Abort()
		}
	}
	deferredHarness(t, deferEverything, work, h2Config)(func(t *testing.T, hs *harness) {
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "GET", "/whole", true))
		s := hs.h2Ended(c, 1)
		if s.reset || s.fields["content-length"] != "640000" || !bytes.Equal(s.body, content) {
			t.Fatalf("whole: reset %v, %+v, %d bytes", s.reset, s.fields, len(s.body))
		}
		hs.fb.write(c, cl.headers(3, "GET", "/short", true))
		s = hs.h2Ended(c, 3)
		if !s.reset || s.ended || !bytes.Equal(s.body, content) {
			t.Fatalf("short: reset %v ended %v, %d bytes", s.reset, s.ended, len(s.body))
		}
	})
}
