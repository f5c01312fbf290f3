package http2

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// peer is a test client: it writes frames with x/net/http2's Framer (an
// independent implementation) into a Conn and reads what the Conn sends.
type peer struct {
	t       *testing.T
	conn    *Conn
	app     *recorder
	in      bytes.Buffer // what the client wrote, not yet fed
	framer  *http2.Framer
	out     bytes.Buffer // what the server sent, not yet read
	reader  *http2.Framer
	enc     *hpack.Encoder
	encoded bytes.Buffer
	err     error // the Conn's error, once it has one
}

// recorder is a Handler that keeps what it was told; respond, when set,
// answers each request as it arrives.
type recorder struct {
	conn     *Conn
	requests []seen
	bodies   map[uint32][]byte
	ended    map[uint32]bool
	resets   map[uint32]ErrCode
	opened   []uint32
	bad      map[uint32]string // Malformed's reasons
	respond  func(c *Conn, s *Stream)
	consume  bool // return body credit as soon as it arrives
}

func (r *recorder) Request(s *Stream) {
	req := s.Request
	req.Fields = append([]hpack.HeaderField(nil), req.Fields...)
	r.requests = append(r.requests, seen{s.ID, req})
	if r.respond != nil {
		r.respond(r.conn, s)
	}
}

// seen is a request as the handler got it (streams are reused).
type seen struct {
	ID      uint32
	Request Request
}

func (r *recorder) Data(s *Stream, p []byte, end bool) {
	r.bodies[s.ID] = append(r.bodies[s.ID], p...)
	if end {
		r.ended[s.ID] = true
	}
	if r.consume {
		r.conn.Consumed(s, len(p))
	}
}

func (r *recorder) Reset(s *Stream, code ErrCode) { r.resets[s.ID] = code }
func (r *recorder) WindowOpened(s *Stream)        { r.opened = append(r.opened, s.ID) }
func (r *recorder) Malformed(id uint32, reason string) {
	if r.bad == nil {
		r.bad = make(map[uint32]string)
	}
	r.bad[id] = reason
}

func newPeer(t *testing.T, cfg Config) *peer {
	t.Helper()
	app := &recorder{bodies: map[uint32][]byte{}, ended: map[uint32]bool{}, resets: map[uint32]ErrCode{}}
	p := &peer{t: t, app: app}
	p.conn = NewConn(cfg, app)
	app.conn = p.conn
	p.framer = http2.NewFramer(&p.in, nil)
	p.framer.AllowIllegalWrites = true
	p.reader = http2.NewFramer(nil, &p.out)
	p.reader.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	p.reader.MaxHeaderListSize = 1 << 20
	p.enc = hpack.NewEncoder(&p.encoded)
	return p
}

// start sends the preface and an empty SETTINGS, and reads the server's
// SETTINGS, connection WINDOW_UPDATE and SETTINGS ack.
func (p *peer) start() {
	p.t.Helper()
	p.in.WriteString(Preface)
	p.must(p.framer.WriteSettings())
	p.feed()
	if f := p.next(); f.Header().Type != http2.FrameSettings || f.Header().Flags.Has(http2.FlagSettingsAck) {
		p.t.Fatalf("first server frame %v, want SETTINGS", f.Header())
	}
	f := p.next()
	if f.Header().Type == http2.FrameWindowUpdate { // absent when the window is the default
		f = p.next()
	}
	if f.Header().Type != http2.FrameSettings || !f.Header().Flags.Has(http2.FlagSettingsAck) {
		p.t.Fatalf("got %v, want a SETTINGS ack", f.Header())
	}
}

// hold makes the handler keep every stream it gets, in p.held.
func (p *peer) hold() *[]*Stream {
	var held []*Stream
	p.app.respond = func(c *Conn, s *Stream) { held = append(held, s) }
	return &held
}

func (p *peer) must(err error) {
	p.t.Helper()
	if err != nil {
		p.t.Fatal(err)
	}
}

// feed gives the Conn what the client wrote, in one piece, and moves the
// Conn's output to the client.
func (p *peer) feed() {
	p.t.Helper()
	b := p.in.Bytes()
	n, err := p.conn.Feed(b)
	p.in.Next(n)
	if err != nil {
		p.err = err
	}
	p.out.Write(p.conn.Output())
	p.conn.Sent(len(p.conn.Output()))
}

// next reads the server's next frame.
func (p *peer) next() http2.Frame {
	p.t.Helper()
	f, err := p.reader.ReadFrame()
	if err != nil {
		p.t.Fatalf("reading the server's frame: %v", err)
	}
	return f
}

func (p *peer) expect(t http2.FrameType) http2.Frame {
	p.t.Helper()
	f := p.next()
	if f.Header().Type != t {
		p.t.Fatalf("server sent %v, want %v", f.Header(), t)
	}
	return f
}

// quiet says the server sent nothing more.
func (p *peer) quiet() {
	p.t.Helper()
	if p.out.Len() != 0 {
		f, _ := p.reader.ReadFrame()
		p.t.Fatalf("server sent %v, want nothing", f)
	}
}

// goAway reads frames up to a GOAWAY and checks its code and that the
// Conn failed.
func (p *peer) goAway(code http2.ErrCode) {
	p.t.Helper()
	for {
		f, err := p.reader.ReadFrame()
		if errors.Is(err, io.EOF) {
			p.t.Fatalf("no GOAWAY; want %v", code)
		}
		if err != nil {
			p.t.Fatal(err)
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			if g.ErrCode != code {
				p.t.Fatalf("GOAWAY %v, want %v", g.ErrCode, code)
			}
			if p.err == nil {
				p.t.Fatal("GOAWAY sent but Feed returned no error")
			}
			return
		}
	}
}

// rst reads frames up to a RST_STREAM and checks its stream and code.
func (p *peer) rst(stream uint32, code http2.ErrCode) {
	p.t.Helper()
	for {
		f := p.next()
		if r, ok := f.(*http2.RSTStreamFrame); ok {
			if r.StreamID != stream || r.ErrCode != code {
				p.t.Fatalf("RST_STREAM %d %v, want %d %v", r.StreamID, r.ErrCode, stream, code)
			}
			return
		}
		if _, ok := f.(*http2.GoAwayFrame); ok {
			p.t.Fatalf("GOAWAY, want RST_STREAM %d %v", stream, code)
		}
	}
}

// block encodes fields as one header block.
func (p *peer) block(fields ...string) []byte {
	p.encoded.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		p.must(p.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]}))
	}
	return append([]byte(nil), p.encoded.Bytes()...)
}

// get is a request head without a body.
func (p *peer) get(stream uint32, path string, end bool, extra ...string) {
	p.t.Helper()
	fields := append([]string{":method", "GET", ":scheme", "https", ":authority", "example.com", ":path", path}, extra...)
	p.must(p.framer.WriteHeaders(http2.HeadersFrameParam{
		StreamID: stream, BlockFragment: p.block(fields...), EndStream: end, EndHeaders: true,
	}))
}

// headers sends a raw header block.
func (p *peer) headers(stream uint32, end bool, fields ...string) {
	p.t.Helper()
	p.must(p.framer.WriteHeaders(http2.HeadersFrameParam{
		StreamID: stream, BlockFragment: p.block(fields...), EndStream: end, EndHeaders: true,
	}))
}

// reply answers every request with a 200 and a short body.
func reply(c *Conn, s *Stream) {
	c.WriteHeaders(s, 200, []hpack.HeaderField{{Name: "Content-Type", Value: "text/plain"}}, false)
	c.WriteData(s, []byte("hello"), true)
	c.Done(s)
}
