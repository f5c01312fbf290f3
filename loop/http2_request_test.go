package loop

import (
	"bytes"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/http1"
	h2 "github.com/m0serve/m0serve/http2"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The head builder (issue 37): an HTTP/2 stream's fields, as the codec
// decodes and validates them, become the http1.Request every layer above
// reads, with no HTTP/1.1 text in between.

// headBuilder runs the codec over one request's header block and builds
// the request of what it accepts, as the loop does (h2conn.assemble).
type headBuilder struct {
	hc       h2conn
	conn     *h2.Conn
	accepted bool
	sent     *h2.Request
	err      error
}

func (b *headBuilder) Request(st *h2.Stream) {
	b.accepted = true
	b.sent = &st.Request
	b.err = b.hc.assemble(&st.Request, extendedWebSocket(&st.Request))
	b.conn.Done(st)
}
func (b *headBuilder) Data(st *h2.Stream, p []byte, end bool) { b.conn.Consumed(st, len(p)) }
func (b *headBuilder) Reset(*h2.Stream, h2.ErrCode)           {}
func (b *headBuilder) WindowOpened(*h2.Stream)                {}
func (b *headBuilder) Malformed(uint32, string)               {}

// buildHead feeds fields, HPACK-encoded as they are (no validation on the
// client's side), to a fresh codec; it returns the builder with what was
// accepted and built.
func buildHead(t testing.TB, fields []hpack.HeaderField) *headBuilder {
	var block, wire bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range fields {
		enc.WriteField(f)
	}
	wire.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&wire, nil)
	fr.WriteSettings()
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
	b := &headBuilder{}
	b.hc.assembler.Limits.MaxFields = 1 << 10
	b.conn = h2.NewConn(h2.Config{EnableConnectProtocol: true}, b)
	b.conn.Feed(wire.Bytes())
	return b
}

// checkBuilt checks a built request: no part holds a byte that could end
// or split a line of a head, names are tokens, and the request is the
// list sent: method, target, Host from :authority, the fields in order
// with the cookies joined last.
func checkBuilt(t testing.TB, b *headBuilder) {
	t.Helper()
	r := &b.hc.req
	method, target := string(r.Bytes(r.Method)), string(r.Bytes(r.Target))
	if !http1.ValidFieldName([]byte(method)) || strings.ContainsAny(target, "\r\n\x00 \t") {
		t.Fatalf("built method %q, target %q", method, target)
	}
	for i := 0; i < r.Header.Len(); i++ {
		name, value := r.Header.Field(i)
		if !http1.ValidFieldName(name) || bytes.ContainsAny(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") || !http1.ValidFieldValue(value) {
			t.Fatalf("built field %q: %q", name, value)
		}
	}
	sent := b.sent
	want := sent.Method
	if extendedWebSocket(sent) {
		want = "GET"
	}
	if method != want || target != sent.Path || r.Version != http1.Version20 {
		t.Fatalf("built %s %s (%v) from :method %q :path %q", method, target, r.Version, sent.Method, sent.Path)
	}
	var expect [][2]string
	if sent.Authority != "" {
		expect = append(expect, [2]string{"host", sent.Authority})
	}
	var cookies []string
	for _, f := range sent.Fields {
		switch {
		case f.Name == "cookie":
			cookies = append(cookies, f.Value)
		case f.Name == "host" && sent.Authority != "":
		default:
			expect = append(expect, [2]string{f.Name, f.Value})
		}
	}
	if cookies != nil {
		expect = append(expect, [2]string{"cookie", strings.Join(cookies, "; ")})
	}
	if r.Header.Len() != len(expect) {
		t.Fatalf("built %d fields from %d: %+v", r.Header.Len(), len(expect), sent)
	}
	for i, e := range expect {
		name, value := r.Header.Field(i)
		if string(name) != e[0] || string(value) != e[1] {
			t.Fatalf("field %d built as %q: %q, sent %q: %q", i, name, value, e[0], e[1])
		}
	}
}

