//go:build linux

package tests

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Holder is a raw HTTP/2 client of held streams: it reads frames as
// they come, acks PINGs and keeps what each stream received.
type h2Holder struct {
	t       *testing.T
	conn    net.Conn
	fr      *xhttp2.Framer
	enc     *hpack.Encoder
	buf     bytes.Buffer
	fields  map[uint32]map[string]string
	data    map[uint32]*bytes.Buffer
	ended   map[uint32]bool
	resets  map[uint32]xhttp2.ErrCode
	goAways int
	// shut are the streams whose window the client does not open.
	shut map[uint32]bool
	// order is what happened, for the shutdown's sequence.
	order []string
}

// dialHolder opens an HTTP/2 connection to addr: h2c by prior knowledge,
// or TLS with ALPN h2 where ca is set; window is the streams' initial
// window (0: the default).
func dialHolder(t *testing.T, addr string, ca *tlstest.CA, window uint32) *h2Holder {
	t.Helper()
	var nc net.Conn
	var err error
	if ca != nil {
		nc, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, NextProtos: []string{"h2"}})
		if err == nil && nc.(*tls.Conn).ConnectionState().NegotiatedProtocol != "h2" {
			t.Fatalf("ALPN chose %q", nc.(*tls.Conn).ConnectionState().NegotiatedProtocol)
		}
	} else {
		nc, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &h2Holder{t: t, conn: nc, fields: map[uint32]map[string]string{}, data: map[uint32]*bytes.Buffer{},
		ended: map[uint32]bool{}, resets: map[uint32]xhttp2.ErrCode{}, shut: map[uint32]bool{}}
	c.fr = xhttp2.NewFramer(nc, nc)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.buf)
	if _, err := io.WriteString(nc, xhttp2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	var settings []xhttp2.Setting
	if window > 0 {
		settings = append(settings, xhttp2.Setting{ID: xhttp2.SettingInitialWindowSize, Val: window})
	}
	if err := c.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return c
}

// get opens stream id with a GET of path and the extra fields.
func (c *h2Holder) get(id uint32, path string, fields ...[2]string) {
	c.t.Helper()
	c.buf.Reset()
	for _, f := range append([][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "x"}, {":path", path}}, fields...) {
		c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		c.t.Fatal(err)
	}
}

// until reads frames until cond holds.
func (c *h2Holder) until(what string, cond func() bool) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for !cond() {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v (streams' data %v)", what, err, c.dataText())
		}
		c.take(f)
	}
}

func (c *h2Holder) dataText() map[uint32]string {
	m := map[uint32]string{}
	for id, b := range c.data {
		m[id] = b.String()
	}
	return m
}

func (c *h2Holder) take(f xhttp2.Frame) {
	id := f.Header().StreamID
	switch f := f.(type) {
	case *xhttp2.MetaHeadersFrame:
		m := map[string]string{}
		for _, hf := range f.Fields {
			m[hf.Name] = hf.Value
		}
		c.fields[id] = m
		c.ended[id] = f.StreamEnded()
		c.order = append(c.order, "headers")
	case *xhttp2.DataFrame:
		if c.data[id] == nil {
			c.data[id] = &bytes.Buffer{}
		}
		c.data[id].Write(f.Data())
		if f.StreamEnded() {
			c.ended[id] = true
			c.order = append(c.order, "end")
		} else {
			c.order = append(c.order, "data")
		}
		if n := uint32(len(f.Data())); n > 0 && !c.shut[id] {
			c.fr.WriteWindowUpdate(0, n)
			c.fr.WriteWindowUpdate(id, n)
		}
	case *xhttp2.RSTStreamFrame:
		c.resets[id] = f.ErrCode
	case *xhttp2.GoAwayFrame:
		c.goAways++
		c.order = append(c.order, "goaway")
	case *xhttp2.PingFrame:
		if !f.IsAck() {
			c.fr.WritePing(true, f.Data)
		}
	}
}

