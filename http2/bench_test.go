package http2

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// requestFrames is a keep-alive client's n requests after the first: its
// HPACK table already holds the fields, so each block is a few octets.
func requestFrames(b *testing.B, n int) (first, rest []byte) {
	var buf bytes.Buffer
	framer := http2.NewFramer(&buf, nil)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	encode := func() []byte {
		block.Reset()
		for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
			{Name: ":authority", Value: "example.com"}, {Name: ":path", Value: "/plaintext"},
			{Name: "user-agent", Value: "bench/1.0"}, {Name: "accept", Value: "*/*"}} {
			if err := enc.WriteField(f); err != nil {
				b.Fatal(err)
			}
		}
		return append([]byte(nil), block.Bytes()...)
	}
	buf.WriteString(Preface)
	if err := framer.WriteSettings(); err != nil {
		b.Fatal(err)
	}
	if err := framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: encode(), EndStream: true, EndHeaders: true}); err != nil {
		b.Fatal(err)
	}
	first = append([]byte(nil), buf.Bytes()...)
	buf.Reset()
	for i := 0; i < n; i++ {
		if err := framer.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(3 + 2*i), BlockFragment: encode(), EndStream: true, EndHeaders: true}); err != nil {
			b.Fatal(err)
		}
	}
	return first, buf.Bytes()
}

type benchHandler struct{ conn *Conn }

var plaintext = []byte("Hello, World!")
var plainFields = []hpack.HeaderField{{Name: "content-type", Value: "text/plain"}, {Name: "content-length", Value: "13"}}

func (h *benchHandler) Request(s *Stream) {
	h.conn.WriteHeaders(s, 200, plainFields, false)
	h.conn.WriteData(s, plaintext, true)
	h.conn.Done(s)
}
func (h *benchHandler) Data(*Stream, []byte, bool) {}
func (h *benchHandler) Reset(*Stream, ErrCode)     {}
func (h *benchHandler) WindowOpened(*Stream)       {}
func (h *benchHandler) Malformed(uint32, string)   {}

// BenchmarkConnRequest is one request and its response through a Conn in
// steady state: a HEADERS frame parsed, its block decoded from the table,
// validated, answered with HEADERS and DATA. It must not allocate.
func BenchmarkConnRequest(b *testing.B) {
	const batch = 1000
	first, rest := requestFrames(b, batch)
	h := &benchHandler{}
	c := NewConn(Config{}, h)
	h.conn = c
	if _, err := c.Feed(first); err != nil {
		b.Fatal(err)
	}
	c.Sent(len(c.Output()))
	frameLen := len(rest) / batch
	update := appendWindowUpdate(nil, 0, batch*uint32(len(plaintext)))
	b.ReportAllocs()
	b.ResetTimer()
	// Stream ids must grow: each pass feeds the batch with ids moved on.
	frames := append([]byte(nil), rest...)
	base := uint32(3)
	for i := 0; i < b.N; i++ {
		j := i % batch
		if j == 0 && i > 0 {
			base += 2 * batch
			for k := 0; k < batch; k++ {
				id := base + uint32(2*k)
				f := frames[k*frameLen:]
				f[5], f[6], f[7], f[8] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
			}
		}
		if _, err := c.Feed(frames[j*frameLen : (j+1)*frameLen]); err != nil {
			b.Fatal(err)
		}
		if j == batch-1 {
			// The client returns the connection window it was sent.
			if _, err := c.Feed(update); err != nil {
				b.Fatal(err)
			}
		}
		c.Sent(len(c.Output()))
	}
}

// BenchmarkFramerRead is x/net/http2's Framer reading the same HEADERS
// frames (decoding their blocks too, as a server must), for comparison.
func BenchmarkFramerRead(b *testing.B) {
	const batch = 1000
	_, rest := requestFrames(b, batch)
	r := bytes.NewReader(rest)
	framer := http2.NewFramer(io.Discard, r)
	framer.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	// The table was filled by the first request, which this reader never
	// saw: prime it with the same block.
	first, _ := requestFrames(b, 0)
	primer := http2.NewFramer(io.Discard, bytes.NewReader(first[len(Preface):]))
	primer.ReadMetaHeaders = framer.ReadMetaHeaders
	for i := 0; i < 2; i++ {
		if _, err := primer.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
	framer.SetReuseFrames()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%batch == 0 {
			r.Reset(rest)
		}
		if _, err := framer.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}