// TestHeadBuilder: the injections of issue 37 are refused by the codec,
// and valid lists are built as sent.
func TestHeadBuilder(t *testing.T) {
	base := func(method, authority, path string, extra ...string) []hpack.HeaderField {
		f := []hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: "https"},
			{Name: ":authority", Value: authority}, {Name: ":path", Value: path}}
		for i := 0; i+1 < len(extra); i += 2 {
			f = append(f, hpack.HeaderField{Name: extra[i], Value: extra[i+1]})
		}
		return f
	}
	inject := "\r\nx-injected: yes\r\nx-pad: a"
	for name, fields := range map[string][]hpack.HeaderField{
		"path":      base("GET", "example.com", "/hdrs HTTP/1.1"+inject),
		"method":    base("GET /hdrs HTTP/1.1"+inject, "example.com", "/hdrs"),
		"authority": base("GET", "example.com"+inject, "/hdrs"),
		"value":     base("GET", "example.com", "/hdrs", "x-v", "a"+inject),
		"name":      base("GET", "example.com", "/hdrs", "x-v\r\nx-injected", "a"),
		"host":      base("GET", "example.com", "/hdrs", "host", "evil.example"),
	} {
		if b := buildHead(t, fields); b.accepted {
			t.Errorf("%s: an injection accepted: %+v", name, b.sent)
		}
	}
	for _, fields := range [][]hpack.HeaderField{
		base("GET", "example.com", "/a?b=c", "cookie", "a=1", "x-y", "z", "cookie", "b=2", "host", "EXAMPLE.com"),
		base("OPTIONS", "example.com:8443", "*"),
		base("POST", "[::1]:80", "/", "content-length", "0", "te", "trailers", "x-tab", "a\tb\xff"),
		base("CONNECT", "example.com", "/chat", ":protocol", "websocket"),
	} {
		b := buildHead(t, fields)
		if !b.accepted || b.err != nil {
			t.Fatalf("%v: accepted %v, built: %v", fields, b.accepted, b.err)
		}
		checkBuilt(t, b)
	}
}

// FuzzHeadBuilder feeds random field lists through the codec and the
// builder: whatever is accepted holds no CR, LF, NUL or invalid name, and
// is built as it was sent.
func FuzzHeadBuilder(f *testing.F) {
	seed := func(fields ...string) []byte {
		var b []byte
		for _, s := range fields {
			b = append(b, byte(len(s)))
			b = append(b, s...)
		}
		return b
	}
	f.Add(seed(":method", "GET", ":scheme", "http", ":authority", "a", ":path", "/", "cookie", "x", "cookie", "y"))
	f.Add(seed(":method", "GET", ":scheme", "http", ":authority", "a", ":path", "/ HTTP/1.1\r\nx: y"))
	f.Add(seed(":method", "POST", ":scheme", "http", ":path", "/", "host", "a:1", "content-length", "0"))
	f.Add(seed(":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority", "a", ":path", "/ws"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fields []hpack.HeaderField
		var pair [2]string
		for i := 0; len(data) > 0; i++ {
			n := min(int(data[0]), len(data)-1)
			pair[i%2] = string(data[1 : 1+n])
			data = data[1+n:]
			if i%2 == 1 {
				fields = append(fields, hpack.HeaderField{Name: pair[0], Value: pair[1]})
			}
		}
		b := buildHead(t, fields)
		if b.accepted && b.err == nil {
			checkBuilt(t, b)
		}
	})
}

// BenchmarkHeadBuilder: a browser-like request's fields to the request
// the app sees; it allocates nothing.
func BenchmarkHeadBuilder(b *testing.B) {
	r := &h2.Request{Method: "GET", Scheme: "https", Authority: "example.com", Path: "/static/app.js?v=1",
		ContentLength: -1, Fields: []hpack.HeaderField{
			{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"},
			{Name: "accept", Value: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
			{Name: "accept-language", Value: "en-US,en;q=0.5"},
			{Name: "accept-encoding", Value: "gzip, deflate, br"},
			{Name: "cookie", Value: "session=abcdef0123456789"},
			{Name: "cookie", Value: "theme=dark"},
			{Name: "referer", Value: "https://example.com/"},
		}}
	var hc h2conn
	b.ReportAllocs()
	for b.Loop() {
		if err := hc.assemble(r, false); err != nil {
			b.Fatal(err)
		}
	}
}