// body is what stream id received so far.
func (c *h2Holder) body(id uint32) string {
	if b := c.data[id]; b != nil {
		return b.String()
	}
	return ""
}

// expect reads until stream id has received want in all.
func (c *h2Holder) expect(id uint32, want string) {
	c.t.Helper()
	c.until("stream data "+want, func() bool { return len(c.body(id)) >= len(want) })
	if got := c.body(id); got != want {
		c.t.Fatalf("stream %d read %q, want %q", id, got, want)
	}
	if c.ended[id] {
		c.t.Fatalf("stream %d ended: a held stream stays open", id)
	}
}

// holdOn opens stream id on channel and checks the held head.
func (c *h2Holder) holdOn(id uint32, channel string, fields ...[2]string) (worker string) {
	c.t.Helper()
	c.get(id, "/events/"+channel, fields...)
	c.until("the held head", func() bool { return c.fields[id] != nil })
	h := c.fields[id]
	if h[":status"] != "200" || h["content-type"] != "text/event-stream" || h["x-accel-buffering"] != "no" || c.ended[id] {
		c.t.Fatalf("held head %v (ended %v)", h, c.ended[id])
	}
	for _, unwanted := range []string{"content-length", "m0-hold", "m0-channel", "connection", "transfer-encoding"} {
		if _, ok := h[unwanted]; ok {
			c.t.Fatalf("held head has %s: %v", unwanted, h)
		}
	}
	return h["x-worker"]
}

// h2Realtime runs realtime_app with --realtime, over TLS where useTLS.
func h2Realtime(t *testing.T, useTLS bool, args ...string) (*workersServer, *tlstest.CA) {
	t.Helper()
	return h2RealtimeEnv(t, useTLS, nil, args...)
}

func h2RealtimeEnv(t *testing.T, useTLS bool, env []string, args ...string) (*workersServer, *tlstest.CA) {
	t.Helper()
	var ca *tlstest.CA
	if useTLS {
		ca = tlstest.NewCA(t, "m0serve-test")
		cert := ca.Server(t, tlstest.ECDSA)
		args = append(args, "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile)
	}
	return startRealtime(t, env, args...), ca
}

// holdersOnEveryWorker opens connections, each holding stream 1 on
// channel, until both workers hold one.
func holdersOnEveryWorker(t *testing.T, addr string, ca *tlstest.CA, channel string) []*h2Holder {
	t.Helper()
	var holders []*h2Holder
	workers := map[string]bool{}
	for len(workers) < 2 {
		if len(holders) == 64 {
			t.Fatalf("64 connections, all on one worker")
		}
		c := dialHolder(t, addr, ca, 0)
		workers[c.holdOn(1, channel)] = true
		c.expect(1, ": connected\n\n")
		holders = append(holders, c)
	}
	return holders
}

// publishH2 publishes on channel over HTTP/2 (a connection of its own)
// and returns the publish's answer: how many workers it reached.
func publishH2(t *testing.T, addr string, ca *tlstest.CA, channel, query string) string {
	t.Helper()
	c := dialHolder(t, addr, ca, 0)
	defer c.conn.Close()
	c.get(1, "/publish/"+channel+"?"+query)
	c.until("the publish's answer", func() bool { return c.ended[1] })
	return strings.TrimSpace(c.body(1))
}

func forBothTransports(t *testing.T, test func(t *testing.T, useTLS bool)) {
	t.Run("h2c", func(t *testing.T) { test(t, false) })
	t.Run("tls", func(t *testing.T) { test(t, true) })
}

// TestRealtimeHTTP2HoldAndPublish: over HTTP/2 (h2c and TLS with ALPN)
// a view's M0-Hold keeps its stream open after the view's head and body,
// and publishes from either worker arrive on it as DATA; another stream
// of the same connection is served meanwhile.
func TestRealtimeHTTP2HoldAndPublish(t *testing.T) {
	forBothTransports(t, func(t *testing.T, useTLS bool) {
		s, ca := h2Realtime(t, useTLS, "--workers", "2")
		defer s.stop()
		holders := holdersOnEveryWorker(t, s.addr, ca, "news")
		if got := publishH2(t, s.addr, ca, "news", "data=hello"); got != "2" {
			t.Fatalf("publish reached %q workers, want 2", got)
		}
		// A second stream on a held connection: a publish, answered whole.
		c := holders[0]
		c.get(3, "/publish/news?data=one%0Atwo&event=update")
		c.until("the publish's answer", func() bool { return c.ended[3] })
		if c.fields[3][":status"] != "200" || c.body(3) != "2\n" {
			t.Fatalf("second stream: %v %q", c.fields[3], c.body(3))
		}
		for _, h := range holders {
			h.expect(1, ": connected\n\nid: 1\ndata: hello\n\nid: 2\nevent: update\ndata: one\ndata: two\n\n")
		}
	})
}

// TestRealtimeHTTP2Replay: Last-Event-ID on a held stream replays the
// channel's journal, or m0-gap.
func TestRealtimeHTTP2Replay(t *testing.T) {
	forBothTransports(t, func(t *testing.T, useTLS bool) {
		s, ca := h2Realtime(t, useTLS, "--workers", "2", "--replay-frames", "3")
		defer s.stop()
		publishH2(t, s.addr, ca, "r", "data=1")
		publishH2(t, s.addr, ca, "r", "data=2")
		c := dialHolder(t, s.addr, ca, 0)
		c.holdOn(1, "r", [2]string{"last-event-id", "1"})
		c.expect(1, ": connected\n\nid: 2\ndata: 2\n\n")
		c.holdOn(3, "r", [2]string{"last-event-id", "99"})
		c.expect(3, ": connected\n\nevent: m0-gap\n"+`data: {"last_event_id":99,"head":2}`+"\n\n")
		publishH2(t, s.addr, ca, "r", "data=3")
		c.expect(1, ": connected\n\nid: 2\ndata: 2\n\nid: 3\ndata: 3\n\n")
		c.expect(3, ": connected\n\nevent: m0-gap\n"+`data: {"last_event_id":99,"head":2}`+"\n\nid: 3\ndata: 3\n\n")
	})
}

// TestRealtimeHTTP2ClientReset: a held stream the client resets leaves
// its channel (the worker holds none), and its connection goes on.
func TestRealtimeHTTP2ClientReset(t *testing.T) {
	s, ca := h2Realtime(t, false, "--workers", "1", "--health-path", "/healthz")
	defer s.stop()
	c := dialHolder(t, s.addr, nil, 0)
	c.holdOn(1, "gone")
	c.expect(1, ": connected\n\n")
	c.holdOn(3, "kept")
	c.expect(3, ": connected\n\n")
	heldStreams := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body, err := fetch(oneShot(), s.url("/healthz"))
			if err == nil && strings.Contains(body, `"held_streams":`+want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("health %q, %v; want held_streams %s", body, err, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	heldStreams("2")
	if err := c.fr.WriteRSTStream(1, xhttp2.ErrCodeCancel); err != nil {
		t.Fatal(err)
	}
	heldStreams("1")
	if got := publishH2(t, s.addr, ca, "gone", "data=x"); got != "1" {
		t.Fatalf("publish reached %q", got)
	}
	publishH2(t, s.addr, ca, "kept", "data=y")
	c.expect(3, ": connected\n\nid: 2\ndata: y\n\n")
	if c.body(1) != ": connected\n\n" {
		t.Fatalf("the reset stream got %q", c.body(1))
	}
}

// TestRealtimeHTTP2SlowStreamReset: a held stream whose window the
// client keeps shut past --send-timeout is reset (CANCEL), not its
// connection: the connection's other held stream goes on.
func TestRealtimeHTTP2SlowStreamReset(t *testing.T) {
	s, ca := h2Realtime(t, false, "--workers", "1", "--send-timeout", "1")
	defer s.stop()
	slow := dialHolder(t, s.addr, nil, 16) // ": connected" fits; a frame does not
	slow.shut[1] = true
	slow.holdOn(1, "slow")
	slow.until("the view's body", func() bool { return slow.body(1) == ": connected\n\n" })
	slow.holdOn(3, "fine")
	publishH2(t, s.addr, ca, "slow", "data="+strings.Repeat("x", 100))
	slow.until("the slow stream's reset", func() bool { _, ok := slow.resets[1]; return ok })
	if code := slow.resets[1]; code != xhttp2.ErrCodeCancel {
		t.Fatalf("reset with %v", code)
	}
	publishH2(t, s.addr, ca, "fine", "data=y")
	slow.until("the other stream's frame", func() bool { return strings.HasSuffix(slow.body(3), "data: y\n\n") })
}

// TestRealtimeHTTP2ShutdownClosesHolds: SIGTERM ends each held stream
// with ": close" and END_STREAM, then the GOAWAY, and the server exits at
// once.
func TestRealtimeHTTP2ShutdownClosesHolds(t *testing.T) {
	s, _ := h2Realtime(t, false, "--workers", "2")
	holders := holdersOnEveryWorker(t, s.addr, nil, "bye")
	began := time.Now()
	s.signal(t, syscall.SIGTERM)
	for _, c := range holders {
		c.until("the stream's end", func() bool { return c.ended[1] })
		if got := c.body(1); got != ": connected\n\n: close\n\n" {
			t.Fatalf("stream read %q", got)
		}
		// The GOAWAYs, the PING between them acked, and the close.
		c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("waiting for the close: %v (frames %v)", err, c.order)
				}
				break
			}
			c.take(f)
		}
		// ": close", END_STREAM, then the GOAWAYs.
		order := strings.Join(c.order, " ")
		if !strings.HasSuffix(order, "data end goaway goaway") {
			t.Fatalf("frames in order %v", c.order)
		}
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, s.logs)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the shutdown took %v: held streams waited for the graceful timeout", took)
	}
}

// TestRealtimeHTTP2HoldCountsTowardStreams: a held stream is an open
// stream, so --http2-max-concurrent-streams bounds them: past it a
// stream is refused, and once the client resets the hold, served.
func TestRealtimeHTTP2HoldCountsTowardStreams(t *testing.T) {
	s, _ := h2Realtime(t, false, "--workers", "1", "--http2-max-concurrent-streams", "1")
	defer s.stop()
	c := dialHolder(t, s.addr, nil, 0)
	c.holdOn(1, "one")
	c.expect(1, ": connected\n\n")
	c.get(3, "/publish/one?data=x")
	c.until("the second stream's refusal", func() bool { _, ok := c.resets[3]; return ok || c.ended[3] })
	if code, ok := c.resets[3]; !ok || code != xhttp2.ErrCodeRefusedStream && code != xhttp2.ErrCodeProtocol {
		t.Fatalf("a stream past the limit: reset %v (%v), answered %v %q", code, ok, c.fields[3], c.body(3))
	}
	if err := c.fr.WriteRSTStream(1, xhttp2.ErrCodeCancel); err != nil {
		t.Fatal(err)
	}
	c.get(5, "/publish/one?data=x")
	c.until("the third stream's answer", func() bool { return c.ended[5] })
	if c.fields[5][":status"] != "200" || c.body(5) != "0\n" && c.body(5) != "1\n" {
		t.Fatalf("after the reset: %v %q", c.fields[5], c.body(5))
	}
}

// TestRealtimeHTTP2Heartbeat: a held stream over TLS (a browser's
// EventSource) gets ": heartbeat" every M0_SSE_HEARTBEAT_MS.
func TestRealtimeHTTP2Heartbeat(t *testing.T) {
	s, ca := h2RealtimeEnv(t, true, []string{"M0_SSE_HEARTBEAT_MS=200"}, "--workers", "1")
	defer s.stop()
	c := dialHolder(t, s.addr, ca, 0)
	c.holdOn(1, "hb")
	c.expect(1, ": connected\n\n: heartbeat\n\n: heartbeat\n\n")
}
